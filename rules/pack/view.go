package pack

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/rules"
)

// View is what the expressions of a pack rule (`when`, `{{ }}` in
// `message`) see: a small, typed digest of the facts and the derived index.
// It is compiled against at load time, so that a misspelt name or a type
// error is a load error with its position, not a surprise in the field.
// The names are the contract users write against; Reference documents them.
type View struct {
	Engine   string            `expr:"engine"`
	Version  string            `expr:"version"`
	Settings map[string]string `expr:"settings"`
	Env      map[string]string `expr:"env"`
	Versions map[string]string `expr:"versions"`
	Kinds    map[string]int    `expr:"kinds"`
	GPUs     []GPU             `expr:"gpus"`
	Procs    []Proc            `expr:"procs"`
	Disks    []Disk            `expr:"disks"`
	Memory   Memory            `expr:"memory"`
	Topology Topology          `expr:"topology"`
	State    State             `expr:"state"`
	Log      Log               `expr:"log"`
	// Event is the matched event and Matches how many events matched, in
	// a rule with `match`; zero otherwise (the loader rejects them there).
	Event   Event `expr:"event"`
	Matches int   `expr:"matches"`

	// Where each keyed value was read, for the evidence of a finding.
	settingSrc map[string]rules.Evidence
	envSrc     map[string]rules.Evidence
	versionSrc map[string]rules.Evidence
	gpuSrc     rules.Evidence
	procSrc    rules.Evidence
	stateSrc   rules.Evidence
	logSrc     rules.Evidence
	memSrc     rules.Evidence
	topoSrc    rules.Evidence
	idx        *rules.Index
	// eventsOf caches events(...) by its arguments: a rule with match
	// evaluates its when once per matched event.
	eventsOf map[string][]Event
	// noFields leaves the events' fields out, for a rule whose
	// expressions never see them (seesFields): every event of a bundle
	// can be built, and its fields are what that costs most.
	noFields bool
}

// GPU is one GPU: what every nvidia-smi format together says of it, with
// the utilization and memory of the latest snapshot. Unknown numbers are -1.
type GPU struct {
	Index       int     `expr:"index"`
	Name        string  `expr:"name"`
	CC          string  `expr:"cc"`
	Util        float64 `expr:"util"`
	MemUsedMiB  float64 `expr:"mem_used_mib"`
	MemTotalMiB float64 `expr:"mem_total_mib"`
	File        string  `expr:"file"`
	Line        int     `expr:"line"`
}

// Proc is one process of the latest process snapshot.
type Proc struct {
	PID    int     `expr:"pid"`
	PPID   int     `expr:"ppid"`
	Role   string  `expr:"role"`
	State  string  `expr:"state"`
	CPUS   float64 `expr:"cpu_s"`
	CPUPct float64 `expr:"cpu_pct"`
	RSSMiB float64 `expr:"rss_mib"`
	Comm   string  `expr:"comm"`
	Args   string  `expr:"args"`
	Server bool    `expr:"server"`
	File   string  `expr:"file"`
	Line   int     `expr:"line"`

	fact *facts.Process
}

// Disk is one file system of a df capture.
type Disk struct {
	Mount    string  `expr:"mount"`
	FS       string  `expr:"fs"`
	Type     string  `expr:"type"`
	SizeGiB  float64 `expr:"size_gib"`
	AvailGiB float64 `expr:"avail_gib"`
	UsedPct  float64 `expr:"used_pct"`
	File     string  `expr:"file"`
	Line     int     `expr:"line"`
}

// Memory is the host's memory from the latest /proc/meminfo or free
// capture. Unknown numbers are -1.
type Memory struct {
	TotalGiB     float64 `expr:"total_gib"`
	AvailableGiB float64 `expr:"available_gib"`
	File         string  `expr:"file"`
	Line         int     `expr:"line"`
}

// Topology is the GPU interconnect from `nvidia-smi topo -m`: whether any
// two GPUs share NVLink, and the kinds of link between distinct GPUs (NV18,
// PIX, PXB, PHB, NODE, SYS), sorted.
type Topology struct {
	NVLink bool     `expr:"nvlink"`
	Links  []string `expr:"links"`
	File   string   `expr:"file"`
	Line   int      `expr:"line"`
}

// State is the run's condition before any reasoning about causes.
type State struct {
	Ready        bool    `expr:"ready"`
	Failed       bool    `expr:"failed"`
	Alive        bool    `expr:"alive"`
	Shutdown     bool    `expr:"shutdown"`
	Workers      int     `expr:"workers"`
	SilenceS     float64 `expr:"silence_s"`
	Phase        string  `expr:"phase"`
	ProbesOK     int     `expr:"probes_ok"`
	ProbesFailed int     `expr:"probes_failed"`
}

// Log sums up the server logs.
type Log struct {
	Lines  int    `expr:"lines"`
	Path   string `expr:"path"`
	Events int    `expr:"events"`
}

// Event is one recognized log event.
type Event struct {
	Type   string         `expr:"type"`
	Msg    string         `expr:"msg"`
	Level  string         `expr:"level"`
	Proc   string         `expr:"proc"`
	Time   string         `expr:"time"`
	Fields map[string]any `expr:"fields"`
	Exc    string         `expr:"exc_type"`
	ExcMsg string         `expr:"exc_msg"`
	File   string         `expr:"file"`
	Line   int            `expr:"line"`
	// Library owns the innermost frames of its traceback (frames.yaml's
	// libraries: flashinfer, triton, nccl ...); Phase is where a failure
	// was placed (by its frames, its message, the milestones); Frames are
	// its traceback's functions, outermost first.
	Library string   `expr:"library"`
	Phase   string   `expr:"phase"`
	Frames  []string `expr:"frames"`

	fact *facts.LogEvent
}

// settingOrder is the precedence of settings: what the engine logged it
// used wins over the launch command (the same order as Index.Setting).
var settingOrder = []string{"server-args", "non-default-args", "cmdline"}

func newView(idx *rules.Index) *View {
	f := idx.Facts
	v := &View{
		Engine:     string(idx.Engine()),
		Settings:   map[string]string{},
		Env:        map[string]string{},
		Versions:   map[string]string{},
		Kinds:      map[string]int{},
		GPUs:       []GPU{},
		Procs:      []Proc{},
		Disks:      []Disk{},
		Memory:     Memory{TotalGiB: -1, AvailableGiB: -1},
		Topology:   Topology{Links: []string{}},
		settingSrc: map[string]rules.Evidence{},
		envSrc:     map[string]rules.Evidence{},
		versionSrc: map[string]rules.Evidence{},
		idx:        idx,
	}
	for k, n := range idx.Kinds {
		v.Kinds[string(k)] = n
	}
	rank := func(from string) int {
		for i, o := range settingOrder {
			if o == from {
				return i
			}
		}
		return len(settingOrder)
	}
	best := map[string]int{}
	for _, s := range f.Settings {
		r := rank(s.From)
		if b, ok := best[s.Key]; ok && b <= r {
			continue
		}
		best[s.Key] = r
		v.Settings[s.Key] = s.Value
		v.settingSrc[s.Key] = rules.Evidence{Src: s.Src, Text: fmt.Sprintf("%s = %s (%s)", s.Key, s.Value, s.From)}
	}
	for _, e := range f.Env {
		if _, ok := v.Env[e.Name]; ok {
			continue
		}
		v.Env[e.Name] = e.Value
		v.envSrc[e.Name] = rules.Evidence{Src: e.Src, Text: e.Name + "=" + e.Value}
	}
	for _, r := range f.Envs {
		keys := make([]string, 0, len(r.Versions))
		for k := range r.Versions {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if _, ok := v.Versions[k]; ok {
				continue
			}
			v.Versions[k] = r.Versions[k]
			src, ok := r.Where[k]
			if !ok {
				src = r.Src
			}
			v.versionSrc[k] = rules.Evidence{Src: src, Text: k + " " + r.Versions[k]}
		}
	}
	if l := idx.MainLog(); l != nil {
		v.Version = l.Version
		v.Log.Path = l.Path
		v.logSrc = rules.Evidence{Src: l.LastSrc, Text: fmt.Sprintf("%s: %d lines", l.Path, l.Lines)}
	}
	for _, l := range f.Logs {
		v.Log.Lines += l.Lines
		v.Log.Events += len(l.Events)
	}
	v.gpus()
	v.procs()
	for _, d := range f.Disks {
		dk := Disk{Mount: d.Mount, FS: d.Filesystem, Type: d.Type, SizeGiB: gib(d.SizeKB), AvailGiB: gib(d.AvailKB),
			File: d.Src.File, Line: d.Src.Line}
		if d.SizeKB > 0 {
			dk.UsedPct = 100 * float64(d.UsedKB) / float64(d.SizeKB)
		}
		v.Disks = append(v.Disks, dk)
	}
	v.memory()
	v.topology()
	st := &idx.State
	v.State = State{
		Ready: st.Ready != nil, Failed: st.Failed(), Alive: len(st.Alive) > 0, Shutdown: st.Shutdown != nil,
		Workers: len(st.Workers), SilenceS: st.Silence.Seconds(), Phase: string(idx.RunPhase()),
		ProbesOK: len(st.ProbesOK), ProbesFailed: len(st.ProbesFailed),
	}
	switch {
	case st.Ready != nil:
		v.stateSrc = rules.Ev(st.Ready)
	case len(st.Failures) > 0:
		v.stateSrc = rules.Ev(st.Failures[0])
	case st.LastLog != nil:
		v.stateSrc = rules.Evidence{Src: st.Last.Src, Text: "last sign of life: " + st.Last.Text}
	}
	return v
}

func gib(kb int64) float64 { return float64(kb) / (1 << 20) }

func (v *View) gpus() {
	latest := v.idx.LatestGPUs()
	for _, g := range v.idx.Inventory() {
		out := GPU{Index: g.Index, Name: g.Name, CC: g.CC, Util: -1, MemUsedMiB: -1, MemTotalMiB: -1,
			File: g.Src.File, Line: g.Src.Line}
		if g.MemMiB > 0 {
			out.MemTotalMiB = g.MemMiB
		}
		if latest != nil {
			for _, s := range latest.GPUs {
				if (g.BusID != "" && s.BusID == g.BusID) || (g.BusID == "" && s.Index == g.Index) {
					if s.UtilGPU.OK {
						out.Util = s.UtilGPU.V
					}
					if s.MemUsedMiB.OK {
						out.MemUsedMiB = s.MemUsedMiB.V
					}
					if s.MemTotalMiB.OK {
						out.MemTotalMiB = s.MemTotalMiB.V
					}
					if out.File == "" {
						out.File, out.Line = s.Src.File, s.Src.Line
					}
					break
				}
			}
		}
		v.GPUs = append(v.GPUs, out)
	}
	if latest != nil {
		v.gpuSrc = rules.Evidence{Src: latest.Src, Text: fmt.Sprintf("nvidia-smi snapshot of %d GPU(s)", len(latest.GPUs))}
	} else if len(v.GPUs) > 0 {
		g := v.GPUs[0]
		v.gpuSrc = rules.Evidence{Src: facts.Source{File: g.File, Line: g.Line}, Text: fmt.Sprintf("GPU %d: %s", g.Index, g.Name)}
	}
}

func (v *View) memory() {
	mems := v.idx.Facts.Memory
	if len(mems) == 0 {
		return
	}
	m := mems[len(mems)-1]
	for _, x := range mems {
		if x.At.After(m.At) {
			m = x
		}
	}
	var text []string
	if m.TotalKB.OK {
		v.Memory.TotalGiB = gib(int64(m.TotalKB.V))
		text = append(text, fmt.Sprintf("total %.1f GiB", v.Memory.TotalGiB))
	}
	if m.AvailKB.OK {
		v.Memory.AvailableGiB = gib(int64(m.AvailKB.V))
		text = append(text, fmt.Sprintf("available %.1f GiB", v.Memory.AvailableGiB))
	}
	v.Memory.File, v.Memory.Line = m.Src.File, m.Src.Line
	v.memSrc = rules.Evidence{Src: m.Src, Text: "host memory: " + strings.Join(text, ", ")}
}

func (v *View) topology() {
	topos := v.idx.Facts.Topo
	if len(topos) == 0 {
		return
	}
	t := topos[len(topos)-1]
	seen := map[string]bool{}
	for i, row := range t.Links {
		for j, l := range row {
			if i != j && l != "" && l != "X" && !seen[l] {
				seen[l] = true
				v.Topology.Links = append(v.Topology.Links, l)
			}
		}
	}
	sort.Strings(v.Topology.Links)
	v.Topology.NVLink = t.NVLinked()
	v.Topology.File, v.Topology.Line = t.Src.File, t.Src.Line
	v.topoSrc = rules.Evidence{Src: t.Src, Text: fmt.Sprintf("GPU topology of %d GPU(s): %s", len(t.GPUs), strings.Join(v.Topology.Links, ", "))}
}

func (v *View) procs() {
	s := v.idx.LatestProcs()
	if s == nil {
		return
	}
	v.procSrc = rules.Evidence{Src: s.Src, Text: fmt.Sprintf("process snapshot of %d process(es)", len(s.Procs))}
	for _, p := range s.Procs {
		state := ""
		if p.State != 0 {
			state = string(p.State)
		}
		v.Procs = append(v.Procs, Proc{
			PID: p.PID, PPID: p.PPID, Role: string(p.Role), State: state, CPUS: p.CPUTime.Seconds(),
			CPUPct: p.CPUPct, RSSMiB: float64(p.RSSKB) / 1024, Comm: p.Comm, Args: p.Args,
			Server: p.Role.IsServer() && !p.Defunct, File: p.Src.File, Line: p.Src.Line, fact: p,
		})
	}
}

// event is the view of one log event.
func (v *View) event(e *facts.LogEvent) Event {
	return newEvent(v.idx, e, !v.noFields)
}

// newEvent is the view of one log event; its Fields only when fields is
// set.
func newEvent(idx *rules.Index, e *facts.LogEvent, fields bool) Event {
	out := Event{Type: string(e.Type), Msg: e.Msg, Level: string(e.Level), Proc: e.Proc.Key(),
		File: e.Src.File, Line: e.Src.Line, fact: e, Frames: []string{}}
	if fields {
		out.Fields = facts.Fields(e.Data)
	}
	if tb := e.Traceback; tb != nil && idx != nil {
		if lib, _, ok := idx.Frames.InnermostLibrary(tb); ok {
			out.Library = lib
		}
		for _, f := range tb.Frames {
			out.Frames = append(out.Frames, f.Func)
		}
	}
	if idx != nil && isFailure(idx, e) {
		if l := logOf(idx, e); l != nil {
			out.Phase = string(idx.PlaceFailure(l, e).Phase)
		}
	}
	if !e.Time.IsZero() {
		out.Time = e.Time.UTC().Format(time.RFC3339)
	}
	if tb := e.Traceback; tb != nil {
		out.Exc, out.ExcMsg = tb.ExcType, tb.ExcMsg
	} else if d, ok := e.Data.(*facts.Failure); ok && d.ExcType != "" {
		out.Exc = d.ExcType
	}
	return out
}

// events is the `events(type, ...)` function: the events of the given
// types across logs, in log order; every event when no type is given.
func (v *View) events(types ...string) []Event {
	key := strings.Join(types, "\x00")
	if out, ok := v.eventsOf[key]; ok {
		return out
	}
	if v.eventsOf == nil {
		v.eventsOf = map[string][]Event{}
	}
	var out []Event
	for _, l := range v.idx.Facts.Logs {
		for _, e := range l.Events {
			if len(types) > 0 && !containsStr(types, string(e.Type)) {
				continue
			}
			out = append(out, v.event(e))
		}
	}
	if out == nil {
		out = []Event{}
	}
	v.eventsOf[key] = out
	return out
}

func containsStr(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// cite returns the evidence for one item of a collection the view holds.
func cite(item any) (rules.Evidence, bool) {
	switch x := item.(type) {
	case Proc:
		if x.fact != nil {
			return rules.EvProc(x.fact), true
		}
	case Event:
		if x.fact != nil {
			return rules.Ev(x.fact), true
		}
	case GPU:
		text := fmt.Sprintf("GPU %d: %s", x.Index, x.Name)
		if x.Util >= 0 {
			text += fmt.Sprintf(", util %.0f%%", x.Util)
		}
		if x.MemUsedMiB >= 0 && x.MemTotalMiB > 0 {
			text += fmt.Sprintf(", memory %.0f of %.0f MiB", x.MemUsedMiB, x.MemTotalMiB)
		}
		return rules.Evidence{Src: facts.Source{File: x.File, Line: x.Line}, Text: text}, x.File != ""
	case Disk:
		return rules.Evidence{Src: facts.Source{File: x.File, Line: x.Line},
			Text: fmt.Sprintf("%s on %s: %.1f GiB free of %.1f GiB", x.FS, x.Mount, x.AvailGiB, x.SizeGiB)}, x.File != ""
	}
	return rules.Evidence{}, false
}

// isFailure reports an event the index counts among the run's failures.
func isFailure(idx *rules.Index, e *facts.LogEvent) bool {
	for _, f := range idx.State.Failures {
		if f == e {
			return true
		}
	}
	return false
}

// logOf returns the log that holds the event.
func logOf(idx *rules.Index, e *facts.LogEvent) *facts.Log {
	for _, l := range idx.Facts.Logs {
		if e.Src.File != l.Path {
			continue
		}
		return l
	}
	return nil
}
