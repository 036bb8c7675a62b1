package pack

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/rules"
)

// fieldsPack is a pack of one rule whose match is the given type list and
// fields mapping, both in flow style: the fields key is on line 7, its
// first key at column 16.
func fieldsPack(types, fields string) string {
	return fmt.Sprintf(`rules:
  - id: fields-rule
    title: t
    doc: d
    match:
      type: [%s]
      fields: {%s}
`, types, fields)
}

func TestMatchFieldsAreCheckedAgainstTheEventTypes(t *testing.T) {
	oomFields, _ := facts.FieldNames(facts.EventOOM)
	tests := []struct {
		name          string
		types, fields string
		want          string // the error; "" when the pack loads
	}{
		{name: "known key", types: "custom-allreduce", fields: `enabled: '^false$', reason: 'P2P'`},
		{name: "number field", types: "request", fields: `status: '^5'`},
		{name: "key of one of the listed types", types: "oom, load-end", fields: `elapsed_s: '.'`},
		{name: "settings key for server-args", types: "server-args", fields: `tp_size: '^8$'`},
		{name: "settings key beside another type", types: "oom, non-default-args", fields: `max_model_len: '.'`},
		{name: "engine config key", types: "engine-init", fields: `max_model_len: '.'`},
		{name: "traceback info", types: "traceback", fields: `incomplete: 'true'`},
		{
			name: "unknown key", types: "oom", fields: `tried_gb: '.'`,
			want: `f.yaml:7:16: rule fields-rule: match.fields: "tried_gb" is not a field of oom events (known: ` +
				strings.Join(oomFields, ", ") + `)`,
		},
		{
			name: "unknown key for several types", types: "p2p, gloo", fields: `cache: '.', rank: '.', host: '.'`,
			want: `f.yaml:7:39: rule fields-rule: match.fields: "host" is not a field of p2p or gloo events (known: cache, connected, detail, expected, rank)`,
		},
		{
			name: "a type without fields", types: "sigquit", fields: `signal: '.'`,
			want: `f.yaml:7:16: rule fields-rule: match.fields: "signal" is not a field of sigquit events (known: none: these events carry no fields)`,
		},
		{
			name: "repeated is the event's, not a field", types: "nccl-warn", fields: `repeated: '.'`,
			want: `f.yaml:7:16: rule fields-rule: match.fields: "repeated" is not a field of nccl-warn events (known: chain, code, comm_id, file, host, pid, rank, result, transport, version, what)`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(fieldsPack(tc.types, tc.fields)), "f.yaml")
			if tc.want == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Equal(t, tc.want, err.Error())
		})
	}
}

// TestMatchFieldsWithoutType: a match without type can see any event,
// settings dumps among them, whose keys are the engine's own: any key may
// be one.
func TestMatchFieldsWithoutType(t *testing.T) {
	for _, fields := range []string{`elapsed_s: '.'`, `tp_size: '8'`, `no_such_field: '.'`} {
		_, err := Parse([]byte(`rules:
  - id: untyped
    title: t
    doc: d
    match:
      msg: 'x'
      fields: {`+fields+`}
`), "f.yaml")
		assert.NoError(t, err, fields)
	}
}

func TestMatchFieldsReadThePayload(t *testing.T) {
	tests := []struct {
		name   string
		fields string
		data   facts.Payload
		want   bool
	}{
		{"flag false", `enabled: '^false$'`, &facts.CustomAllReduce{Reason: "P2P check failed"}, true},
		{"flag true", `enabled: '^false$'`, &facts.CustomAllReduce{Enabled: true}, false},
		{"string", `reason: 'P2P'`, &facts.CustomAllReduce{Reason: "P2P check failed"}, true},
		{"absent string", `reason: '.*'`, &facts.CustomAllReduce{}, false},
		{"number as printed", `addresses: '^3$'`, &facts.CustomAllReduce{Addresses: facts.N(3)}, true},
		{"absent number", `addresses: '.*'`, &facts.CustomAllReduce{}, false},
		{"no payload", `reason: '.*'`, nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse([]byte(fieldsPack("custom-allreduce", tc.fields)), "f.yaml")
			require.NoError(t, err)
			e := &facts.LogEvent{Type: facts.EventCustomAllReduce, Data: tc.data}
			assert.Equal(t, tc.want, p.defs[0].match.accepts(e))
		})
	}
}

func TestSeesFields(t *testing.T) {
	tests := []struct {
		expr    string
		asBool  bool
		noEvent bool
		want    bool
	}{
		{`event.fields["reason"] == "x"`, true, false, true},
		{`event.fields.reason == "x"`, true, false, true},
		{`any(events("oom"), .fields.tried_gib > 1)`, true, true, true},
		{`get(events(), 0).msg == "x"`, true, true, true},
		{`toJSON(events()) contains "P2P"`, true, true, true},
		{`string(event) != ""`, true, false, true},
		{`len(events()) > 2 and event.msg contains "x"`, true, false, false},
		{`any(events("oom"), .msg contains "x") and settings["tp_size"] == "8"`, true, true, false},
		{`event.msg`, false, false, false},
		{`len(events())`, false, true, false},
		{`event`, false, false, true},
		{`events("oom")`, false, true, true},
	}
	for _, tc := range tests {
		t.Run(tc.expr, func(t *testing.T) {
			p, err := compile(tc.expr, tc.asBool, tc.noEvent)
			require.Nil(t, err)
			assert.Equal(t, tc.want, p.fields)
		})
	}
}

// TestEventsFieldsOnlyWhenSeen: a rule whose expressions never read an
// event's fields gets its events without them; one that does, with them.
func TestEventsFieldsOnlyWhenSeen(t *testing.T) {
	f := &facts.Facts{Logs: []*facts.Log{{Path: "server.log", Lines: 2, Events: []*facts.LogEvent{
		{Src: facts.Source{File: "server.log", Line: 1}, Type: facts.EventCustomAllReduce, Msg: "Custom allreduce is disabled",
			Data: &facts.CustomAllReduce{Reason: "P2P check failed"}},
		{Src: facts.Source{File: "server.log", Line: 2}, Type: facts.EventEngineDead, Msg: "engine dead",
			Data: &facts.Failure{ExcType: "RuntimeError"}},
	}}}}
	idx := rules.Derive(f, nil)
	v := newView(idx)
	evs := v.events()
	require.Len(t, evs, 2)
	assert.Equal(t, map[string]any{"enabled": false, "reason": "P2P check failed"}, evs[0].Fields)
	assert.Equal(t, "RuntimeError", evs[1].Exc, "an engine-dead line's exc_type")

	v = newView(idx)
	v.noFields = true
	evs = v.events()
	require.Len(t, evs, 2)
	assert.Nil(t, evs[0].Fields)
	assert.Equal(t, "RuntimeError", evs[1].Exc)

	// The when reads no fields and the message does, or the other way
	// round: the rule's events have them either way.
	for _, tc := range []struct {
		when, message, want string
	}{
		{`len(events()) == 2`, `reason {{ events("custom-allreduce")[0].fields.reason }}`, "reason P2P check failed"},
		{`any(events(), .fields.reason contains "P2P")`, `{{ len(events()) }} events`, "2 events"},
	} {
		pk, err := Parse([]byte(`rules:
  - id: fields-seen
    title: t
    doc: d
    when: `+tc.when+`
    message: '`+tc.message+`'
`), "f.yaml")
		require.NoError(t, err)
		set, err := New(pk)
		require.NoError(t, err)
		res := rules.Run(f, rules.Options{Rules: set.PackRules()})
		require.Len(t, res.Findings, 1, tc.when)
		assert.Equal(t, tc.want, res.Findings[0].Message)
	}
}
