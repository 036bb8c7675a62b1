package reports

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNoPlaceholderYear: a log whose stamps carry no year, in a bundle
// that gives none, is never shown in the placeholder year: the formats
// people read leave the year out, the JSON report writes year 0000 (a
// year no evidence has) and says year_unknown (issue 18, item 8). Before,
// every format showed the dates in year 2000.
func TestNoPlaceholderYear(t *testing.T) {
	const name, path = "vllm", "../fixtures/corpus/fulllogs/vllm-llama31-8b-v0171"
	r := analyze(t, name, path)
	require.True(t, r.YearUnknown)
	for _, f := range Formats {
		t.Run(f.Name, func(t *testing.T) {
			var b bytes.Buffer
			require.NoError(t, f.Render(&b, r, RenderOptions{Excerpts: excerpts(t, path, r)}))
			out := b.String()
			assert.NotContains(t, out, "2000-05-16")
			assert.NotContains(t, out, "year 2000")
			if f.Name != "json" {
				assert.NotContains(t, out, "0000-05-16", "only the JSON writes the year-0000 stamps")
				return
			}
			var doc struct {
				YearUnknown bool `json:"year_unknown"`
				Timeline    []struct {
					Start string `json:"start"`
				} `json:"timeline"`
			}
			require.NoError(t, json.Unmarshal(b.Bytes(), &doc))
			assert.True(t, doc.YearUnknown)
			require.NotEmpty(t, doc.Timeline)
			for _, s := range doc.Timeline {
				assert.True(t, strings.HasPrefix(s.Start, "0000-05-16T"), s.Start)
			}
		})
	}
	var b bytes.Buffer
	require.NoError(t, TimelineTable(&b, r))
	assert.NotContains(t, b.String(), "2000-")
	assert.Contains(t, b.String(), " 05-16T21:39:29Z ")

	var md bytes.Buffer
	require.NoError(t, Markdown(&md, r))
	assert.Contains(t, md.String(), "Times are UTC, on May 16, year unknown.")
}

// TestYearKnownUnchanged: a bundle whose year is known writes its times
// as before, with no year_unknown.
func TestYearKnownUnchanged(t *testing.T) {
	r := analyze(t, "seed", "../fixtures/seed/flashinfer-sm120-hang")
	assert.False(t, r.YearUnknown)
	var b bytes.Buffer
	require.NoError(t, JSON(&b, r))
	assert.NotContains(t, b.String(), "year_unknown")
	assert.Contains(t, b.String(), `"start": "2026-02-10T`)
}
