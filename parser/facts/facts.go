// Package facts is the one model that parsers fill and rules read.
//
// Every fact cites where it came from with a Source (file in the bundle and
// line). Parsers know nothing of rules; rules know nothing of files. The
// container, Facts, is built per source by a parser and merged in a fixed
// order, so the same bundle always yields the same facts.
package facts

import (
	"fmt"
	"time"
)

// Source is the evidence location of a fact: the path of a file inside the
// bundle and a 1-based line number. Line 0 means the file as a whole.
type Source struct {
	File string `json:"file"`
	Line int    `json:"line"`
}

// String renders file:line, or the file alone when the line is unknown.
func (s Source) String() string {
	if s.Line <= 0 {
		return s.File
	}
	return fmt.Sprintf("%s:%d", s.File, s.Line)
}

// At returns the same file at another line.
func (s Source) At(line int) Source { return Source{File: s.File, Line: line} }

// Kind names an evidence kind (DESIGN §3). The string values are a contract:
// they appear in the JSON report.
type Kind string

// The evidence kinds of DESIGN §3, plus df, capture-time, cgroup-memory and
// system, which the
// README lists as this project's additions.
const (
	KindSGLangLog      Kind = "sglang-log"
	KindVLLMLog        Kind = "vllm-log"
	KindServerLog      Kind = "server-log"
	KindPS             Kind = "ps"
	KindTop            Kind = "top"
	KindNvidiaSMIQ     Kind = "nvidia-smi-q"
	KindNvidiaSMIXML   Kind = "nvidia-smi-xml"
	KindNvidiaSMICSV   Kind = "nvidia-smi-csv"
	KindNvidiaSMITable Kind = "nvidia-smi-table"
	KindNvidiaSMIDmon  Kind = "nvidia-smi-dmon"
	KindNvidiaSMIPmon  Kind = "nvidia-smi-pmon"
	KindNvidiaSMITopo  Kind = "nvidia-smi-topo"
	KindNvidiaSMIList  Kind = "nvidia-smi-list"
	KindKernelLog      Kind = "kernel-log"
	KindMeminfo        Kind = "meminfo"
	KindFree           Kind = "free"
	KindDF             Kind = "df"
	KindCollectEnv     Kind = "collect-env"
	KindCheckEnv       Kind = "check-env"
	KindEnv            Kind = "env"
	KindCmdline        Kind = "cmdline"
	KindProbe          Kind = "probe"
	KindPySpy          Kind = "py-spy"
	KindManifest       Kind = "manifest"
	KindCaptureTime    Kind = "capture-time"
	KindCgroupMemory   Kind = "cgroup-memory"
	KindSystem         Kind = "system"
	KindPipList        Kind = "pip-list"
	// An issue document (parser/issue): cut into blocks, each a source of
	// its own; the document itself yields no facts.
	KindMarkdown    Kind = "markdown"
	KindGitHubIssue Kind = "github-issue"
	KindGitHubEvent Kind = "github-event"
	KindUnknown     Kind = "unknown"
)

// AllKinds lists every kind, in the order of DESIGN §3.
var AllKinds = []Kind{
	KindSGLangLog, KindVLLMLog, KindServerLog, KindPS, KindTop,
	KindNvidiaSMIQ, KindNvidiaSMIXML, KindNvidiaSMICSV, KindNvidiaSMITable,
	KindNvidiaSMIDmon, KindNvidiaSMIPmon, KindNvidiaSMITopo, KindNvidiaSMIList,
	KindKernelLog, KindMeminfo, KindFree, KindDF, KindCollectEnv, KindCheckEnv,
	KindEnv, KindCmdline, KindProbe, KindPySpy, KindManifest, KindCaptureTime,
	KindCgroupMemory, KindSystem, KindPipList, KindMarkdown, KindGitHubIssue, KindGitHubEvent, KindUnknown,
}

// IsLog reports whether the kind is a server log.
func (k Kind) IsLog() bool {
	return k == KindSGLangLog || k == KindVLLMLog || k == KindServerLog
}

// IssueKind classifies a parse issue. The values appear in the JSON report.
type IssueKind string

// Parse issue kinds.
const (
	IssueLineTooLong    IssueKind = "line-too-long"
	IssueBinary         IssueKind = "binary"
	IssueNUL            IssueKind = "nul-bytes"
	IssueInvalidUTF8    IssueKind = "invalid-utf8"
	IssueTruncated      IssueKind = "truncated"
	IssueCorrupt        IssueKind = "corrupt"
	IssueUnsafePath     IssueKind = "unsafe-path"
	IssueLink           IssueKind = "link"
	IssueBomb           IssueKind = "decompression-bomb"
	IssueSizeLimit      IssueKind = "size-limit"
	IssueEntryLimit     IssueKind = "entry-limit"
	IssueNested         IssueKind = "nested-archive"
	IssueUnrecognized   IssueKind = "unrecognized"
	IssueMalformed      IssueKind = "malformed"
	IssueClockJump      IssueKind = "clock-jump"
	IssueIncomplete     IssueKind = "incomplete"
	IssueUnreadable     IssueKind = "unreadable"
	IssueDuplicateEntry IssueKind = "duplicate-entry"
	// IssueSummarized: a source held more records than are kept (processes,
	// GPUs, variables, probes, stack frames); the rest were counted.
	IssueSummarized IssueKind = "summarized"
)

// Issue is a parse issue: something in the input that could not be read as
// intended. Issues never stop the analysis of the rest of the bundle.
type Issue struct {
	Src    Source    `json:"-"`
	Kind   IssueKind `json:"kind"`
	Detail string    `json:"detail"`
}

// Error renders the issue as "file:line: kind: detail", the way a compiler
// would, so that it can be printed to stderr as is.
func (i Issue) Error() string {
	return fmt.Sprintf("%s: %s: %s", i.Src, i.Kind, i.Detail)
}

// SourceInfo describes one file of the bundle: where it is, what it holds and
// how well it could be read.
type SourceInfo struct {
	Path  string `json:"path"`
	Kind  Kind   `json:"kind"`
	Bytes int64  `json:"bytes"`
	Lines int    `json:"lines"`
	// Container says how the file was reached, e.g. "tar.zst > gzip".
	Container string `json:"container,omitempty"`
	// Part is set on a block cut out of an issue document.
	Part *Part `json:"part,omitempty"`
	// CapturedAt is when the file was captured, if any evidence says so.
	CapturedAt time.Time `json:"captured_at,omitzero"`
	// CapturedAtFrom names that evidence (a manifest, a captured_at.txt).
	CapturedAtFrom string `json:"captured_at_from,omitempty"`
	// Rotation is set on each piece of a rotated log.
	Rotation *Rotation `json:"rotation,omitempty"`
	Issues   []Issue   `json:"issues,omitempty"`
}

// Rotation places a file among the rotated pieces of one log: in a folder
// holding server.log.2, server.log.1 and server.log, they are pieces 1, 2
// and 3 of the log server.log, oldest first. Facts.Logs holds a rotated
// log's pieces next to each other in that order.
type Rotation struct {
	// Log is the log's path: the piece's folder and its name without the
	// rotation suffix. It need not be a file of the bundle.
	Log string `json:"log"`
	// Piece counts from 1, the oldest; Pieces is how many the bundle holds.
	Piece  int `json:"piece"`
	Pieces int `json:"pieces"`
	// Suffix is what the piece's name adds to the log's: ".1",
	// "-20240101", "" for the live file.
	Suffix string `json:"suffix,omitempty"`
}

// Part places a block of an issue document (a fence, a <details>, an
// unfenced log) in the document: the block's line n is line n+Offset of
// the document Doc of the file Of.
type Part struct {
	// Of is the source the block was cut out of.
	Of string `json:"of"`
	// Doc names the document in it: "" when the file is the document (a
	// markdown file), "body" or "comment N" in an issue's JSON.
	Doc    string `json:"doc,omitempty"`
	Offset int    `json:"offset"`
	// How the block was found: fence, pre, details or unfenced.
	How string `json:"how"`
}

// Clock says what a source's timestamps lack. Times that lack a zone are
// stored as wall-clock readings in UTC and shifted once the bundle's zone is
// known; times that lack a year are stored in year BaseYear(+n after a
// rollover) and moved once the year is known.
type Clock struct {
	NoZone bool
	NoYear bool
	// YearUnknown is set by the bundle's normalization on a NoYear source
	// whose year nothing gave (no manifest, capture stamp, dated file or
	// file time, no --year): its times stay in BaseYear, a placeholder no
	// output shows (YearUnknown, FormatTime).
	YearUnknown bool
	// Latest is the latest timestamp the source holds, before normalization.
	Latest time.Time
}

// BaseYear is the placeholder year of timestamps that carry none. It is a
// leap year so that Feb 29 survives until the real year is known.
const BaseYear = 2000

// Facts holds everything parsed from a bundle, or from one source of it.
type Facts struct {
	Sources []*SourceInfo
	// Clocks holds, per source path, what its timestamps lack.
	Clocks map[string]Clock

	Logs     []*Log
	Settings []*Setting
	Procs    []*ProcSnapshot
	GPUs     []*GPUSnapshot
	Topo     []*Topology
	GPUList  []*GPUListEntry
	Kernel   []*KernelEvent
	Memory   []*MemSnapshot
	Disks    []*DiskUsage
	Env      []*EnvVar
	Envs     []*EnvReport
	Cmds     []*Cmdline
	Probes   []*Probe
	Stacks   []*PyStack
	Runs     []*Artifact // the collector's manifest records
	Nodes    []*Node     // the nodes a collect across a cluster gathered from
	Capture  []*CaptureStamp
	Cgroups  []*CgroupMemory
	System   []*SystemInfo

	// Assumptions made while reading the bundle (time zone, year...).
	Assumptions []string
}

// AddIssue records a parse issue on the source it names.
func (f *Facts) AddIssue(src Source, kind IssueKind, format string, args ...any) {
	is := Issue{Src: src, Kind: kind, Detail: fmt.Sprintf(format, args...)}
	for _, s := range f.Sources {
		if s.Path == src.File {
			s.Issues = append(s.Issues, is)
			return
		}
	}
	f.Sources = append(f.Sources, &SourceInfo{Path: src.File, Kind: KindUnknown, Issues: []Issue{is}})
}

// Source returns the info of the source at path, or nil.
func (f *Facts) Source(path string) *SourceInfo {
	for _, s := range f.Sources {
		if s.Path == path {
			return s
		}
	}
	return nil
}

// Issues returns every parse issue of every source, in source order.
func (f *Facts) Issues() []Issue {
	var out []Issue
	for _, s := range f.Sources {
		out = append(out, s.Issues...)
	}
	return out
}

// SourcesOf returns the sources of the given kinds, in bundle order.
func (f *Facts) SourcesOf(kinds ...Kind) []*SourceInfo {
	var out []*SourceInfo
	for _, s := range f.Sources {
		for _, k := range kinds {
			if s.Kind == k {
				out = append(out, s)
				break
			}
		}
	}
	return out
}

// Node is one node of a collect across a cluster, as its manifest names
// it: its captures are under Dir.
type Node struct {
	Src  Source
	Name string
	Dir  string
	// Host is the machine (the Kubernetes or Slurm node, the Ray node's
	// address); Status "collected", "partial" or "failed", Error why.
	Host   string
	Status string
	Error  string
	// ClockOffset is the node's clock less the collector's, measured when
	// it was collected; HasClock says whether it was.
	ClockOffset time.Duration
	HasClock    bool
}

// CaptureStamp is an explicit capture time found in the bundle: a
// captured_at.txt, a `date` output, a manifest record. It applies to the
// files of its directory (Scope) unless a file-specific stamp exists.
type CaptureStamp struct {
	Src   Source
	At    time.Time
	Scope string // a directory in the bundle ("" for the root)
	// Zoned is true when the stamp states its zone (RFC 3339 with Z or offset).
	Zoned bool
}
