package suppress

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/rules"
)

func TestParseErrors(t *testing.T) {
	src := `- rule: alive-not-ready
  reason: the probe runs before the pod is ready
- rule: stall
- rule: stall
  reason: "  "
  file: "[x"
- rule: signature
  match: '(oops'
  reason: r
  color: blue
- reason: no rule here
`
	_, err := Parse([]byte(src), "sup.yaml")
	require.Error(t, err)
	assert.Equal(t, strings.Join([]string{
		`sup.yaml:3:3: suppression of stall: missing reason: say why the finding is safe to hide`,
		`sup.yaml:5:11: suppression of stall: empty reason: say why the finding is safe to hide`,
		`sup.yaml:6:9: suppression: file: bad glob "[x": syntax error in pattern`,
		`sup.yaml:8:10: suppression: match: error parsing regexp: missing closing ): ` + "`(oops`",
		`sup.yaml:10:3: suppression: unknown field "color" (known: rule, file, match, reason)`,
		`sup.yaml:11:3: suppression: missing rule`,
	}, "\n"), err.Error())

	for _, tc := range []struct{ name, src, want string }{
		{"not a list", "rule: stall\n", "sup.yaml:1:1: want a list of suppressions"},
		{"syntax", "- rule: [stall\n", "sup.yaml:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.src), "sup.yaml")
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}

	l, err := Parse(nil, "empty.yaml")
	require.NoError(t, err, "an empty file suppresses nothing")
	assert.Empty(t, l.Items)

	_, err = Load("testdata/none.yaml")
	require.Error(t, err)
	assert.Equal(t, "testdata/none.yaml: no such file or directory", err.Error())
}

func TestCheckNamesUnknownRules(t *testing.T) {
	l, err := Parse([]byte("- rule: stal\n  reason: typo\n- rule: stall\n  reason: fine\n"), "sup.yaml")
	require.NoError(t, err)
	err = l.Check(func(id string) bool { return id == "stall" })
	require.Error(t, err)
	assert.Equal(t, `sup.yaml:1:9: suppression: no rule "stal" (coroner rules list shows them)`, err.Error())
}

func finding(rule, title, msg string, srcs ...string) rules.Finding {
	f := rules.Finding{Rule: rule, Title: title, Message: msg, Severity: rules.SeverityWarning}
	for _, s := range srcs {
		file, _, _ := strings.Cut(s, ":")
		f.Evidence = append(f.Evidence, rules.Evidence{Src: facts.Source{File: file, Line: 1}, Text: "line of " + file})
	}
	return f
}

func TestMatches(t *testing.T) {
	stallLog := finding("stall", "startup stalled", "silent for 77 min", "logs/server.log:1", "ps_aux.txt:8")
	tests := []struct {
		name string
		s    Suppression
		f    rules.Finding
		want bool
	}{
		{"rule only", Suppression{Rule: "stall"}, stallLog, true},
		{"other rule", Suppression{Rule: "crashed"}, stallLog, false},
		{"file glob on the path", Suppression{Rule: "stall", File: "logs/*.log"}, stallLog, true},
		{"file glob without a slash tries base names", Suppression{Rule: "stall", File: "server.log"}, stallLog, true},
		{"file glob that cites nothing", Suppression{Rule: "stall", File: "probes/*"}, stallLog, false},
		{"match on the message", Suppression{Rule: "stall", Match: mustRE("77 min")}, stallLog, true},
		{"match on the evidence", Suppression{Rule: "stall", Match: mustRE("line of ps_aux")}, stallLog, true},
		{"match on nothing", Suppression{Rule: "stall", Match: mustRE("dist init")}, stallLog, false},
		{"file and match both needed", Suppression{Rule: "stall", File: "server.log", Match: mustRE("dist init")}, stallLog, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.s.Matches(tc.f))
		})
	}
}

func TestFilter(t *testing.T) {
	l, err := Parse([]byte(`- rule: alive-not-ready
  reason: probes run before the pod is ready (INFRA-1234)
- rule: short-log-long-cpu
  file: "*.log"
  reason: our build prints nothing while it compiles
- rule: gpu-oom
  reason: the nightly OOM test
`), "team.yaml")
	require.NoError(t, err)
	in := []rules.Finding{
		finding("stall", "startup stalled", "silent", "server.log:225"),
		finding("alive-not-ready", "alive but not ready", "no ready line", "health.txt:2"),
		finding("short-log-long-cpu", "few lines", "busy", "server.log:225"),
		finding("short-log-long-cpu", "few lines", "busy", "ps_aux.txt:8"),
	}
	out := l.Filter()(in)
	var rs []string
	for _, f := range out {
		rs = append(rs, f.Rule)
	}
	// The stall stays; the second short-log finding cites no log; the
	// gpu-oom suppression matched nothing and is reported.
	assert.Equal(t, []string{"stall", "short-log-long-cpu", "suppression"}, rs)
	assert.Equal(t, 2, l.Suppressed())
	assert.Equal(t, []int{1, 1, 0}, []int{l.Items[0].Hits, l.Items[1].Hits, l.Items[2].Hits})

	stale := out[2]
	assert.Equal(t, rules.SeverityInfo, stale.Severity)
	assert.Equal(t, "suppression matched no finding", stale.Title)
	assert.Equal(t, "The suppression of gpu-oom at team.yaml:6 matched no finding of this run: remove it if what it hid is gone, or fix its rule, file or match. Its reason: the nightly OOM test", stale.Message)
	require.Len(t, stale.Evidence, 1)
	assert.Equal(t, facts.Source{File: "team.yaml", Line: 6}, stale.Evidence[0].Src)
	assert.Equal(t, "rule: gpu-oom", stale.Evidence[0].Text)
	assert.False(t, stale.Cause)

	// A second run starts counting afresh.
	out = l.Filter()(nil)
	assert.Len(t, out, 3, "nothing to suppress: every entry is reported")
	assert.Zero(t, l.Suppressed())
}

func TestRuleDescribesTheFindings(t *testing.T) {
	r := Rule()
	require.NoError(t, r.Validate())
	assert.Equal(t, RuleID, r.ID)
	assert.Equal(t, rules.SeverityInfo, r.Severity)
}

func mustRE(s string) *regexp.Regexp { return regexp.MustCompile(s) }
