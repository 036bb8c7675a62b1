package rules_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/rules"
	"github.com/coroner-dev/coroner/rules/rulestest"
)

func TestRegistry(t *testing.T) {
	rs := rules.Registered()
	require.NotEmpty(t, rs)
	require.NoError(t, rules.CheckRegistry(rs))
}

// TestEngineLogRulesReadAnyServerLog: a rule that reads SGLang's or vLLM's
// logs reads a server log whose engine was not recognized too (a paste
// without headers, a launcher's capture): the parser makes the same events
// of the same lines there, and an owned signature would otherwise never be
// reported (a fallen-off-the-bus line in such a log named no cause).
func TestEngineLogRulesReadAnyServerLog(t *testing.T) {
	for _, r := range rules.Registered() {
		engine := slices.Contains(r.Needs, facts.KindSGLangLog) || slices.Contains(r.Needs, facts.KindVLLMLog)
		if engine {
			assert.Contains(t, r.Needs, facts.KindServerLog, "rule %s reads engine logs but not a server log of unknown engine", r.ID)
		}
	}
}

// TestRuleFixtures runs every rule against its fixtures in testdata/<id>/.
// A rule needs at least one case that makes it fire and one where it stays
// quiet; adding a rule needs fixtures, not test code.
func TestRuleFixtures(t *testing.T) {
	for _, r := range rules.Registered() {
		t.Run(r.ID, func(t *testing.T) {
			files, _ := filepath.Glob(filepath.Join("testdata", r.ID, "*.txtar"))
			require.NotEmpty(t, files, "rule %s has no fixtures in testdata/%s/", r.ID, r.ID)
			fires, quiet := 0, 0
			for _, path := range files {
				c, err := rulestest.LoadTxtar(path)
				require.NoError(t, err)
				wanted := false
				for _, w := range c.Wants {
					wanted = wanted || w.Rule == r.ID
				}
				if wanted {
					fires++
				} else {
					quiet++
				}
				t.Run(c.Name, func(t *testing.T) {
					res := c.Run([]*rules.Rule{r}, true)
					assert.Empty(t, res.Problems, strings.Join(res.Problems, "\n"))
				})
			}
			assert.NotZero(t, fires, "rule %s has no fixture where it fires", r.ID)
			assert.NotZero(t, quiet, "rule %s has no fixture where it stays quiet", r.ID)
		})
	}
}

// TestBundleFixtures runs all rules on every bundle that has a .want beside it.
func TestBundleFixtures(t *testing.T) {
	wants, _ := filepath.Glob("../fixtures/*/*.want")
	more, _ := filepath.Glob("../fixtures/corpus/*/*.want")
	wants = append(wants, more...)
	require.NotEmpty(t, wants)
	for _, w := range wants {
		dir := strings.TrimSuffix(w, ".want")
		if _, err := os.Stat(dir); err != nil {
			continue // a .want for a txtar case or a pending bundle
		}
		t.Run(strings.TrimPrefix(dir, "../fixtures/"), func(t *testing.T) {
			c, err := rulestest.LoadDir(dir)
			require.NoError(t, err)
			res := c.Run(rules.Registered(), false)
			assert.Empty(t, res.Problems, strings.Join(res.Problems, "\n"))
		})
	}
}
