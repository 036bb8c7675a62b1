package rules

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/rules/derive"
)

func init() { Register(storageRule) }

var storageRule = &Rule{
	ID:       "slow-storage",
	Title:    "weights load slowly",
	Severity: SeverityWarning,
	Category: CatSlowStorage,
	Needs:    []facts.Kind{facts.KindSGLangLog, facts.KindVLLMLog, facts.KindServerLog},
	Doc: `Weight loading reads the checkpoint from disk or a network file system into
GPU memory. A local NVMe disk reads 2-7 GB/s; a network file system or object
store mount often 0.1-0.5 GB/s; a cold page cache on a busy shared disk less.

The rule measures the rate from the engine's own numbers: SGLang's "Load
weight end. elapsed=S ..., mem usage=G GB" and vLLM's "Model loading took G
GiB and S seconds" (per GPU), or, while loading, the seconds per shard of the
progress bar, summed over the ranks that read at the same time. It fires
below 0.25 GB/s when loading took over 5
minutes, or above 60 s per shard. Processes in D state (uninterruptible
I/O wait) in a snapshot taken during loading confirm it.

A slow load is not a failure: the run may well come up. It explains a long
weights-loading phase, so the stall rule's limit for that phase grows with the
measured shard rate.`,
	References: []string{
		"https://docs.vllm.ai/en/latest/models/extensions/runai_model_streamer.html",
	},
	Run: runStorage,
}

func runStorage(p *Pass) {
	idx := p.Index
	for _, e := range idx.Events(facts.EventLoadEnd) {
		m, ok := e.Data.(*facts.Milestone)
		if !ok {
			continue
		}
		secs, ok := m.ElapsedS.Get()
		if !ok {
			continue
		}
		gb, ok := m.MemUsageGB.Get()
		if !ok {
			gb, ok = m.MemGiB.Get()
		}
		if !ok || secs <= 0 || gb <= 0 {
			continue
		}
		// vLLM counts a download from the hub in its load time; that is the
		// network, not the disk.
		download := 0.0
		for _, d := range idx.Events(facts.EventWeightsDownload) {
			if v, ok := milestoneElapsed(d); ok && d.Src.File == e.Src.File && d.Src.Line < e.Src.Line {
				download += v
			}
		}
		if download > 0 && download < secs {
			secs -= download
		}
		// Every rank of a node reads its share at the same time from the
		// same disk: the disk's rate is the sum over the node's ranks.
		ranks := ranksPerNode(idx)
		rate := gb * float64(ranks) / secs
		if rate >= 0.25 || secs < 300 {
			if secs >= 60 && rate >= 0.25 && !slowerPeer(idx, secs) {
				p.RuleOut(fmt.Sprintf("weights loaded at %.2f GB/s (%.1f GB per GPU on %d GPU(s) in %s)", rate, gb, ranks, humanDuration(time.Duration(secs*float64(time.Second)))), Ev(e))
			}
			return
		}
		ev := []Evidence{Ev(e)}
		ev = append(ev, dStateWorkers(idx)...)
		p.Report(Finding{
			Message: fmt.Sprintf("Weights loaded at %.2f GB/s: %.1f GB per GPU on %d GPU(s) in %s (%s). A local NVMe disk reads 2-7 GB/s; this is network-storage or contended-disk speed.",
				rate, gb, ranks, humanDuration(time.Duration(secs*float64(time.Second))), e.Src),
			Remedy:     "Copy the checkpoint to local NVMe (or warm the page cache with `vmtouch -t` / `cat *.safetensors > /dev/null`) before starting; for object stores use a streaming loader (--load-format runai_streamer).",
			Evidence:   ev,
			Confidence: 0.6,
			// Loading finished: slow, but not why the run is where it is.
			Cause: false,
		})
		return
	}
	// Still loading: judge the bar.
	b := weightsBar(idx)
	if b == nil || b.N == 0 || b.Elapsed <= 0 {
		return
	}
	per := b.Elapsed / float64(b.N)
	if per < 60 {
		return
	}
	ev := []Evidence{{Src: b.Src, Text: derive.BarText(b)}}
	ev = append(ev, dStateWorkers(idx)...)
	p.Report(Finding{
		Message:    fmt.Sprintf("The weights bar advances at %.0f s per shard (%d/%d after %s). Checkpoint shards are 2-10 GB; at local-disk speed each takes seconds.", per, b.N, b.Total, humanDuration(time.Duration(b.Elapsed*float64(time.Second)))),
		Remedy:     "Copy the checkpoint to local NVMe before starting, or use a streaming loader for network storage.",
		Evidence:   ev,
		Confidence: 0.5,
		Cause:      true,
		Why:        fmt.Sprintf("%.0f s per shard", per),
	})
}

// slowerPeer reports a rank that took far longer to load than secs (the
// straggler-ranks rule's test): one rank's rate then says nothing of the
// disk the slow ones read from.
func slowerPeer(idx *Index, secs float64) bool {
	for _, e := range idx.Events(facts.EventLoadEnd) {
		if v, ok := milestoneElapsed(e); ok && v >= 2*secs && v >= secs+30 {
			return true
		}
	}
	return false
}

// dStateWorkers cites server processes in uninterruptible I/O wait.
func dStateWorkers(idx *Index) []Evidence {
	var out []Evidence
	for _, s := range idx.Facts.Procs {
		for _, pr := range s.Procs {
			if pr.State == 'D' && pr.Role.IsServer() && len(out) < 4 {
				out = append(out, EvProc(pr))
			}
		}
	}
	return out
}

// ranksPerNode is how many ranks read weights on one machine: the tensor
// parallel size divided over the nodes the evidence shows (nnodes, or the
// distinct hosts of Ray workers), at least 1.
func ranksPerNode(idx *Index) int {
	tp := max(1, tensorParallel(idx))
	nodes := 1
	if s, ok := idx.Setting("nnodes"); ok {
		if n, err := strconv.Atoi(strings.Trim(s.Value, `'"`)); err == nil && n > 1 {
			nodes = n
		}
	}
	hosts := map[string]bool{}
	for _, l := range idx.Facts.Logs {
		for _, pl := range l.Procs {
			if pl.Proc.Host != "" {
				hosts[pl.Proc.Host] = true
			}
		}
	}
	nodes = max(nodes, len(hosts))
	return max(1, tp/nodes)
}

// milestoneElapsed is the time a startup milestone's line printed it took.
func milestoneElapsed(e *facts.LogEvent) (float64, bool) {
	if d, ok := e.Data.(*facts.Milestone); ok {
		return d.ElapsedS.Get()
	}
	return 0, false
}
