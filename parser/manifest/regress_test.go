package manifest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/textio"
)

// The fuzzer found that a key in another case ("Rounds") reaches the struct
// through encoding/json's case-insensitive match without a line position,
// and Parse indexed the positions out of range.
func TestRoundsInAnotherCase(t *testing.T) {
	out := &facts.Facts{Clocks: map[string]facts.Clock{}}
	require.NotPanics(t, func() {
		Parse(textio.Lines("manifest.json", `{"Rounds":[{"dir":"round-01","start":"2026-01-01T00:00:00Z"}]}`+"\n"), facts.KindManifest, out)
	})
	require.Len(t, out.Capture, 1)
	assert.Equal(t, "round-01", out.Capture[0].Scope)
	assert.Equal(t, 0, out.Capture[0].Src.Line, "no position is known: the manifest as a whole is cited")
}
