package pack

import (
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/parser"
	"github.com/coroner-dev/coroner/rules"
)

const linesPack = `signatures:
  - id: acme-widget
    pattern: 'acme widget (?P<state>degraded|lost)'
    category: config
    confidence: 0.8
    title: the acme widget is unwell
    remedy: Replace the widget.
  - id: acme-widget-errors
    pattern: 'acme widget (?P<state>degraded|lost)'
    levels: [error, warning]
    category: config
    confidence: 0.8
    title: the acme widget is unwell, and said so loudly
    remedy: Replace the widget.
`

// sglangLog is an SGLang log of n plain INFO lines with the given lines
// at their numbers (1-based).
func sglangLog(n int, at map[int]string) string {
	var b strings.Builder
	b.WriteString("[2025-10-28 12:00:00] server_args=ServerArgs(model_path='x', tp_size=1)\n")
	for i := 2; i <= n; i++ {
		if l, ok := at[i]; ok {
			b.WriteString(l + "\n")
			continue
		}
		fmt.Fprintf(&b, "[2025-10-28 12:00:01 TP0] Prefill batch. #new-seq: 1, #new-token: 12, #cached-token: 0, token usage: 0.01, #running-req: 0, #queue-req: %d\n", i%3)
	}
	return b.String()
}

// runLines runs the built-in rules and the pack over a log, parsed with
// the pack's line watch as analyze parses it, and returns the lines each
// signature finding cites.
func runLines(t *testing.T, log string) map[string][]int {
	t.Helper()
	p, err := Parse([]byte(linesPack), "lines.rules.yaml")
	require.NoError(t, err)
	set, err := New(p)
	require.NoError(t, err)
	opts := set.Options()
	f, err := parser.ParseFS(fstest.MapFS{"server.log": {Data: []byte(log)}}, parser.Options{Year: 2025, Watch: rules.LineWatch(opts.Catalog)})
	require.NoError(t, err)
	res := rules.Run(f, opts)
	out := map[string][]int{}
	for _, fd := range res.Findings {
		if fd.Rule != "signature" || !strings.HasPrefix(fd.Signature, "acme-") {
			continue
		}
		for _, ev := range fd.Evidence {
			out[fd.Signature] = append(out[fd.Signature], ev.Src.Line)
		}
	}
	return out
}

// A pack's signature sees every line: an INFO line, a stat line, a line
// far past the window of unrecognized lines the parser keeps.
func TestPackSignaturesSeeEveryLine(t *testing.T) {
	got := runLines(t, sglangLog(5000, map[int]string{
		3000: "[2025-10-28 12:00:02 TP0] INFO: acme widget degraded on node 3",
		3001: "[2025-10-28 12:00:02 TP0] Decode batch. #running-req: 1, #token: 10, token usage: 0.00, gen throughput (token/s): 5.0, #queue-req: 0, acme widget lost",
	}))
	assert.Equal(t, []int{3000, 3001}, got["acme-widget"])
	assert.Empty(t, got["acme-widget-errors"], "neither line is a warning or an error")
}

// levels keeps a signature to the lines of those levels.
func TestPackSignatureLevels(t *testing.T) {
	got := runLines(t, sglangLog(20, map[int]string{
		5:  "[2025-10-28 12:00:02 TP0] INFO: acme widget degraded on node 3",
		6:  "[2025-10-28 12:00:02 TP0] WARNING: acme widget degraded on node 4",
		7:  "acme widget lost (printed by a library, no level)",
		12: "[2025-10-28 12:00:03 TP0] ERROR: acme widget lost on node 5",
	}))
	assert.Equal(t, []int{5, 6, 7, 12}, got["acme-widget"])
	assert.Equal(t, []int{6, 12}, got["acme-widget-errors"])
}

// Without packs nothing is watched: the built-in catalog's view of a log
// is the same with packs loaded or not.
func TestNoPackNoWatch(t *testing.T) {
	set, err := Load()
	require.NoError(t, err)
	assert.Nil(t, rules.LineWatch(set.Catalog()))
}

func TestPackLevelErrors(t *testing.T) {
	_, err := Parse([]byte(`signatures:
  - id: acme-bad-level
    pattern: 'x'
    levels: [error, loud]
    category: config
    confidence: 0.5
    title: t
    remedy: r
`), "bad.rules.yaml")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "bad.rules.yaml:")
	assert.Contains(t, err.Error(), `level "loud" is not error, warning, info, debug or none`)
}

// rules.LevelMisses says which lines a signature left out for their level.
func TestLevelMisses(t *testing.T) {
	p, err := Parse([]byte(linesPack), "lines.rules.yaml")
	require.NoError(t, err)
	log := sglangLog(10, map[int]string{5: "[2025-10-28 12:00:02 TP0] INFO: acme widget degraded on node 3"})
	f, err := parser.ParseFS(fstest.MapFS{"server.log": {Data: []byte(log)}}, parser.Options{Year: 2025, Watch: rules.LineWatch(p.Signatures)})
	require.NoError(t, err)
	ms := rules.LevelMisses(f, p.Signatures)
	require.Len(t, ms, 1)
	assert.Equal(t, "acme-widget-errors", ms[0].Sig.ID)
	assert.Equal(t, 5, ms[0].Src.Line)
	assert.Equal(t, "INFO", string(ms[0].Level))
}
