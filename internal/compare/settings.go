package compare

import (
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/coroner-dev/coroner/parser/facts"
)

// aliases maps an engine's argument to the shared name of an argument that
// means the same in the other engine. Only exact equivalents are here: SGLang's
// mem_fraction_static (weights and KV cache) is not vLLM's
// gpu_memory_utilization (everything), and enable_prefix_caching is the
// negation of disable_radix_cache, so those stay apart.
var aliases = map[string]string{
	"tensor_parallel_size":   "tp_size",
	"pipeline_parallel_size": "pp_size",
	"data_parallel_size":     "dp_size",
	"model":                  "model_path",
	"tokenizer":              "tokenizer_path",
	"max_model_len":          "context_length",
	"max_seq_len":            "context_length",
	"max_num_seqs":           "max_running_requests",
	"enforce_eager":          "disable_cuda_graph",
	"seed":                   "random_seed",
}

// ignored are settings that only restate another one or carry no meaning of
// their own for a comparison.
var ignored = map[string]bool{"model_tag": true}

// SettingRow is one setting that differs.
type SettingRow struct {
	// Key is the shared name; the sides' own names are in A.Key and B.Key.
	Key string `json:"key"`
	// Kind is "differs" (both set, other values), "only-a" / "only-b" (set
	// by the user in one run, absent from the other), or "explicit" (same
	// value, set on the command line in one run only).
	Kind string        `json:"kind"`
	A    *SettingValue `json:"a"`
	B    *SettingValue `json:"b"`
}

// SettingValue is a setting as one run has it.
type SettingValue struct {
	Key   string `json:"key"`
	Value string `json:"value"`
	// From is where the value comes from: "server-args" (SGLang's resolved
	// arguments), "engine-config" (vLLM's engine configuration line),
	// "non-default-args", "cmdline".
	From string `json:"from"`
	// Explicit says the user set it: on the command line or in vLLM's
	// non-default args; SetAt is where, when the value shown comes from
	// elsewhere (the engine's own dump of its resolved arguments).
	Explicit bool `json:"explicit"`
	Ref      *Ref `json:"ref,omitempty"`
	SetAt    *Ref `json:"set_at,omitempty"`
}

// redacted is what the parsers put in place of a secret value.
const redacted = "<redacted>"

// fromRank orders the sources of a setting: what the engine says it runs
// with beats what the user typed.
var fromRank = map[string]int{"server-args": 0, "engine-config": 1, "non-default-args": 2, "cmdline": 3, "check-env": 4}

// runSettings collects a run's settings under their shared names.
func runSettings(r Run) map[string]*SettingValue {
	out := map[string]*SettingValue{}
	explicit := map[string]*SettingValue{}
	put := func(key, value, from string, src facts.Source) {
		if ignored[key] {
			return
		}
		name := key
		if a, ok := aliases[key]; ok {
			name = a
		}
		v := &SettingValue{Key: key, Value: value, From: from, Ref: refOf(src),
			Explicit: from == "cmdline" || from == "non-default-args"}
		if v.Explicit {
			if _, ok := explicit[name]; !ok {
				explicit[name] = v
			}
		}
		if cur, ok := out[name]; !ok || fromRank[from] < fromRank[cur.From] {
			out[name] = v
		}
	}
	for _, s := range r.Facts.Settings {
		put(s.Key, s.Value, s.From, s.Src)
	}
	// vLLM prints the configuration it runs with on its engine-init line;
	// its non-default args name only what the user changed.
	for _, l := range r.Facts.Logs {
		for _, e := range l.EventsOf(facts.EventEngineInit) {
			d, ok := e.Data.(*facts.EngineConfig)
			if !ok {
				continue
			}
			for _, k := range slices.Sorted(maps.Keys(d.Config)) {
				if k == "version" || k == "engine_version" {
					continue
				}
				put(k, facts.ValueText(d.Config[k]), "engine-config", e.Src)
			}
		}
	}
	for name, v := range explicit {
		// The launch-command parser hides the value of every flag whose name
		// holds a word like "token" (--speculative-num-draft-tokens too): the
		// flag was still set by the user.
		if cur := out[name]; cur != nil && !cur.Explicit && (norm(cur.Value) == norm(v.Value) || v.Value == redacted) {
			c := *cur
			c.Explicit, c.SetAt = true, v.Ref
			out[name] = &c
		}
	}
	return out
}

func settings(a, b Run) ([]SettingRow, int) {
	sa, sb := runSettings(a), runSettings(b)
	var rows []SettingRow
	same := 0
	for _, k := range unionKeys(sa, sb) {
		va, vb := sa[k], sb[k]
		switch {
		case va != nil && vb != nil && norm(va.Value) != norm(vb.Value):
			rows = append(rows, SettingRow{Key: k, Kind: "differs", A: va, B: vb})
		case va != nil && vb != nil && va.Explicit != vb.Explicit:
			rows = append(rows, SettingRow{Key: k, Kind: "explicit", A: va, B: vb})
		case va != nil && vb != nil:
			same++
		case va != nil && va.Explicit && !isUnset(va.Value):
			rows = append(rows, SettingRow{Key: k, Kind: "only-a", A: va})
		case vb != nil && vb.Explicit && !isUnset(vb.Value):
			rows = append(rows, SettingRow{Key: k, Kind: "only-b", B: vb})
		}
	}
	kindOrder := map[string]int{"differs": 0, "only-a": 1, "only-b": 1, "explicit": 2}
	sort.SliceStable(rows, func(i, j int) bool {
		if kindOrder[rows[i].Kind] != kindOrder[rows[j].Kind] {
			return kindOrder[rows[i].Kind] < kindOrder[rows[j].Kind]
		}
		return rows[i].Key < rows[j].Key
	})
	return rows, same
}

// norm makes values that mean the same compare equal: Python and JSON
// spellings of booleans and None, quotes, one-element lists.
func norm(v string) string {
	v = strings.TrimSpace(v)
	for len(v) >= 2 && (v[0] == '[' && v[len(v)-1] == ']') && !strings.Contains(v[1:len(v)-1], ",") {
		v = strings.TrimSpace(v[1 : len(v)-1])
	}
	if len(v) >= 2 && (v[0] == '\'' || v[0] == '"') && v[len(v)-1] == v[0] {
		v = v[1 : len(v)-1]
	}
	switch strings.ToLower(v) {
	case "true":
		return "true"
	case "false":
		return "false"
	case "none", "null", "":
		return ""
	}
	return v
}

func isUnset(v string) bool { return norm(v) == "" }

func unionKeys[V any](a, b map[string]V) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range []map[string]V{a, b} {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	sort.Strings(out)
	return out
}
