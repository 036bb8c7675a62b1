package derive

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/coroner-dev/coroner/parser/facts"
)

// Helpers the rules share. They answer questions of the facts that several
// rules ask, so that each rule file holds only its own reasoning.

// ProcSnapshots returns the process snapshots in time order (unknown times
// last, in bundle order).
func (idx *Index) ProcSnapshots() []*facts.ProcSnapshot {
	out := append([]*facts.ProcSnapshot(nil), idx.Facts.Procs...)
	sort.SliceStable(out, func(i, j int) bool { return atBefore(out[i].At, out[j].At) })
	return out
}

// atBefore orders snapshot times: known times first, in time order.
func atBefore(a, b time.Time) bool {
	if a.IsZero() != b.IsZero() {
		return !a.IsZero()
	}
	return a.Before(b)
}

// Rounds returns one process snapshot per capture time: a collector takes
// ps aux, ps auxf and ps -eo in the same second, and comparing those with
// each other would show no change. The richest file of each round stands
// for it.
func (idx *Index) Rounds() []*facts.ProcSnapshot {
	var out []*facts.ProcSnapshot
	// Rounds compare one machine's processes over time: of a bundle of
	// several nodes, the node LatestProcs stands on.
	host := ""
	if len(idx.snapshotHosts()) > 1 {
		if s := idx.LatestProcs(); s != nil {
			host = s.Host
		}
	}
	for _, s := range idx.ProcSnapshots() {
		if s.At.IsZero() || s.Host != host && host != "" {
			continue
		}
		if n := len(out); n > 0 && s.At.Sub(out[n-1].At) < 5*time.Second {
			if snapshotRichness(s) > snapshotRichness(out[n-1]) {
				out[n-1] = s
			}
			continue
		}
		out = append(out, s)
	}
	return out
}

// LatestProcs returns the latest process snapshot, preferring one with ppids
// when two were taken at the same time (ps -eo over ps aux), or nil.
//
// Of a bundle of several nodes, it is the latest of the first node (by
// name) whose latest still shows server processes, else the latest of all:
// the server is alive while any node runs it.
func (idx *Index) LatestProcs() *facts.ProcSnapshot {
	hosts := idx.snapshotHosts()
	if len(hosts) < 2 {
		return idx.latestProcsOf("", false)
	}
	named := idx.LogPIDs()
	for _, h := range hosts {
		if s := idx.latestProcsOf(h, true); len(serverProcs(s, named)) > 0 {
			return s
		}
	}
	return idx.latestProcsOf("", false)
}

// LatestProcsByHost returns the latest process snapshot of each node, in
// the order of their names; nil when the bundle holds one node's.
func (idx *Index) LatestProcsByHost() []*facts.ProcSnapshot {
	hosts := idx.snapshotHosts()
	if len(hosts) < 2 {
		return nil
	}
	out := make([]*facts.ProcSnapshot, 0, len(hosts))
	for _, h := range hosts {
		out = append(out, idx.latestProcsOf(h, true))
	}
	return out
}

// snapshotHosts are the nodes the process snapshots were taken on.
func (idx *Index) snapshotHosts() []string {
	var out []string
	for _, s := range idx.Facts.Procs {
		if s.Host != "" && !slices.Contains(out, s.Host) {
			out = append(out, s.Host)
		}
	}
	slices.Sort(out)
	return out
}

// latestProcsOf is the latest snapshot of one node (when only) or of all.
func (idx *Index) latestProcsOf(host string, only bool) *facts.ProcSnapshot {
	var best *facts.ProcSnapshot
	for _, s := range idx.ProcSnapshots() {
		if only && s.Host != host {
			continue
		}
		if best == nil {
			best = s
			continue
		}
		if s.At.After(best.At.Add(5 * time.Second)) {
			best = s
			continue
		}
		if !s.At.Before(best.At.Add(-5*time.Second)) && snapshotRichness(s) > snapshotRichness(best) {
			best = s
		}
	}
	return best
}

// snapshotRichness scores a snapshot by the columns of its first row
// (ppid, start time) and its size.
func snapshotRichness(s *facts.ProcSnapshot) int {
	n := 0
	if len(s.Procs) > 0 {
		p := s.Procs[0]
		if p.PPID > 0 {
			n += 2
		}
		if !p.Start.IsZero() {
			n++
		}
	}
	return n + len(s.Procs)/1000
}

// ServerProcs returns the inference-server processes of a snapshot.
func ServerProcs(s *facts.ProcSnapshot) []*facts.Process {
	return serverProcs(s, nil)
}

// serverProcs is ServerProcs with the pids the logs name as the server's
// (vLLM's process tags, NCCL's host:pid:tid, uvicorn's "Started server
// process"): ranks that are plain python, whatever their title. A pid
// counts when its process is a Python that had started by the time the log
// named it: a pid reused after a restart is another process.
func serverProcs(s *facts.ProcSnapshot, named map[int]time.Time) []*facts.Process {
	if s == nil {
		return nil
	}
	var out []*facts.Process
	for _, p := range s.Procs {
		if p.Defunct {
			continue
		}
		seen, ok := named[p.PID]
		same := ok && p.Role == facts.RolePython && (p.Start.IsZero() || seen.IsZero() || !p.Start.After(seen))
		if p.Role.IsServer() || same {
			out = append(out, p)
		}
	}
	return out
}

// LogPIDs are the pids the logs name as the server's processes, with when
// each was first named (zero when the line had no time).
func (idx *Index) LogPIDs() map[int]time.Time {
	out := map[int]time.Time{}
	add := func(pid int, t time.Time) {
		if pid <= 0 {
			return
		}
		if old, ok := out[pid]; !ok || (!t.IsZero() && (old.IsZero() || t.Before(old))) {
			out[pid] = t
		}
	}
	for _, l := range idx.Facts.Logs {
		for _, pl := range l.Procs {
			add(pl.Proc.PID, pl.FirstTime)
		}
		for _, e := range l.Events {
			switch e.Type {
			case facts.EventNCCLInfo, facts.EventNCCLVersion, facts.EventNCCLWarn, facts.EventNCCLError, facts.EventHTTPStart:
				var pid facts.Num
				switch d := e.Data.(type) {
				case *facts.NCCL:
					pid = d.PID
				case *facts.Server:
					pid = d.PID
				}
				if v, ok := pid.Get(); ok {
					add(int(v), e.Time)
				}
			}
		}
	}
	return out
}

// Workers returns the server processes that do the GPU work: SGLang
// schedulers, vLLM engine cores and workers; else every server process.
func Workers(s *facts.ProcSnapshot) []*facts.Process {
	var out []*facts.Process
	for _, p := range ServerProcs(s) {
		switch p.Role {
		case facts.RoleSGLangScheduler, facts.RoleVLLMWorker, facts.RoleVLLMEngineCore:
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return ServerProcs(s)
	}
	return out
}

// SameProcess finds p in another snapshot: the row of its pid when it is
// the same process (facts.SameProcess), not a reused pid.
func SameProcess(s *facts.ProcSnapshot, p *facts.Process) *facts.Process {
	if q := s.ByPID(p.PID); q != nil && facts.SameProcess(p, q) {
		return q
	}
	return nil
}

// GPUSnapshots returns the GPU snapshots in time order.
func (idx *Index) GPUSnapshots() []*facts.GPUSnapshot {
	out := append([]*facts.GPUSnapshot(nil), idx.Facts.GPUs...)
	sort.SliceStable(out, func(i, j int) bool { return atBefore(out[i].At, out[j].At) })
	return out
}

// LatestGPUs returns the latest GPU snapshot that holds utilization, or nil;
// of a bundle of several nodes, the latest of the node LatestProcs stands
// on when it has one.
func (idx *Index) LatestGPUs() *facts.GPUSnapshot {
	if ps := idx.LatestProcs(); ps != nil && ps.Host != "" {
		if g := idx.latestGPUsOf(ps.Host, true); g != nil {
			return g
		}
	}
	return idx.latestGPUsOf("", false)
}

// LatestGPUsByHost returns the latest GPU snapshot of each node that has
// one, in the order of their names; nil when the bundle holds one node's.
func (idx *Index) LatestGPUsByHost() []*facts.GPUSnapshot {
	var hosts []string
	for _, s := range idx.Facts.GPUs {
		if s.Host != "" && !slices.Contains(hosts, s.Host) {
			hosts = append(hosts, s.Host)
		}
	}
	if len(hosts) < 2 {
		return nil
	}
	slices.Sort(hosts)
	var out []*facts.GPUSnapshot
	for _, h := range hosts {
		if g := idx.latestGPUsOf(h, true); g != nil {
			out = append(out, g)
		}
	}
	return out
}

func (idx *Index) latestGPUsOf(host string, only bool) *facts.GPUSnapshot {
	var best *facts.GPUSnapshot
	for _, s := range idx.GPUSnapshots() {
		if only && s.Host != host {
			continue
		}
		has := false
		for _, g := range s.GPUs {
			has = has || g.UtilGPU.OK || g.MemUsedMiB.OK
		}
		if has {
			best = s
		}
	}
	return best
}

// GPUInfo is one GPU as all snapshots together describe it.
type GPUInfo struct {
	Host    string // the node, in a bundle of several
	Index   int
	BusID   string
	Name    string
	Arch    string
	CC      string
	CCFrom  string
	Src     facts.Source // where the name was read
	MemMiB  float64
	Drivers string
}

// Inventory is the bundle's GPUs: every snapshot's, merged by bus id or
// index, else those `nvidia-smi -L` and environment reports name. Computed
// once; the rules, the pack view, the report's environment and diff read
// it. Callers must not modify it.
func (idx *Index) Inventory() []GPUInfo { return idx.gpus }

// Versions is what versionsOf picks from the software readings, once; the
// signature and driver rules read it. Callers must not modify it.
func (idx *Index) Versions() map[string]Running { return idx.versions }

func inventory(f *facts.Facts) []GPUInfo {
	var out []GPUInfo
	// Nodes of one model have the same bus ids: a GPU is one node's.
	find := func(host string, g *facts.GPU) *GPUInfo {
		for i := range out {
			o := &out[i]
			if o.Host == host && ((g.BusID != "" && o.BusID == g.BusID) || (g.BusID == "" && g.Index >= 0 && o.Index == g.Index)) {
				return o
			}
		}
		return nil
	}
	for _, s := range f.GPUs {
		for _, g := range s.GPUs {
			o := find(s.Host, g)
			if o == nil {
				out = append(out, GPUInfo{Index: g.Index, BusID: g.BusID, Host: s.Host})
				o = &out[len(out)-1]
			}
			if o.Name == "" && g.Name != "" {
				o.Name, o.Src = g.Name, g.Src
			}
			if o.Index < 0 && g.Index >= 0 {
				o.Index = g.Index
			}
			if (o.CC == "" || o.CCFrom == "name") && g.CC != "" {
				o.CC, o.CCFrom = g.CC, g.CCFrom
			}
			if o.Arch == "" {
				o.Arch = g.Arch
			}
			if g.MemTotalMiB.OK {
				o.MemMiB = g.MemTotalMiB.V
			}
			if s.Driver != "" {
				o.Drivers = s.Driver
			}
		}
	}
	if len(out) == 0 {
		// nvidia-smi -L, and the GPU lines of environment reports: one GPU
		// per index, the first source naming it.
		byIndex := map[int]int{}
		for _, e := range f.GPUList {
			if i, ok := byIndex[e.Index]; ok {
				if out[i].CC == "" && e.CC != "" {
					out[i].CC, out[i].Arch = e.CC, e.Arch
				}
				continue
			}
			byIndex[e.Index] = len(out)
			out = append(out, GPUInfo{Index: e.Index, Name: e.Name, Src: e.Src, Arch: e.Arch, CC: e.CC, CCFrom: "name"})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Index < out[j].Index })
	return out
}

// Setting returns the first setting with one of the keys, preferring what
// the engine logged it used (server-args, non-default-args) over the launch
// command.
func (idx *Index) Setting(keys ...string) (*facts.Setting, bool) {
	for _, from := range []string{"server-args", "non-default-args", "cmdline", ""} {
		for _, s := range idx.Facts.Settings {
			if from != "" && s.From != from {
				continue
			}
			for _, k := range keys {
				if s.Key == k {
					return s, true
				}
			}
		}
	}
	return nil, false
}

// Settings returns every setting with one of the keys.
func (idx *Index) Settings(keys ...string) []*facts.Setting {
	var out []*facts.Setting
	for _, s := range idx.Facts.Settings {
		for _, k := range keys {
			if s.Key == k {
				out = append(out, s)
				break
			}
		}
	}
	return out
}

// Env returns the value of an environment variable from any source.
func (idx *Index) Env(name string) (*facts.EnvVar, bool) {
	for _, e := range idx.Facts.Env {
		if e.Name == name {
			return e, true
		}
	}
	return nil, false
}

// Engine is the engine the logs or the launch command name.
func (idx *Index) Engine() facts.Engine {
	for _, l := range idx.Facts.Logs {
		if l.Engine != facts.EngineUnknown {
			return l.Engine
		}
	}
	for _, c := range idx.Facts.Cmds {
		if c.Engine != facts.EngineUnknown {
			return c.Engine
		}
	}
	for _, s := range idx.Facts.Procs {
		for _, p := range s.Procs {
			switch {
			case strings.HasPrefix(string(p.Role), "sglang"):
				return facts.EngineSGLang
			case strings.HasPrefix(string(p.Role), "vllm"):
				return facts.EngineVLLM
			}
		}
	}
	return facts.EngineUnknown
}

// LogActivity is the last sign of life of a log: its last stamped line, or
// later, the estimated end of a progress bar that ran after it (a bar's
// elapsed time counts from its first state).
type LogActivity struct {
	Time time.Time
	Src  facts.Source
	Text string
}

// LastActivity returns the last sign of life of a log.
func LastActivity(l *facts.Log) LogActivity {
	a := LogActivity{Time: l.LastTime, Src: l.LastSrc}
	for _, pl := range l.Procs {
		if pl.LastTime.Equal(l.LastTime) && pl.LastSrc.Line > 0 {
			a.Src, a.Text = pl.LastSrc, pl.LastMsg
		}
	}
	for _, b := range l.Bars {
		if b.Time.IsZero() {
			continue
		}
		if end := barEnd(b); end.After(a.Time) {
			a = LogActivity{Time: end, Src: b.Src, Text: BarText(b)}
		}
	}
	return a
}

func BarText(b *facts.ProgressBar) string {
	s := b.Desc
	if b.Detail != "" {
		s += " (" + b.Detail + ")"
	}
	return fmt.Sprintf("%s: %d/%d [%s elapsed]", s, b.N, b.Total, facts.Duration(time.Duration(b.Elapsed*float64(time.Second))))
}

// MainLog returns the server log with the most lines, or nil.
func (idx *Index) MainLog() *facts.Log {
	var best *facts.Log
	for _, l := range idx.Facts.Logs {
		if best == nil || l.Lines > best.Lines || (best.Engine == facts.EngineUnknown && l.Engine != facts.EngineUnknown) {
			best = l
		}
	}
	return best
}

// Lines counts the lines of all server logs.
func (idx *Index) Lines() int {
	n := 0
	for _, l := range idx.Facts.Logs {
		n += l.Lines
	}
	return n
}

// FirstEvent returns the first event of the given types in any log.
func (idx *Index) FirstEvent(types ...facts.EventType) *facts.LogEvent {
	for _, l := range idx.Facts.Logs {
		if es := l.EventsOf(types...); len(es) > 0 {
			return es[0]
		}
	}
	return nil
}

// Events returns every event of the given types across logs, in log order.
func (idx *Index) Events(types ...facts.EventType) []*facts.LogEvent {
	var out []*facts.LogEvent
	for _, l := range idx.Facts.Logs {
		out = append(out, l.EventsOf(types...)...)
	}
	return out
}

// Evidence is one cited piece of evidence.
type Evidence struct {
	Src facts.Source `json:"src"`
	// Text is the evidence as it reads (a log line, a ps row, a field = value).
	Text string `json:"text"`
}

// Ev cites a log event.
func Ev(e *facts.LogEvent) Evidence {
	return Evidence{Src: e.Src, Text: e.Msg}
}

// EvProc cites a process row.
func EvProc(p *facts.Process) Evidence {
	title := p.Args
	if title == "" {
		title = p.Comm
	}
	if len(title) > 160 {
		title = title[:160] + "..."
	}
	return Evidence{Src: p.Src, Text: fmt.Sprintf("pid %d ppid %d %s cpu %s rss %s: %s", p.PID, p.PPID, p.Stat,
		FormatCPU(p.CPUTime), FormatKB(p.RSSKB), title)}
}

func FormatCPU(d time.Duration) string {
	m := int(d / time.Minute)
	s := int(d%time.Minute) / int(time.Second)
	return fmt.Sprintf("%d:%02d", m, s)
}

func FormatKB(kb int64) string {
	switch {
	case kb >= 1<<20:
		return fmt.Sprintf("%.1f GiB", float64(kb)/(1<<20))
	case kb >= 1<<10:
		return fmt.Sprintf("%.0f MiB", float64(kb)/(1<<10))
	}
	return fmt.Sprintf("%d KiB", kb)
}
