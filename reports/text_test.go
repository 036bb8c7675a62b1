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
	assert.Equal(t, "HUNG  in post-weights · silent 77 min · sglang · 8 × NVIDIA RTX PRO 6000 Blackwell Server Edition (SM 12.0) · 7 sources", lines[2])
	assert.Contains(t, out, "  TP0-TP7  launch ")
	assert.Contains(t, out, "           post-weights      00:38:01  01:55:12 stalled  77 min    server.log:225\n")
	for _, l := range lines {
		// Prose wraps at the width; only table rows and evidence may not.
		if strings.HasPrefix(l, "           ") || strings.Contains(l, "server.log:") {
			continue
		}
		assert.LessOrEqual(t, len([]rune(l)), 120, l)
	}
}
