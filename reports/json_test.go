package reports

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/rules"
)

// TestJSONContract decodes the JSON of every golden bundle into generic
// values and checks it against DESIGN §6 field by field: every field is
// there with its type, the vocabulary is the taxonomy's, and every finding
// cites a file and a line.
func TestJSONContract(t *testing.T) {
	outcomes := []string{string(rules.OutcomeReady), string(rules.OutcomeInProgress), string(rules.OutcomeHung),
		string(rules.OutcomeCrashed), string(rules.OutcomeSlow), string(rules.OutcomeUnknown)}
	var phases, categories []string
	for _, p := range rules.Phases {
		phases = append(phases, string(p))
	}
	for _, c := range rules.Categories {
		categories = append(categories, string(c))
	}
	for _, gb := range goldenBundles {
		t.Run(gb.name, func(t *testing.T) {
			var buf bytes.Buffer
			require.NoError(t, JSON(&buf, analyze(t, gb.name, gb.path)))
			var doc map[string]any
			require.NoError(t, json.Unmarshal(buf.Bytes(), &doc))
			c := contract{t: t}

			assert.Equal(t, 1.0, doc["schema_version"], "schema_version")
			tool := c.obj(doc, "tool")
			assert.Equal(t, "coroner", c.str(tool, "name"))
			c.str(tool, "version")

			b := c.obj(doc, "bundle")
			assert.Equal(t, gb.name, c.str(b, "path"))
			sources := c.arr(b, "sources")
			assert.NotEmpty(t, sources)
			for _, s := range sources {
				s := c.as(s)
				assert.NotEmpty(t, c.str(s, "path"))
				assert.NotEmpty(t, c.str(s, "kind"))
				c.num(s, "bytes")
				c.num(s, "lines")
				for _, is := range c.arr(s, "issues") {
					is := c.as(is)
					c.num(is, "line")
					assert.NotEmpty(t, c.str(is, "kind"))
					c.str(is, "detail")
				}
			}

			for _, a := range c.arr(doc, "assumptions") {
				assert.IsType(t, "", a)
			}

			v := c.obj(doc, "verdict")
			outcome := c.str(v, "outcome")
			assert.Contains(t, outcomes, outcome)
			phase := c.str(v, "phase")
			if phase != "" || outcome != string(rules.OutcomeUnknown) {
				assert.Contains(t, phases, phase, "verdict.phase")
			}
			assert.NotEmpty(t, c.str(v, "summary"))
			assert.GreaterOrEqual(t, c.num(v, "stalled_for_s"), 0.0)
			for _, cause := range c.arr(v, "causes") {
				cause := c.as(cause)
				assert.Contains(t, categories, c.str(cause, "category"))
				assert.NotEmpty(t, c.str(cause, "rule"))
				conf := c.num(cause, "confidence")
				assert.True(t, conf > 0 && conf <= 1, "confidence %v", conf)
				assert.NotEmpty(t, c.str(cause, "title"))
			}

			for _, s := range c.arr(doc, "timeline") {
				s := c.as(s)
				assert.NotEmpty(t, c.str(s, "process"))
				assert.Contains(t, phases, c.str(s, "phase"))
				c.str(s, "start")
				c.str(s, "end")
				assert.GreaterOrEqual(t, c.num(s, "duration_s"), 0.0)
				ev := c.obj(s, "evidence")
				assert.NotEmpty(t, c.str(ev, "file"))
				c.num(ev, "line")
			}

			for _, f := range c.arr(doc, "findings") {
				f := c.as(f)
				rule := c.str(f, "rule")
				assert.NotEmpty(t, rule)
				assert.NotEmpty(t, c.str(f, "title"))
				assert.GreaterOrEqual(t, rules.Severity(c.str(f, "severity")).Rank(), 0, "severity of %s", rule)
				if cat := c.str(f, "category"); cat != "" {
					assert.Contains(t, categories, cat, "category of %s", rule)
				}
				c.num(f, "confidence")
				assert.NotEmpty(t, c.str(f, "message"))
				c.str(f, "remedy")
				for _, ref := range c.arr(f, "references") {
					assert.Regexp(t, `^https://`, ref)
				}
				ev := c.arr(f, "evidence")
				assert.NotEmpty(t, ev, "finding %s cites no evidence", rule)
				for _, e := range ev {
					e := c.as(e)
					assert.NotEmpty(t, c.str(e, "file"), "finding %s cites no file", rule)
					line := c.num(e, "line")
					if rule != "input-quality" {
						// input-quality cites whole files (an unrecognized one, a
						// truncated stream); every other finding cites a line.
						assert.Greater(t, line, 0.0, "finding %s cites no line", rule)
					}
					c.str(e, "text")
				}
			}

			for _, in := range c.arr(doc, "inconclusive") {
				in := c.as(in)
				assert.NotEmpty(t, c.str(in, "rule"))
				assert.NotEmpty(t, c.arr(in, "missing"))
				assert.NotEmpty(t, c.str(in, "collect"))
			}

			// Added fields keep their shape too.
			c.arr(doc, "ruled_out")
			c.arr(doc, "snapshots")
			env := c.obj(doc, "environment")
			c.str(env, "engine")
			for _, k := range []string{"gpus", "software", "server_args", "env_vars", "system"} {
				for _, it := range c.arr(env, k) {
					src := c.obj(c.as(it), "source")
					assert.NotEmpty(t, c.str(src, "file"), "environment.%s cites no file", k)
				}
			}
		})
	}
}

// contract reads fields of a decoded JSON document, failing the test when
// one is missing or has the wrong type.
type contract struct{ t *testing.T }

func (c contract) get(m map[string]any, k string) any {
	c.t.Helper()
	v, ok := m[k]
	if !ok {
		c.t.Errorf("field %q missing in %v", k, keys(m))
	}
	return v
}

func (c contract) obj(m map[string]any, k string) map[string]any {
	c.t.Helper()
	v, ok := c.get(m, k).(map[string]any)
	if !ok {
		c.t.Errorf("field %q is not an object", k)
		return map[string]any{}
	}
	return v
}

func (c contract) arr(m map[string]any, k string) []any {
	c.t.Helper()
	v, ok := c.get(m, k).([]any)
	if !ok {
		c.t.Errorf("field %q is not an array (null?)", k)
	}
	return v
}

func (c contract) str(m map[string]any, k string) string {
	c.t.Helper()
	v, ok := c.get(m, k).(string)
	if !ok {
		c.t.Errorf("field %q is not a string", k)
	}
	return v
}

func (c contract) num(m map[string]any, k string) float64 {
	c.t.Helper()
	v, ok := c.get(m, k).(float64)
	if !ok {
		c.t.Errorf("field %q is not a number", k)
	}
	return v
}

func (c contract) as(v any) map[string]any {
	c.t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		c.t.Errorf("%v is not an object", v)
		return map[string]any{}
	}
	return m
}

func keys(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }
