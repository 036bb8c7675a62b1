package redact

import (
	"bytes"
	"io"
	"os"
	"testing"

	"github.com/coroner-dev/coroner/internal/redact/redacttest"
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

// benchRedact redacts data once per iteration, learning first with hosts
// (as writeBundle does), and reports MB/s.
func benchRedact(b *testing.B, data []byte, hosts bool) {
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		r := New(Options{Hosts: hosts, Hostnames: []string{"gpu17"}, Users: []string{"alice"}})
		if err := r.Learn(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, NewReader(bytes.NewReader(data), r.NewStream())); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRedact(b *testing.B) {
	data := benchLog(b)
	b.Run("secrets", func(b *testing.B) { benchRedact(b, data, false) })
	b.Run("secrets+hosts", func(b *testing.B) { benchRedact(b, data, true) })
}

// BenchmarkRedactAdversarial redacts 4 MB inputs built around what the
// redactor looks for (redacttest): long runs after api_key, Authorization:,
// Bearer, password and X-API-Key, those words over and over, URLs and
// token prefixes. Issue 18 asks for 50 MB/s on each.
func BenchmarkRedactAdversarial(b *testing.B) {
	for _, in := range redacttest.AdversarialInputs(4 << 20) {
		b.Run(in.Name, func(b *testing.B) { benchRedact(b, in.Data, false) })
		b.Run(in.Name+"+hosts", func(b *testing.B) { benchRedact(b, in.Data, true) })
	}
}
