// Helpers several rules share to read the facts and word their messages.

package rules

import (
	"strconv"
	"strings"
	"time"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/rules/derive"
)

func failureText(e *facts.LogEvent) string {
	if tb := e.Traceback; tb != nil {
		if tb.ExcMsg == "" {
			return tb.ExcType
		}
		return tb.ExcType + ": " + tb.ExcMsg
	}
	return e.Msg
}

// logOf returns the log that holds the event, or nil.
func logOf(idx *Index, e *facts.LogEvent) *facts.Log {
	for _, l := range idx.Facts.Logs {
		for _, x := range l.Events {
			if x == e {
				return l
			}
		}
	}
	return nil
}

// tensorParallel reads the TP size from any source (0 when unknown).
func tensorParallel(idx *Index) int {
	if s, ok := idx.Setting("tp_size", "tensor_parallel_size", "tp"); ok {
		n, _ := strconv.Atoi(strings.Trim(s.Value, `'"`))
		return n
	}
	return 0
}

// weightsBar returns the last weight-loading bar of the bundle's logs (the
// last log that has one).
func weightsBar(idx *Index) *facts.ProgressBar {
	var out *facts.ProgressBar
	for _, l := range idx.Facts.Logs {
		for _, b := range l.Bars {
			if derive.BarPhase(b) == facts.EventLoadProgress {
				out = b
			}
		}
	}
	return out
}

// parseSizeKB reads docker sizes: 64m, 1g, 512mb, 65536k, bytes.
func parseSizeKB(s string) int64 {
	s = strings.ToLower(strings.TrimSpace(s))
	mult := 1.0 / 1024
	for _, u := range []struct {
		suf string
		m   float64
	}{{"gb", 1 << 20}, {"g", 1 << 20}, {"mb", 1 << 10}, {"m", 1 << 10}, {"kb", 1}, {"k", 1}, {"b", 1.0 / 1024}} {
		if strings.HasSuffix(s, u.suf) {
			s, mult = strings.TrimSuffix(s, u.suf), u.m
			break
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0
	}
	return int64(v * mult)
}

// captureLeft finds the custom all-reduce's graph-buffer registrations at
// the end of a log that come while a capture bar stands below its total,
// with no capture end between: the capture context was left early.
func captureLeft(l *facts.Log) ([]*facts.LogEvent, *facts.ProgressBar) {
	var bar *facts.ProgressBar
	for _, b := range l.Bars {
		if derive.BarPhase(b) == facts.EventGraphProgress && (bar == nil || b.Src.Line > bar.Src.Line) {
			bar = b
		}
	}
	if bar == nil || bar.Total <= 0 || bar.N >= bar.Total {
		return nil, nil
	}
	var regs []*facts.LogEvent
	for _, e := range l.Events {
		if e.Src.Line <= bar.Src.Line {
			continue
		}
		switch {
		case e.Type == facts.EventCustomAllReduce && customARWhat(e) == "graph-buffers":
			regs = append(regs, e)
		case e.Type == facts.EventGraphEnd, e.Type == facts.EventGraphBegin, e.Type == facts.EventGraphProgress:
			return nil, nil
		}
	}
	if len(regs) == 0 {
		return nil, nil
	}
	return regs, bar
}

func maxCPU(ps []*facts.Process) (m time.Duration) {
	for _, p := range ps {
		m = max(m, p.CPUTime)
	}
	return m
}

func shortGPU(name string) string {
	return strings.TrimSpace(strings.TrimPrefix(name, "NVIDIA "))
}

// ccNumber turns "12.0" into 120.
func ccNumber(cc string) int {
	maj, ok := derive.CCMajor(cc)
	if !ok {
		return 0
	}
	return maj*10 + minorOf(cc)
}

func minorOf(cc string) int {
	_, m, _ := strings.Cut(cc, ".")
	n, _ := strconv.Atoi(m)
	return n
}

// customARWhat is what a custom-allreduce line is about ("graph-buffers"),
// "" for another line.
func customARWhat(e *facts.LogEvent) string {
	if d, ok := e.Data.(*facts.CustomAllReduce); ok {
		return d.What
	}
	return ""
}
