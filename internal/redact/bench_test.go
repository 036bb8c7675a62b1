package redact

import (
	"bytes"
	"io"
	"os"
	"testing"
)

// benchLog is the seed's SGLang log repeated to about 20 MB: the lines a
// real collect redacts.
func benchLog(b *testing.B) []byte {
	b.Helper()
	one, err := os.ReadFile("../../fixtures/seed/flashinfer-sm120-hang/server.log")
	if err != nil {
		b.Fatal(err)
	}
	return bytes.Repeat(one, 20<<20/len(one))
}

func BenchmarkRedact(b *testing.B) {
	data := benchLog(b)
	for _, hosts := range []bool{false, true} {
		name := "secrets"
		if hosts {
			name = "secrets+hosts"
		}
		b.Run(name, func(b *testing.B) {
			r := New(Options{Hosts: hosts, Hostnames: []string{"gpu17"}, Users: []string{"alice"}})
			if err := r.Learn(bytes.NewReader(data)); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(data)))
			b.ResetTimer()
			for b.Loop() {
				if _, err := io.Copy(io.Discard, NewReader(bytes.NewReader(data), r.NewStream())); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
