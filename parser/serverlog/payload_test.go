package serverlog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/textio"
)

// TestPayloadSchema parses every server log the repository ships and checks
// that each event carries the payload type its event type declares, and
// that the real logs exercise most of the schema.
func TestPayloadSchema(t *testing.T) {
	var logs []string
	for _, glob := range []string{"testdata/*.log", "../../fixtures/corpus/*/*/*.log", "../../fixtures/seed/*/*.log",
		"../../fixtures/incidents/cases/*/*.log", "../../fixtures/incidents-holdout/cases/*/*.log",
		"../../fixtures/incidents-holdout2/cases/*/*.log", "../../fixtures/incidents-holdout3/cases/*/*.log",
		"../../fixtures/incidents-new/cases/*/*.log", "../../fixtures/incidents-new2/cases/*/*.log",
		"../../fixtures/incidents-new3/cases/*/*.log"} {
		m, err := filepath.Glob(glob)
		require.NoError(t, err)
		logs = append(logs, m...)
	}
	require.Greater(t, len(logs), 150)
	seen := map[facts.EventType]bool{}
	for _, path := range logs {
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		in := textio.NewInput(path, strings.NewReader(string(b)), 4096, nil)
		out := &facts.Facts{Clocks: map[string]facts.Clock{}}
		Parse(in, facts.KindServerLog, out)
		for _, l := range out.Logs {
			for _, e := range l.Events {
				assert.Empty(t, payloadMismatch(e), path)
				if e.Data != nil {
					seen[e.Type] = true
				}
			}
		}
	}
	assert.Greater(t, len(seen), 40, "event types with a payload seen in the shipped logs: %d", len(seen))
}
