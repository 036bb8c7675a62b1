package reports

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/rules"
)

// readmeJSON is the JSON example of the README: the seed bundle's report
// "with every array cut to its first entries".
func readmeJSON(t *testing.T) (any, string) {
	t.Helper()
	data, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	_, rest, ok := strings.Cut(string(data), "The seed bundle's report, with every array cut to its first entries")
	require.True(t, ok, "the README's JSON example")
	_, rest, ok = strings.Cut(rest, "```json\n")
	require.True(t, ok, "the README's JSON example")
	block, _, ok := strings.Cut(rest, "\n```\n")
	require.True(t, ok)
	var v any
	require.NoError(t, json.Unmarshal([]byte(block), &v), "the README's JSON example is JSON")
	return v, block
}

// TestREADMEJSONExample: the README's JSON example is the report coroner
// writes for the seed bundle today, cut: every object has every field the
// report's has, with the same values, and every array entry is one of the
// report's, in its order (issue 18, item 9).
func TestREADMEJSONExample(t *testing.T) {
	example, _ := readmeJSON(t)
	r := analyze(t, "fixtures/seed/flashinfer-sm120-hang", "../fixtures/seed/flashinfer-sm120-hang")
	r.Tool.Version = "0.1.0-dev" // what go run ./cmd/coroner says
	var b bytes.Buffer
	require.NoError(t, JSON(&b, r))
	var actual any
	require.NoError(t, json.Unmarshal(b.Bytes(), &actual))
	if *update {
		writeREADMEJSON(t, cut(actual))
		example, _ = readmeJSON(t)
	}
	if errs := cutOf(example, actual, "$"); len(errs) > 0 {
		t.Errorf("the README's JSON example is not the seed's report, cut (go test ./reports -run TestREADMEJSONExample -update rewrites it):\n%s", strings.Join(errs, "\n"))
	}
}

// cut keeps the first entry of every array but arrays of numbers (GPU
// indexes), which it keeps whole.
func cut(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[k] = cut(e)
		}
		return out
	case []any:
		if len(x) == 0 {
			return x
		}
		if _, isNum := x[0].(float64); isNum {
			return x
		}
		return []any{cut(x[0])}
	}
	return v
}

// writeREADMEJSON replaces the README's JSON example with v, keeping the
// report's field order (a round trip through the Report type).
func writeREADMEJSON(t *testing.T, v any) {
	t.Helper()
	raw, err := json.Marshal(v)
	require.NoError(t, err)
	var r Report
	require.NoError(t, json.Unmarshal(raw, &r))
	var b bytes.Buffer
	require.NoError(t, JSON(&b, &r))
	_, old := readmeJSON(t)
	data, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile("../README.md", []byte(strings.Replace(string(data), old, strings.TrimSuffix(b.String(), "\n"), 1)), 0o644))
}

// cutOf checks that example is actual with arrays cut, and says where not.
func cutOf(example, actual any, path string) []string {
	switch ex := example.(type) {
	case map[string]any:
		ac, ok := actual.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: an object in the example, %T in the report", path, actual)}
		}
		var errs []string
		keys := map[string]bool{}
		for k := range ex {
			keys[k] = true
		}
		for k := range ac {
			keys[k] = true
		}
		for _, k := range sortedSet(keys) {
			ev, inEx := ex[k]
			av, inAc := ac[k]
			switch {
			case !inAc:
				errs = append(errs, fmt.Sprintf("%s.%s: in the example, not in the report", path, k))
			case !inEx:
				errs = append(errs, fmt.Sprintf("%s.%s: in the report, not in the example", path, k))
			default:
				errs = append(errs, cutOf(ev, av, path+"."+k)...)
			}
		}
		return errs
	case []any:
		ac, ok := actual.([]any)
		if !ok {
			return []string{fmt.Sprintf("%s: an array in the example, %T in the report", path, actual)}
		}
		j := 0
		for i, e := range ex {
			for j < len(ac) && len(cutOf(e, ac[j], "")) > 0 {
				j++
			}
			if j == len(ac) {
				return []string{fmt.Sprintf("%s[%d]: no entry of the report (after the ones before it) is this one", path, i)}
			}
			j++
		}
		if len(ex) == 0 && len(ac) > 0 {
			return []string{fmt.Sprintf("%s: empty in the example, %d entries in the report", path, len(ac))}
		}
		return nil
	default:
		if !reflect.DeepEqual(example, actual) {
			return []string{fmt.Sprintf("%s: %v in the example, %v in the report", path, example, actual)}
		}
		return nil
	}
}

func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestREADMEVocabulary: the README lists the closed vocabulary as the
// rules define it, and cites no DESIGN, which is not in the repository
// (issue 18, item 9).
func TestREADMEVocabulary(t *testing.T) {
	data, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	readme := string(data)
	list := func(prefix string) []string {
		for _, l := range strings.Split(readme, "\n") {
			if rest, ok := strings.CutPrefix(l, prefix); ok {
				var out []string
				for _, w := range strings.Split(rest, ", ") {
					out = append(out, strings.Trim(w, "`"))
				}
				return out
			}
		}
		t.Fatalf("no README line starts %q", prefix)
		return nil
	}
	var phases, categories []string
	for _, p := range rules.Phases {
		phases = append(phases, string(p))
	}
	for _, c := range rules.Categories {
		categories = append(categories, string(c))
	}
	outcomes := []string{string(rules.OutcomeReady), string(rules.OutcomeInProgress), string(rules.OutcomeHung),
		string(rules.OutcomeCrashed), string(rules.OutcomeSlow), string(rules.OutcomeUnknown)}
	severities := []string{string(rules.SeverityCritical), string(rules.SeverityError), string(rules.SeverityWarning), string(rules.SeverityInfo)}
	assert.Equal(t, outcomes, list("- outcomes: "))
	assert.Equal(t, phases, list("- phases, in startup order: "))
	assert.Equal(t, categories, list("- cause categories: "))
	assert.Equal(t, severities, list("- severities, most severe first: "))
	assert.NotContains(t, readme, "DESIGN")
}
