package reports

import (
	"bytes"
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/parser"
	"github.com/coroner-dev/coroner/parser/bundle"
	"github.com/coroner-dev/coroner/rules"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// goldenBundles are the bundles whose reports are kept as golden files: the
// five seed scenarios, real captures of an OOM crash, a healthy vLLM run and
// a TP8 crash, and a bundle of hostile evidence.
var goldenBundles = []struct{ name, path string }{
	{"seed-flashinfer-sm120-hang", "../fixtures/seed/flashinfer-sm120-hang"},
	{"seed-flashinfer-sm120-crash", "../fixtures/seed/flashinfer-sm120-crash"},
	{"seed-flashinfer-sm120-jit", "../fixtures/seed/flashinfer-sm120-jit"},
	{"seed-flashinfer-h100-hang", "../fixtures/seed/flashinfer-h100-hang"},
	{"seed-triton-sm120-ready", "../fixtures/seed/triton-sm120-ready"},
	{"h200-x2-oom", "../fixtures/corpus/h200-x2/oom"},
	{"vllm-llama31-8b-v0171", "../fixtures/corpus/fulllogs/vllm-llama31-8b-v0171"},
	{"sglang-glm5-tp8-mi355x-graphcrash", "../fixtures/corpus/fulllogs/sglang-glm5-tp8-mi355x-graphcrash"},
	{"hostile", "testdata/hostile"},
}

// analyze runs the whole pipeline on a bundle. The report names the bundle
// by a stable name, not by its path on this machine.
func analyze(t *testing.T, name, path string) *Report {
	t.Helper()
	f, err := parser.Parse([]string{path}, parser.Options{Bundle: bundle.Defaults()})
	require.NoError(t, err)
	return Build(f, rules.Run(f, rules.Options{}), Meta{Path: name, Version: "test"})
}

// excerpts reads the lines the brief quotes, as the CLI does.
func excerpts(t *testing.T, path string, r *Report) Excerpts {
	t.Helper()
	ex, err := ReadExcerpts(func(visit func(string, io.Reader) error) error {
		return bundle.Walk(path, bundle.Defaults(), func(e *bundle.Entry, r io.Reader) error { return visit(e.Path, r) })
	}, ExcerptWants(r))
	require.NoError(t, err)
	return ex
}

// renderAll renders every format of the registry (Formats), a format
// that colours also in colour, and the timeline table: file extension →
// bytes.
func renderAll(t *testing.T, name, path string) map[string][]byte {
	t.Helper()
	r := analyze(t, name, path)
	out := map[string][]byte{}
	render := func(ext string, fn func(w *bytes.Buffer) error) {
		var b bytes.Buffer
		require.NoError(t, fn(&b), ext)
		out[ext] = b.Bytes()
	}
	for _, f := range Formats {
		var o RenderOptions
		if f.Sources {
			o.Excerpts = excerpts(t, path, r)
		}
		render(f.Ext, func(w *bytes.Buffer) error { return f.Render(w, r, o) })
		if f.Color {
			o.Color = true
			render("color."+f.Ext, func(w *bytes.Buffer) error { return f.Render(w, r, o) })
		}
	}
	render("timeline.txt", func(w *bytes.Buffer) error { return TimelineTable(w, r) })
	return out
}

// TestGolden compares every format of every golden bundle with its golden
// file, and checks that a second run from scratch gives the same bytes.
func TestGolden(t *testing.T) {
	for _, gb := range goldenBundles {
		t.Run(gb.name, func(t *testing.T) {
			first := renderAll(t, gb.name, gb.path)
			second := renderAll(t, gb.name, gb.path)
			for ext, got := range first {
				assert.Equal(t, string(got), string(second[ext]), "%s: two runs differ", ext)
				file := filepath.Join("testdata", "golden", gb.name+"."+ext)
				if *update {
					require.NoError(t, os.MkdirAll(filepath.Dir(file), 0o755))
					require.NoError(t, os.WriteFile(file, got, 0o644))
					continue
				}
				want, err := os.ReadFile(file)
				require.NoError(t, err, "missing golden file; run go test ./reports -update")
				assert.Equal(t, string(want), string(got), "%s differs from its golden file; if the change is intended, run go test ./reports -update and review the diff", file)
			}
		})
	}
}
