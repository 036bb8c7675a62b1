package serverlog

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/textio"
)

// parseBoth parses data with and without the read-ahead and returns the
// facts, the issues and the input's counts of each.
func parseBoth(t *testing.T, data []byte, kind facts.Kind, maxLine int, after int64) (seq, par parseResult) {
	t.Helper()
	run := func(ahead int64) parseResult {
		old := aheadAfter
		aheadAfter = ahead
		defer func() { aheadAfter = old }()
		var r parseResult
		in := textio.NewInput("x/server.log", bytes.NewReader(data), maxLine, func(is facts.Issue) { r.issues = append(r.issues, is) })
		r.facts = &facts.Facts{Clocks: map[string]facts.Clock{}}
		Parse(in, kind, r.facts)
		for in.Scan() { // as the orchestrator drains what a parser left
		}
		r.lines, r.bytes = in.Line(), in.BytesRead()
		r.nuls, r.nulLine = in.NULs()
		r.bad, r.badLine = in.BadUTF8()
		return r
	}
	return run(-1), run(after)
}

type parseResult struct {
	facts                       *facts.Facts
	issues                      []facts.Issue
	lines                       int
	bytes                       int64
	nuls, nulLine, bad, badLine int
}

// TestReadAheadChangesNothing parses every log of the repository, the
// generated long logs and hostile inputs with the read-ahead and without:
// the facts, the issues and the counts must be the same.
func TestReadAheadChangesNothing(t *testing.T) {
	type input struct {
		name    string
		data    []byte
		maxLine int
	}
	var inputs []input
	for _, g := range []string{"testdata/*.log", "../../fixtures/corpus/*/*/*.log", "../../fixtures/corpus/*/*/*/*.log", "../../fixtures/seed/*/*.log", "../../fixtures/seed/*/*/*.log"} {
		files, _ := filepath.Glob(g)
		for _, f := range files {
			b, err := os.ReadFile(f)
			require.NoError(t, err)
			inputs = append(inputs, input{f, b, 0})
		}
	}
	require.Greater(t, len(inputs), 20, "the repository's logs")
	sg, vl := genSGLang(30000), genVLLM(30000)
	hostile := []byte(strings.Repeat("[2025-01-01 10:00:00 TP0] Decode batch, #running-req: 1, #token: 9, gen throughput (token/s): 3.0\r\x1b[31mred\x1b[0m\n", 50) +
		"\xff\xfe bad utf8 Decode batch, a: 1\n\x00\x00nul\n" + strings.Repeat("x", 5000) + "\n(APIServer pid=1)\n" +
		"Traceback (most recent call last):\n  File \"a.py\", line 1, in <module>\nRuntimeError: boom\n" +
		"INFO 05-19 10:00:00 [loggers.py:1] Engine 000: Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: 2.0 tokens/s\n" +
		"[36m(RayWorkerWrapper pid=12)[0m INFO 05-19 10:00:01 [worker.py:1] colour codes that lost their ESC\n" +
		"ESC[33mWARNING 05-19 10:00:02 [worker.py:2] written as ESC by a copy tool\n" +
		"no final newline Decode batch, x: 1")
	inputs = append(inputs, input{"generated sglang", sg, 0}, input{"generated vllm", vl, 0},
		input{"generated sglang, lines cut at 120 bytes", sg[:200000], 120}, input{"hostile", hostile, 0}, input{"hostile, cut at 64", hostile, 64})
	// Batches end at a line count and at a size: inputs around both.
	var many bytes.Buffer
	for i := 0; many.Len() < 3*256<<10; i++ {
		many.WriteString("[2025-01-01 10:00:00 TP1] Prefill batch, #new-seq: 1, #new-token: 7\n")
	}
	inputs = append(inputs, input{"several batches", many.Bytes(), 0}, input{"empty", nil, 0}, input{"one newline", []byte("\n"), 0})
	for _, in := range inputs {
		t.Run(in.name, func(t *testing.T) {
			head := in.data[:min(len(in.data), 8192)]
			kind, _ := Sniff(in.name, head)
			// From the first line on, and from the middle of the file;
			// with stat lines read ahead always, and as the timing goes.
			for _, c := range []struct {
				after  int64
				always bool
			}{{0, true}, {int64(len(in.data) / 2), true}, {0, false}} {
				after := c.after
				aheadAlways = c.always
				seq, par := parseBoth(t, in.data, kind, in.maxLine, after)
				assert.Equal(t, seq.issues, par.issues)
				assert.Equal(t, [5]int{seq.lines, seq.nuls, seq.nulLine, seq.bad, seq.badLine}, [5]int{par.lines, par.nuls, par.nulLine, par.bad, par.badLine})
				assert.Equal(t, seq.bytes, par.bytes)
				if !assert.Equal(t, seq.facts, par.facts) {
					assert.Equal(t, dump(seq.facts), dump(par.facts))
				}
			}
			aheadAlways = false
		})
	}
}
