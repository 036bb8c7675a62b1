package reports

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/internal/escape"
)

// TestTextColor: colour codes only when asked for, and never the ones a
// hostile log carries.
func TestTextColor(t *testing.T) {
	r := analyze(t, "hostile", "testdata/hostile")
	var plain, color bytes.Buffer
	require.NoError(t, Text(&plain, r, TextOptions{}))
	require.NoError(t, Text(&color, r, TextOptions{Color: true}))
	assert.NotContains(t, plain.String(), "\x1b", "plain output holds no escape at all")
	assert.Contains(t, color.String(), ansiBold+ansiRed+"CRASHED"+ansiReset)
	// The file holding "\x1b[31mred\x1b[0m" shows up without its escapes.
	assert.NotContains(t, color.String(), "\x1b[31mred")
	assert.Equal(t, plain.String(), escape.Text(color.String()), "colour changes nothing but colour")
}

func TestTextSeed(t *testing.T) {
	r := analyze(t, "seed", "../fixtures/seed/flashinfer-sm120-hang")
	var buf bytes.Buffer
	require.NoError(t, Text(&buf, r, TextOptions{Width: 100}))
	out := buf.String()
	lines := strings.Split(out, "\n")
	assert.Equal(t, "HUNG  in post-weights · silent 77 min · sglang ·", lines[2])
	assert.Equal(t, "      8 × NVIDIA RTX PRO 6000 Blackwell Server Edition (SM 12.0) · 7 sources", lines[3])
	assert.Contains(t, out, "  TP0-TP7  launch ")
	assert.Contains(t, out, "           post-weights      00:38:01  01:55:12 stalled  77 min    server.log:225\n")
}

// TestTextFitsWidth: every line of the text format fits the width it is
// given (the terminal's, from the CLI): the header wraps between its facts,
// prose between words, tables narrow their widest columns (issue 18,
// item 9). Before, the header ran to 119 columns at width 100 and tables
// ignored the width.
func TestTextFitsWidth(t *testing.T) {
	for _, gb := range goldenBundles {
		r := analyze(t, gb.name, gb.path)
		for _, width := range []int{140, 100, 80} {
			var buf bytes.Buffer
			require.NoError(t, Text(&buf, r, TextOptions{Width: width}))
			inTimeline := false
			for _, l := range strings.Split(buf.String(), "\n") {
				// The timeline's columns narrow only to their longest word
				// (cuda-graph-capture, 21:40:38 open): about 84 columns.
				inTimeline = strings.HasPrefix(l, "TIMELINE") || inTimeline && l != ""
				if width < 100 && inTimeline {
					continue
				}
				assert.LessOrEqual(t, len([]rune(l)), width, "%s at %d: %q", gb.name, width, l)
			}
		}
	}
}
