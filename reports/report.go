// Package reports turns an analysis into what people and tools read: the
// JSON report (the contract the README sets out), and markdown, HTML, text and
// GitHub renderings of the same Report value. Renderers know nothing of
// parsers; they read only the Report.
package reports

import (
	"sort"
	"time"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/rules"
)

// SchemaVersion is the JSON report's schema version. Fields may be added;
// renaming or removing one needs a new version.
const SchemaVersion = 1

// Report is the analysis as the JSON contract shapes it, plus added fields
// the renderers use.
type Report struct {
	SchemaVersion int            `json:"schema_version"`
	Tool          Tool           `json:"tool"`
	Bundle        Bundle         `json:"bundle"`
	Assumptions   []string       `json:"assumptions"`
	Verdict       Verdict        `json:"verdict"`
	Timeline      []TimelineSpan `json:"timeline"`
	Findings      []Finding      `json:"findings"`
	Inconclusive  []Inconclusive `json:"inconclusive"`
	// Added fields (schema 1 allows additions).
	RuledOut []RuledOut `json:"ruled_out"`
	// Environment is the hardware, software, server arguments and
	// environment variables of the run, each value citing its source.
	Environment Environment `json:"environment"`
	// Snapshots are the instants point-in-time evidence (ps, nvidia-smi,
	// probes) was captured, in time order: the timeline chart marks them.
	Snapshots []Snapshot `json:"snapshots"`
	// EvidenceEnd is the latest instant the bundle knows of; open spans and
	// silences are measured up to it. Zero when the bundle has no times.
	EvidenceEnd *Instant `json:"evidence_end,omitempty"`
	// Labels are the repository labels the verdict maps to through a
	// label table (coroner analyze --labels); none without one.
	Labels []string `json:"labels,omitempty"`
	// Runs are the launches of the server the bundle holds, when it holds
	// more than one; the rest of the report is about the selected one.
	Runs []Run `json:"runs,omitempty"`
	// YearUnknown is set when the bundle's timestamps carry no year and
	// nothing in it gives one (facts.Facts.YearUnknown): every time of the
	// report is then written in year 0000 (0001 after a New Year in a
	// log), which no evidence has, and the renderers leave the year out
	// (stamp, yearless).
	YearUnknown bool `json:"year_unknown,omitempty"`
}

// Snapshot is one capture of point-in-time evidence.
type Snapshot struct {
	Kind string `json:"kind"`
	At   string `json:"at"`
	File string `json:"file"`
	Line int    `json:"line"`
}

// Instant is a time with the evidence that gives it.
type Instant struct {
	At   string `json:"at"`
	File string `json:"file"`
	Line int    `json:"line"`
}

// Tool names the program that wrote the report.
type Tool struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Bundle lists every source.
type Bundle struct {
	Path    string   `json:"path"`
	Sources []Source `json:"sources"`
}

// Source is one file of the bundle.
type Source struct {
	Path       string  `json:"path"`
	Kind       string  `json:"kind"`
	Bytes      int64   `json:"bytes"`
	Lines      int     `json:"lines"`
	Issues     []Issue `json:"issues"`
	Container  string  `json:"container,omitempty"`
	CapturedAt string  `json:"captured_at,omitempty"`
	// Part places a block of an issue in its document (added field).
	Part *SourcePart `json:"part,omitempty"`
}

// SourcePart places a source cut out of an issue document: the source's
// line n is line FirstLine+n-1 of the document Doc ("" when the file Of is
// the document, else "body" or "comment N"); How is fence, pre, details or
// unfenced.
type SourcePart struct {
	Of        string `json:"of"`
	Doc       string `json:"doc,omitempty"`
	How       string `json:"how"`
	FirstLine int    `json:"first_line"`
	LastLine  int    `json:"last_line"`
}

// Issue is a parse issue of a source.
type Issue struct {
	Line   int    `json:"line"`
	Kind   string `json:"kind"`
	Detail string `json:"detail"`
}

// Verdict is the run's state and ranked causes.
type Verdict struct {
	Outcome     string  `json:"outcome"`
	Phase       string  `json:"phase"`
	Summary     string  `json:"summary"`
	StalledForS int64   `json:"stalled_for_s"`
	Causes      []Cause `json:"causes"`
	// Sequence: the outcomes the run went through, in order, when it was
	// more than one (["hung", "crashed"]: a hang a timeout ended).
	Sequence []string `json:"sequence,omitempty"`
}

// Cause is one ranked hypothesis.
type Cause struct {
	Category   string  `json:"category"`
	Rule       string  `json:"rule"`
	Confidence float64 `json:"confidence"`
	Title      string  `json:"title"`
	Why        string  `json:"why,omitempty"`
}

// TimelineSpan is one phase of one process. An open span (the phase had not
// ended when the evidence stops) ends at the latest instant the bundle
// knows, and says so with Open.
type TimelineSpan struct {
	Process   string   `json:"process"`
	Phase     string   `json:"phase"`
	Start     string   `json:"start"`
	End       string   `json:"end"`
	DurationS float64  `json:"duration_s"`
	Evidence  Location `json:"evidence"`
	Open      bool     `json:"open,omitempty"`
	// Cut is set when the span ends at a gap of its log (excerpts of a
	// paste): it lasted at least this long.
	Cut bool `json:"cut,omitempty"`
}

// Location is a file and line of the bundle.
type Location struct {
	File string `json:"file"`
	Line int    `json:"line"`
}

// Finding is one rule's report.
type Finding struct {
	Rule       string     `json:"rule"`
	Title      string     `json:"title"`
	Severity   string     `json:"severity"`
	Category   string     `json:"category"`
	Confidence float64    `json:"confidence"`
	Message    string     `json:"message"`
	Remedy     string     `json:"remedy"`
	References []string   `json:"references"`
	Evidence   []Evidence `json:"evidence"`
}

// Evidence is one cited line.
type Evidence struct {
	File string `json:"file"`
	Line int    `json:"line"`
	Text string `json:"text"`
}

// Inconclusive is a rule that could not decide.
type Inconclusive struct {
	Rule    string   `json:"rule"`
	Missing []string `json:"missing"`
	Collect string   `json:"collect"`
}

// RuledOut is a hypothesis checked and rejected.
type RuledOut struct {
	Rule     string     `json:"rule"`
	Category string     `json:"category"`
	Title    string     `json:"title"`
	Why      string     `json:"why"`
	Evidence []Evidence `json:"evidence"`
}

// Meta is what the report says about its own making.
type Meta struct {
	Path    string
	Version string
}

// Build assembles the report. It reads no clock and iterates no map
// unsorted: the same inputs give the same report.
func Build(f *facts.Facts, res *rules.Result, m Meta) *Report {
	r := &Report{
		SchemaVersion: SchemaVersion,
		Tool:          Tool{Name: "coroner", Version: m.Version},
		Bundle:        Bundle{Path: m.Path, Sources: []Source{}},
		Assumptions:   append([]string{}, f.Assumptions...),
		Timeline:      []TimelineSpan{},
		Findings:      []Finding{},
		Inconclusive:  []Inconclusive{},
		RuledOut:      []RuledOut{},
		Environment:   buildEnvironment(res.Index),
		YearUnknown:   f.YearUnknown(),
	}
	stamp := func(t time.Time) string { return stampOf(t, r.YearUnknown) }
	r.Snapshots = snapshots(f, stamp)
	for _, s := range f.Sources {
		src := Source{Path: s.Path, Kind: string(s.Kind), Bytes: s.Bytes, Lines: s.Lines, Issues: []Issue{}, Container: s.Container}
		if !s.CapturedAt.IsZero() {
			src.CapturedAt = stamp(s.CapturedAt)
		}
		if p := s.Part; p != nil {
			src.Part = &SourcePart{Of: p.Of, Doc: p.Doc, How: p.How, FirstLine: p.Offset + 1, LastLine: p.Offset + max(s.Lines, 1)}
		}
		for _, is := range s.Issues {
			src.Issues = append(src.Issues, Issue{Line: is.Src.Line, Kind: string(is.Kind), Detail: is.Detail})
		}
		r.Bundle.Sources = append(r.Bundle.Sources, src)
	}
	v := res.Verdict
	r.Verdict = Verdict{Outcome: string(v.Outcome), Phase: string(v.Phase), Summary: v.Summary,
		StalledForS: int64(v.StalledFor / time.Second), Causes: []Cause{}}
	for _, o := range v.Sequence {
		r.Verdict.Sequence = append(r.Verdict.Sequence, string(o))
	}
	for _, c := range v.Causes {
		r.Verdict.Causes = append(r.Verdict.Causes, Cause{Category: string(c.Category), Rule: c.Rule,
			Confidence: round2(c.Confidence), Title: c.Title, Why: c.Why})
	}
	var latest time.Time
	if res.Index != nil {
		latest = res.Index.Latest
		if !latest.IsZero() {
			r.EvidenceEnd = &Instant{At: stamp(latest), File: res.Index.LatestFrom.File, Line: res.Index.LatestFrom.Line}
		}
	}
	for _, s := range res.Timeline {
		ts := TimelineSpan{Process: s.Process, Phase: string(s.Phase), Start: stamp(s.Start), End: stamp(s.End),
			Evidence: Location{File: s.Evidence.File, Line: s.Evidence.Line}, Cut: s.Cut}
		end := s.End
		if end.IsZero() {
			ts.Open = true
			if !latest.IsZero() && latest.After(s.Start) {
				end = latest
				ts.End = stamp(latest)
			}
		}
		if !end.IsZero() && !s.Start.IsZero() {
			ts.DurationS = round2(end.Sub(s.Start).Seconds())
		}
		r.Timeline = append(r.Timeline, ts)
	}
	for _, fd := range res.Findings {
		out := Finding{Rule: fd.Rule, Title: fd.Title, Severity: string(fd.Severity), Category: string(fd.Category),
			Confidence: round2(fd.Confidence), Message: fd.Message, Remedy: fd.Remedy,
			References: append([]string{}, fd.References...), Evidence: []Evidence{}}
		for _, e := range fd.Evidence {
			out.Evidence = append(out.Evidence, Evidence{File: e.Src.File, Line: e.Src.Line, Text: e.Text})
		}
		r.Findings = append(r.Findings, out)
	}
	for _, in := range res.Inconclusive {
		r.Inconclusive = append(r.Inconclusive, Inconclusive{Rule: in.Rule, Missing: append([]string{}, in.Missing...), Collect: in.Collect})
	}
	for _, ro := range res.RuledOut {
		out := RuledOut{Rule: ro.Rule, Category: string(ro.Category), Title: ro.Title, Why: ro.Why, Evidence: []Evidence{}}
		for _, e := range ro.Evidence {
			out.Evidence = append(out.Evidence, Evidence{File: e.Src.File, Line: e.Src.Line, Text: e.Text})
		}
		r.RuledOut = append(r.RuledOut, out)
	}
	sort.SliceStable(r.RuledOut, func(i, j int) bool { return r.RuledOut[i].Rule < r.RuledOut[j].Rule })
	return r
}

// snapshots lists the capture instants of ps, top, nvidia-smi and probe
// evidence, in time order (then file and line, so ties stay stable).
func snapshots(f *facts.Facts, stamp func(time.Time) string) []Snapshot {
	out := []Snapshot{}
	add := func(kind string, at time.Time, src facts.Source) {
		if !at.IsZero() {
			out = append(out, Snapshot{Kind: kind, At: stamp(at), File: src.File, Line: src.Line})
		}
	}
	for _, p := range f.Procs {
		kind := "ps"
		if p.Format == "top" {
			kind = "top"
		}
		add(kind, p.At, p.Src)
	}
	for _, g := range f.GPUs {
		add("nvidia-smi", g.At, g.Src)
	}
	for _, p := range f.Probes {
		add("probe", p.At, p.Src)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.At != b.At {
			return a.At < b.At
		}
		if a.File != b.File {
			return a.File < b.File
		}
		return a.Line < b.Line
	})
	return out
}

// stampOf writes an instant of the report (facts.Stamp): RFC 3339, UTC,
// in year 0000 when the bundle's year is unknown (the JSON contract,
// README).
func stampOf(t time.Time, noYear bool) string { return facts.Stamp(t, noYear) }

func round2(x float64) float64 {
	if x < 0 {
		return -round2(-x)
	}
	return float64(int64(x*100+0.5)) / 100
}
