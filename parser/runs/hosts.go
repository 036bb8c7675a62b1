package runs

import (
	"fmt"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/coroner-dev/coroner/parser/facts"
)

// nodes names the host of each log of a run that spans several logs, and
// lines the other nodes' clocks up with the first node's: by the completion
// of one NCCL communicator (its commId), which every rank logs at the same
// instant, else by the offsets a collect across the cluster measured, else
// by the end of torch.distributed's init. The offsets become assumptions,
// the other nodes' log times are shifted by them so that the run has one
// clock, and the process and GPU snapshots in a node's folder are tagged
// with its name.
func nodes(r *Run) {
	if len(r.Facts.Logs) < 2 {
		return
	}
	hosts := make([]string, len(r.Facts.Logs))
	node := make([]*facts.Node, len(r.Facts.Logs))
	distinct := map[string]bool{}
	for i, l := range r.Facts.Logs {
		// The collector's manifest says which node's folder a log is in;
		// else the log's own host tags say where it was written.
		if node[i] = nodeOf(r.Facts.Nodes, l.Path); node[i] != nil {
			hosts[i] = node[i].Name
		} else {
			hosts[i] = logHost(l)
		}
		distinct[hosts[i]] = true
	}
	if len(distinct) < 2 || distinct[""] {
		if !nodeFolders(r.Facts.Logs) {
			return
		}
		names := folderNames(r.Facts.Logs)
		for i := range r.Facts.Logs {
			if hosts[i] == "" {
				hosts[i] = names[i]
			}
		}
	}
	ref := r.Facts.Logs[0]
	ref.Host = hosts[0]
	for i, l := range r.Facts.Logs[1:] {
		l.Host = hosts[i+1]
		if l.Host == ref.Host {
			continue
		}
		// A communicator completes on every rank at one instant; the
		// collector's reading of each clock comes next (it may be hours
		// after the run); the end of torch.distributed's init last, as
		// each rank logs it after its own share of the setup.
		off, by, ok := clockOffset(ref, l, true)
		if !ok {
			off, by, ok = measuredOffset(node[0], node[i+1])
		}
		if !ok {
			off, by, ok = clockOffset(ref, l, false)
		}
		if !ok {
			r.Facts.Assumptions = append(r.Facts.Assumptions, fmt.Sprintf("the clocks of %s (%s) and %s (%s) could not be lined up: no event both logged; their times are compared as they are",
				ref.Host, ref.Path, l.Host, l.Path))
			continue
		}
		if off.Abs() < time.Second {
			continue
		}
		shifted := shift(l, -off)
		r.Facts.Logs[i+1] = shifted
		r.Facts.Assumptions = append(r.Facts.Assumptions, fmt.Sprintf("%s's clock (%s) runs %s %s %s's (%s), from %s; its times are shifted by that to line the nodes up",
			l.Host, l.Path, off.Abs().Round(time.Second/10), aheadBehind(off), ref.Host, ref.Path, by))
	}
	tagSnapshots(r.Facts, folders(r.Facts, hosts))
	r.Hosts = nil
	seen := map[string]bool{}
	for _, l := range r.Facts.Logs {
		if l.Host != "" && !seen[l.Host] {
			seen[l.Host] = true
			r.Hosts = append(r.Hosts, l.Host)
		}
	}
	sort.Strings(r.Hosts)
}

// folderNames names each log by the first folder of its path where the
// logs' paths part: gpu-a01 for gpu-a01/logs/server.log beside
// gpu-a02/logs/server.log.
func folderNames(logs []*facts.Log) []string {
	parts, common := partedDirs(logs)
	out := make([]string, len(logs))
	for i, p := range parts {
		if common < len(p) {
			out[i] = p[common]
		} else {
			out[i] = p[len(p)-1]
		}
	}
	return out
}

// partedDirs splits each log's folder into its components, and says how
// many leading ones all logs share.
func partedDirs(logs []*facts.Log) ([][]string, int) {
	parts := make([][]string, len(logs))
	common := 0
	for i, l := range logs {
		parts[i] = strings.Split(path.Dir(l.Path), "/")
		if i == 0 {
			common = len(parts[0])
			continue
		}
		n := 0
		for n < common && n < len(parts[i]) && parts[i][n] == parts[0][n] {
			n++
		}
		common = n
	}
	return parts, common
}

// folders maps each node's folder to its name: the manifest's node
// folders, and the folder a named log sits in below the logs' common
// folder (gpu-a01/ for gpu-a01/logs/server.log).
func folders(f *facts.Facts, hosts []string) map[string]string {
	out := map[string]string{}
	for _, n := range f.Nodes {
		if n.Dir != "" {
			out[n.Dir] = n.Name
		}
	}
	parts, common := partedDirs(f.Logs)
	for i, p := range parts {
		if common >= len(p) || p[0] == "." {
			continue // a log in the common folder names no node folder
		}
		dir := strings.Join(p[:common+1], "/")
		if _, ok := out[dir]; !ok && hosts[i] != "" {
			out[dir] = hosts[i]
		}
	}
	return out
}

// tagSnapshots names the node of each process and GPU snapshot taken in a
// node's folder, so that rules read each node's latest apart.
func tagSnapshots(f *facts.Facts, dirs map[string]string) {
	at := func(file string) string {
		best, host := "", ""
		for d, h := range dirs {
			if strings.HasPrefix(file, d+"/") && len(d) > len(best) {
				best, host = d, h
			}
		}
		return host
	}
	for _, s := range f.Procs {
		if s.Host == "" {
			s.Host = at(s.Src.File)
		}
	}
	for _, s := range f.GPUs {
		if s.Host == "" {
			s.Host = at(s.Src.File)
		}
	}
}

// nodeOf is the manifest's node whose folder holds the file at p.
func nodeOf(nodes []*facts.Node, p string) *facts.Node {
	var best *facts.Node
	for _, n := range nodes {
		if n.Dir != "" && strings.HasPrefix(p, n.Dir+"/") && (best == nil || len(n.Dir) > len(best.Dir)) {
			best = n
		}
	}
	return best
}

// measuredOffset is how far b's clock runs ahead of a's from the offsets
// the collector measured against its own clock when it gathered them.
func measuredOffset(a, b *facts.Node) (time.Duration, string, bool) {
	if a == nil || b == nil || !a.HasClock || !b.HasClock {
		return 0, "", false
	}
	return b.ClockOffset - a.ClockOffset, fmt.Sprintf("the clocks the collector read on each node (%s, %s)", a.Src, b.Src), true
}

// nodeFolders reports whether, without host tags, the logs' folders name
// the nodes of one job: each log sits in a folder of its own and holds
// ranks no other log holds. Logs of the same ranks are restarts or
// replicas, and the logs of one machine's processes (a router beside its
// server) carry no ranks: neither is a set of nodes.
func nodeFolders(logs []*facts.Log) bool {
	dirs := map[string]bool{}
	owner := map[string]int{}
	for i, l := range logs {
		d := path.Dir(l.Path)
		if d == "." || dirs[d] {
			return false
		}
		dirs[d] = true
		ranks := 0
		for _, p := range l.Procs {
			if p.Proc.Name == "" || p.Proc.Rank == facts.NoRank {
				continue
			}
			if j, ok := owner[p.Proc.Name]; ok && j != i {
				return false
			}
			owner[p.Proc.Name] = i
			ranks++
		}
		if ranks == 0 {
			return false
		}
	}
	return true
}

func aheadBehind(off time.Duration) string {
	if off > 0 {
		return "ahead of"
	}
	return "behind"
}

// logHost is the host the log's own lines name most: NCCL's host:pid:tid,
// Ray's ip=.
func logHost(l *facts.Log) string {
	count := map[string]int{}
	for _, e := range l.Events {
		// Only NCCL's prefix names the machine: a server's own "host"
		// argument is the address it listens on.
		nccl := e.Type == facts.EventNCCLInfo || e.Type == facts.EventNCCLWarn || e.Type == facts.EventNCCLError
		h := ""
		if d, ok := e.Data.(*facts.NCCL); ok {
			h = d.Host
		}
		if nccl && h != "" {
			count[h]++
		} else if e.Proc.Host != "" {
			count[e.Proc.Host]++
		}
	}
	best, n := "", 0
	for h, c := range count {
		if c > n || c == n && h < best {
			best, n = h, c
		}
	}
	return best
}

// clockOffset is how far b's clock runs ahead of a's, from events both
// logged at one instant, and which: a communicator's completion when comm,
// else the end of torch.distributed's init.
func clockOffset(a, b *facts.Log, comm bool) (time.Duration, string, bool) {
	first := func(l *facts.Log) map[string]*facts.LogEvent {
		out := map[string]*facts.LogEvent{}
		for _, e := range l.Events {
			if e.Time.IsZero() {
				continue
			}
			var key string
			switch {
			case e.Type == facts.EventNCCLInfo && ncclCommID(e) != "":
				key = "comm " + ncclCommID(e)
			case e.Type == facts.EventDistInitEnd:
				key = "dist-init-end"
			default:
				continue
			}
			if _, ok := out[key]; !ok {
				out[key] = e
			}
		}
		return out
	}
	ea, eb := first(a), first(b)
	keys := make([]string, 0, len(ea))
	for k := range ea {
		if _, ok := eb[k]; ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if (k != "dist-init-end") == comm {
			x, y := ea[k], eb[k]
			what := "the end of torch.distributed's init"
			if comm {
				what = "NCCL communicator " + k[len("comm "):] + " completing"
			}
			return y.Time.Sub(x.Time), fmt.Sprintf("%s (%s, %s)", what, x.Src, y.Src), true
		}
	}
	return 0, "", false
}

// shift returns a copy of a log with every time moved by d.
func shift(l *facts.Log, d time.Duration) *facts.Log {
	mv := func(t time.Time) time.Time {
		if t.IsZero() {
			return t
		}
		return t.Add(d)
	}
	out := *l
	out.FirstTime, out.LastTime = mv(l.FirstTime), mv(l.LastTime)
	evs := func(list []*facts.LogEvent) []*facts.LogEvent {
		res := make([]*facts.LogEvent, len(list))
		for i, e := range list {
			c := *e
			c.Time = mv(e.Time)
			res[i] = &c
		}
		return res
	}
	out.Events, out.Unmatched, out.Watched = evs(l.Events), evs(l.Unmatched), evs(l.Watched)
	out.Procs = make([]*facts.ProcLog, len(l.Procs))
	for i, p := range l.Procs {
		c := *p
		c.FirstTime, c.LastTime = mv(p.FirstTime), mv(p.LastTime)
		out.Procs[i] = &c
	}
	out.Bars = make([]*facts.ProgressBar, len(l.Bars))
	for i, b := range l.Bars {
		c := *b
		c.Time, c.Start = mv(b.Time), mv(b.Start)
		out.Bars[i] = &c
	}
	out.Gaps = make([]facts.Gap, len(l.Gaps))
	for i, g := range l.Gaps {
		g.Before = mv(g.Before)
		out.Gaps[i] = g
	}
	out.Series = make([]*facts.Series, len(l.Series))
	for i, s := range l.Series {
		c := *s
		c.Buckets = make([]*facts.Bucket, len(s.Buckets))
		for j, b := range s.Buckets {
			bc := *b
			bc.Start, bc.End = mv(b.Start), mv(b.End)
			c.Buckets[j] = &bc
		}
		if s.First != nil {
			f := *s.First
			f.Time = mv(f.Time)
			c.First = &f
		}
		if s.Last != nil {
			f := *s.Last
			f.Time = mv(f.Time)
			c.Last = &f
		}
		out.Series[i] = &c
	}
	return &out
}

// ncclCommID is the communicator an NCCL line names, "" for another line.
func ncclCommID(e *facts.LogEvent) string {
	if d, ok := e.Data.(*facts.NCCL); ok {
		return d.CommID
	}
	return ""
}
