package pack

import (
	"os"
	"testing"

	"github.com/coroner-dev/coroner/parser"
	"github.com/coroner-dev/coroner/rules"
)

func BenchmarkParseExample(b *testing.B) {
	data, err := os.ReadFile(example)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(data, example); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRunExample runs the example pack's rules over the seed bundle's
// facts (the derivation is outside the loop: it is the engine's cost).
func BenchmarkRunExample(b *testing.B) {
	s, err := Load(example)
	if err != nil {
		b.Fatal(err)
	}
	f, err := parser.Parse([]string{"../../fixtures/seed/flashinfer-sm120-hang"}, parser.Options{})
	if err != nil {
		b.Fatal(err)
	}
	idx := rules.Derive(f, s.Catalog())
	b.ReportAllocs()
	for b.Loop() {
		for _, r := range s.PackRules() {
			r.Run(&rules.Pass{Facts: f, Index: idx, Rule: r})
		}
	}
}
