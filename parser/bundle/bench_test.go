package bundle

import (
	"bytes"
	"fmt"
	"io"
	"testing"
)

// benchLog is about n bytes of server log lines, varied enough that they
// compress like a real log (about 10:1), not like a bomb.
func benchLog(n int) []byte {
	var buf bytes.Buffer
	for i := 0; buf.Len() < n; i++ {
		fmt.Fprintf(&buf, "[2026-11-30 04:%02d:%02d TP%d] Decode batch. #running-req: %d, #token: %d, token usage: 0.%02d, gen throughput (token/s): %d.%02d, #queue-req: %d\n",
			i/60%60, i%60, i%8, i%97, i*31%100000, i%100, i*7%5000, i%100, i%13)
	}
	return buf.Bytes()
}

func benchWalk(b *testing.B, name string, data []byte, size int64) {
	b.SetBytes(size)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		var n int64
		err := WalkReader(name, bytes.NewReader(data), Options{}, func(e *Entry, r io.Reader) error {
			if r != nil {
				m, err := io.Copy(io.Discard, r)
				n += m
				return err
			}
			return nil
		})
		if err != nil || n != size {
			b.Fatalf("walk: %v, %d of %d bytes", err, n, size)
		}
	}
}

// BenchmarkWalkTarZst walks a tar.zst with a ~50 MB log member.
func BenchmarkWalkTarZst(b *testing.B) {
	log := benchLog(50 << 20)
	data := zst(b, makeTar(b, []member{{name: "server.log", body: string(log)}, {name: "ps.txt", body: "x"}}))
	benchWalk(b, "bundle.tar.zst", data, int64(len(log))+1)
}

func BenchmarkWalkTarGz(b *testing.B) {
	log := benchLog(50 << 20)
	data := gz(b, makeTar(b, []member{{name: "server.log", body: string(log)}}))
	benchWalk(b, "bundle.tar.gz", data, int64(len(log)))
}

// BenchmarkWalkManySmall walks a tar of 10,000 small files: the per-entry
// cost.
func BenchmarkWalkManySmall(b *testing.B) {
	ms := make([]member, 10_000)
	for i := range ms {
		ms[i] = member{name: fmt.Sprintf("snap/%05d/ps.txt", i), body: "USER PID %CPU\nroot 1 0.0\n"}
	}
	data := makeTar(b, ms)
	benchWalk(b, "many.tar", data, int64(len(ms)*len(ms[0].body)))
}
