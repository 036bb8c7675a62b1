// Package compare lines two analyzed runs up side by side for `coroner diff`:
// their phases with durations, the first milestone where they part ways,
// the settings, environment variables, versions and GPUs that differ, and
// their throughput and speculative-decoding acceptance.
//
// It works across engines: settings are compared under one name where the
// two engines' arguments mean the same thing (tp_size and
// tensor_parallel_size), phases by the shared taxonomy. Every value cites the
// file and line it was read from, and the output is sorted, so the same two
// bundles always give the same diff.
package compare

import (
	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/rules"
)

// SchemaVersion is the version of the diff's JSON. Fields may be added;
// renaming or removing one needs a new version.
const SchemaVersion = 1

// Run is one side of a diff: a bundle's facts and what the rules made of them.
type Run struct {
	// Path names the bundle as the user gave it.
	Path   string
	Facts  *facts.Facts
	Result *rules.Result
}

// Diff is the comparison of run A with run B.
type Diff struct {
	SchemaVersion int        `json:"schema_version"`
	Tool          Tool       `json:"tool"`
	A             Summary    `json:"a"`
	B             Summary    `json:"b"`
	Throughput    Throughput `json:"throughput"`
	Phases        []PhaseRow `json:"phases"`
	// Divergence is the first milestone where the runs part ways; nil when
	// they logged the same milestones in the same order.
	Divergence *Divergence `json:"divergence"`
	// Milestones counts the milestones compared for the divergence.
	Milestones int          `json:"milestones_compared"`
	Settings   []SettingRow `json:"settings"`
	// SettingsSame counts the settings both runs have with the same value.
	SettingsSame int          `json:"settings_same"`
	Env          []EnvRow     `json:"env"`
	EnvSame      int          `json:"env_same"`
	Versions     []VersionRow `json:"versions"`
	GPUs         GPURow       `json:"gpus"`
}

// Tool names the program that wrote the diff.
type Tool struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Ref is where a value was read, within its own side's bundle.
type Ref struct {
	File string `json:"file"`
	Line int    `json:"line"`
}

func refOf(s facts.Source) *Ref {
	if s.File == "" {
		return nil
	}
	return &Ref{File: s.File, Line: s.Line}
}

// Summary is one run in a few words.
type Summary struct {
	Path    string `json:"path"`
	Engine  string `json:"engine"`
	Version string `json:"version,omitempty"`
	Model   string `json:"model,omitempty"`
	Outcome string `json:"outcome"`
	Phase   string `json:"phase,omitempty"`
	Verdict string `json:"verdict"`
	// Cause is the top-ranked cause category, if any.
	Cause string `json:"cause,omitempty"`
}

// Compare lines up a and b. version is coroner's version for the output.
func Compare(a, b Run, version string) *Diff {
	d := &Diff{SchemaVersion: SchemaVersion, Tool: Tool{Name: "coroner", Version: version}}
	d.A, d.B = summarize(a), summarize(b)
	d.Throughput = throughput(a, b)
	d.Phases = phases(a, b)
	d.Divergence, d.Milestones = diverge(a, b)
	d.Settings, d.SettingsSame = settings(a, b)
	d.Env, d.EnvSame = envDiff(a, b)
	d.Versions = versions(a, b)
	d.GPUs = gpus(a, b)
	return d
}

func summarize(r Run) Summary {
	idx := r.Result.Index
	v := r.Result.Verdict
	s := Summary{Path: r.Path, Engine: string(idx.Engine()), Outcome: string(v.Outcome), Phase: string(v.Phase), Verdict: v.Summary}
	if s.Engine == "" {
		s.Engine = "unknown"
	}
	s.Version = engineVersion(r)
	if st, ok := idx.Setting("model_path", "model"); ok {
		s.Model = st.Value
	}
	if len(v.Causes) > 0 {
		s.Cause = string(v.Causes[0].Category)
	}
	return s
}

// engineVersion is the engine's version from its log, else its env report.
func engineVersion(r Run) string {
	soft := r.Result.Index.Software()
	for _, rd := range rules.ReadingsOf(soft, rules.ByBanner) {
		if rd.Value != "" {
			return rd.Value
		}
	}
	eng := string(r.Result.Index.Engine())
	for _, rd := range rules.ReadingsOf(soft, rules.ByEnvReport) {
		if rd.Key == eng && rd.Value != "" {
			return rd.Value
		}
	}
	return ""
}
