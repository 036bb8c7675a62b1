package rules

import (
	"fmt"
	"sort"
	"time"

	"github.com/coroner-dev/coroner/parser/facts"
)

func init() { Register(nodeLostRule) }

var nodeLostRule = &Rule{
	ID:       "node-lost",
	Title:    "a node of a multi-node run stopped before the others",
	Severity: SeverityError,
	Category: CatCollectiveHang,
	Needs:    []facts.Kind{facts.KindSGLangLog, facts.KindVLLMLog, facts.KindServerLog},
	Doc: `A server that spans several nodes (SGLang --nnodes, vLLM over Ray,
disaggregated prefill and decode) has a log per node; parser/runs names each
log's node and lines the nodes' clocks up. When one node's log stops while
the others' go on, without a shutdown or an error of its own, that node
stopped taking part: its processes died with the machine, were killed, or
hang; the other nodes' ranks then wait for it in their next collective,
until a watchdog gives up or forever.

The rule names the node that went silent first, when it stopped at least a
minute before the latest other node, and cites what the others logged after
(the timeout, the failure).`,
	References: []string{
		"https://docs.sglang.ai/references/multi_node_deployment/multi_node.html",
		"https://docs.vllm.ai/en/latest/serving/parallelism_scaling.html",
	},
	Run: runNodeLost,
}

// nodeSilence is how much earlier than the others a node must stop.
const nodeSilence = time.Minute

type lostNode struct {
	host     string
	last     time.Time
	src      facts.Source
	text     string
	finished bool // it shut down or failed on its own
}

func runNodeLost(p *Pass) {
	idx := p.Index
	byHost := map[string]*lostNode{}
	for _, l := range idx.Facts.Logs {
		if l.Host == "" {
			continue
		}
		n := byHost[l.Host]
		if n == nil {
			n = &lostNode{host: l.Host}
			byHost[l.Host] = n
		}
		if l.LastTime.After(n.last) {
			n.last = l.LastTime
			act := LastActivity(l)
			n.src, n.text = act.Src, act.Text
		}
		for _, e := range l.Events {
			if e.Type == facts.EventShutdown || isFailure(idx, e) {
				n.finished = true
			}
		}
	}
	if len(byHost) < 2 {
		return
	}
	// A node whose server processes are gone while another's still run.
	for _, s := range idx.State.NodesDown {
		if n := byHost[s.Host]; n != nil && !n.finished {
			reportGone(p, n, s)
			return
		}
	}
	hosts := make([]*lostNode, 0, len(byHost))
	for _, n := range byHost {
		hosts = append(hosts, n)
	}
	sort.Slice(hosts, func(i, j int) bool {
		if !hosts[i].last.Equal(hosts[j].last) {
			return hosts[i].last.Before(hosts[j].last)
		}
		return hosts[i].host < hosts[j].host
	})
	first, latest := hosts[0], hosts[len(hosts)-1]
	if first.last.IsZero() || first.finished || latest.last.Sub(first.last) < nodeSilence {
		return
	}
	ev := []Evidence{{Src: first.src, Text: first.host + "'s last line: " + trimText(first.text, 160)}}
	after := ""
	for _, e := range idx.State.Failures {
		if !e.Time.IsZero() && e.Time.After(first.last) {
			ev = append(ev, Evidence{Src: e.Src, Text: "then: " + trimText(failureText(e), 160)})
			after = fmt.Sprintf(" The other node(s) then failed: %s (%s).", trimText(failureText(e), 160), e.Src)
			break
		}
	}
	if after == "" {
		ev = append(ev, Evidence{Src: latest.src, Text: latest.host + "'s last line: " + trimText(latest.text, 160)})
	}
	ev, after = unreachable(idx, first.host, ev, after)
	p.Report(Finding{
		Message: fmt.Sprintf("%s stopped logging at %s (%s), %s before %s's last line, with no shutdown or error of its own: the node went down or its processes were killed or hang, and the ranks on the other node(s) wait for it in their next collective.%s",
			first.host, first.last.UTC().Format("15:04:05"), first.src, humanDuration(latest.last.Sub(first.last)), latest.host, after),
		Evidence:   ev,
		Confidence: 0.6,
		Cause:      true,
		Why:        first.host + " went silent first",
		Remedy:     lostRemedy(first.host),
	})
}

// reportGone names a node whose server processes are gone from its latest
// snapshot while another node's still run, its log ending without an error.
func reportGone(p *Pass, n *lostNode, s *facts.ProcSnapshot) {
	idx := p.Index
	alive := idx.State.PS
	ev := []Evidence{
		{Src: s.Src, Text: fmt.Sprintf("%s's processes: no server process", n.host)},
		{Src: n.src, Text: n.host + "'s last line: " + trimText(n.text, 160)},
		{Src: alive.Src, Text: fmt.Sprintf("%s's processes: %d server process(es) still run", alive.Host, len(idx.State.Alive))},
	}
	gpus := ""
	for _, g := range idx.LatestGPUsByHost() {
		if g.Host != n.host {
			continue
		}
		used := 0.0
		for _, x := range g.GPUs {
			used += x.MemUsedMiB.V
		}
		if len(g.GPUs) > 0 && used < 1024 {
			ev = append(ev, Evidence{Src: g.Src, Text: fmt.Sprintf("%s's %d GPUs hold %.0f MiB", n.host, len(g.GPUs), used)})
			gpus = fmt.Sprintf(", its %d GPUs are empty (%s)", len(g.GPUs), g.Src)
		}
	}
	after := ""
	ev, after = unreachable(idx, n.host, ev, after)
	p.Report(Finding{
		Message: fmt.Sprintf("%s runs no server process any more (%s)%s, and its log ends at %s without a shutdown or an error of its own, while %s's server processes still run (%s): %s's were killed (the OOM killer, a signal, the scheduler), and the ranks on the other node(s) wait for them in their next collective.%s",
			n.host, s.Src, gpus, n.src, alive.Host, alive.Src, n.host, after),
		Evidence: ev,
		// The other nodes' ranks block in a collective a peer never joins
		// until c10d's watchdog ends them: hung at the time of capture.
		Outcome:    OutcomeHung,
		Confidence: 0.6,
		Cause:      true,
		Why:        n.host + "'s server processes are gone",
		Remedy:     lostRemedy(n.host),
	})
}

// unreachable adds what a collect across the cluster says of a node it
// could not reach: the same, from the outside.
func unreachable(idx *Index, host string, ev []Evidence, after string) ([]Evidence, string) {
	for _, n := range idx.Facts.Nodes {
		if n.Name == host && n.Status == "failed" {
			ev = append(ev, Evidence{Src: n.Src, Text: "the collector could not reach " + n.Name + ": " + trimText(n.Error, 160)})
			after += fmt.Sprintf(" The collector could not reach it either (%s).", n.Src)
		}
	}
	return ev, after
}

func lostRemedy(host string) string {
	return fmt.Sprintf("Look at %s itself: its kernel log (`journalctl -k -b -1` after a reboot: OOM kills, Xid, hardware), its container or scheduler events (was the pod or job step killed?), and `nvidia-smi -q` there.", host)
}

// isFailure reports an event among the run's failures.
func isFailure(idx *Index, e *facts.LogEvent) bool {
	for _, f := range idx.State.Failures {
		if f == e {
			return true
		}
	}
	return false
}
