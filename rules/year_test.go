package rules_test

import (
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/parser"
	"github.com/coroner-dev/coroner/rules"
)

// TestMessagesShowNoPlaceholderYear: a finding's message that names a
// time leaves the year out when the bundle gives none, instead of showing
// the parsers' placeholder year 2000 (issue 18, item 8); with --year it
// shows the year.
func TestMessagesShowNoPlaceholderYear(t *testing.T) {
	data, err := os.ReadFile("testdata/throughput/vllm-single-stream-82.txtar")
	require.NoError(t, err)
	_, log, ok := strings.Cut(string(data), "-- server.log --\n")
	require.True(t, ok)
	log, _, _ = strings.Cut(log, "-- want --")
	fsys := fstest.MapFS{"server.log": {Data: []byte(log)}}
	for _, tc := range []struct {
		name string
		year int
		want string
	}{
		{"no year", 0, " from 10-22 09:"},
		{"--year", 2025, " from 2025-10-22 09:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := parser.ParseFS(fsys, parser.Options{Year: tc.year})
			require.NoError(t, err)
			assert.Equal(t, tc.year == 0, f.YearUnknown())
			res := rules.Run(f, rules.Options{})
			var msg string
			for _, fd := range res.Findings {
				if fd.Rule == "throughput" {
					msg = fd.Message
				}
			}
			require.NotEmpty(t, msg, "the throughput finding")
			assert.Contains(t, msg, tc.want)
			assert.NotContains(t, msg, "2000-")
		})
	}
}
