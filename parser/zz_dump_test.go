package parser

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coroner-dev/coroner/parser/bundle"
)

func TestZZDump(t *testing.T) {
	out := os.Getenv("ZZDUMP")
	if out == "" {
		t.Skip()
	}
	var inputs []string
	for _, g := range []string{"../fixtures/*/*", "../fixtures/corpus/*/*", "../bench/out/1GB/snapshots.tar.zst", "../bench/out/1GB/snapshots", "../bench/out/1GB/ranks.tar.zst"} {
		m, _ := filepath.Glob(g)
		for _, p := range m {
			if strings.HasSuffix(p, ".want") || strings.HasSuffix(p, ".md") || strings.HasSuffix(p, ".py") || strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".txtar") {
				continue
			}
			inputs = append(inputs, p)
		}
	}
	var sb strings.Builder
	for _, in := range inputs {
		st := time.Now()
		f, err := Parse([]string{in}, Options{Bundle: bundle.Defaults()})
		el := time.Since(st)
		if err != nil {
			fmt.Fprintf(&sb, "%s ERR %v\n", in, err)
			continue
		}
		b, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&sb, "%s %x %d\n", in, sha256.Sum256(b), len(b))
		t.Logf("%s %v", in, el)
	}
	// Also two bundles at once and zone/year options.
	for _, o := range []Options{{Year: 2024}, {Zone: time.FixedZone("X", 3600)}} {
		o.Bundle = bundle.Defaults()
		f, err := Parse(inputs[:min(6, len(inputs))], o)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(f)
		fmt.Fprintf(&sb, "multi %x %d\n", sha256.Sum256(b), len(b))
	}
	os.WriteFile(out, []byte(sb.String()), 0o644)
}

func BenchmarkZZNormalize(b *testing.B) {
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		p := newRun(Options{Bundle: bundle.Defaults()})
		bo := bundle.Defaults()
		bo.Issue = p.issue
		if err := bundle.Walk("../bench/out/1GB/snapshots", bo, p.entry); err != nil {
			b.Fatal(err)
		}
		p.finish()
		b.StartTimer()
		normalizeTimes(p.out, p.mtimes, Options{})
	}
}
