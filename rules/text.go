package rules

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/coroner-dev/coroner/parser/facts"
)

// period ends a sentence that ends with quoted text, without doubling the
// text's own final punctuation.
func period(s string) string {
	s = strings.TrimRight(s, " ")
	if s == "" {
		return s
	}
	switch s[len(s)-1] {
	case '.', '!', '?':
		return s
	}
	return s + "."
}

// capitalize upper-cases the first letter of a sentence.
func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func trimText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

func countList(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		if m[k] > 1 {
			parts = append(parts, fmt.Sprintf("%s ×%d", k, m[k]))
		} else {
			parts = append(parts, k)
		}
	}
	return strings.Join(parts, ", ")
}

func (ps procStack) label() string {
	if m := rankTitleRe.FindStringSubmatch(ps.st.Title); m != nil {
		return fmt.Sprintf("%s (pid %d)", m[1], ps.pid)
	}
	return fmt.Sprintf("pid %d", ps.pid)
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// fmtRate renders a throughput with the precision the engines print.
func fmtRate(v float64) string {
	if v >= 1000 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

func engineName(e facts.Engine) string {
	switch e {
	case facts.EngineSGLang:
		return "SGLang"
	case facts.EngineVLLM:
		return "vLLM"
	}
	return "engine"
}

// stamp says when a stat line's interval began, without a year when the
// bundle gives none (facts.FormatTime).
func stamp(p *RatePoint, noYear bool) string {
	if p.Start.IsZero() {
		return "time unknown"
	}
	return facts.FormatTime(p.Start.UTC(), "2006-01-02 15:04:05", noYear)
}

// batchLabel names the batch sizes of the points: "1", "16" or "96-112".
func batchLabel(ps []*RatePoint) string {
	lo, hi := ps[0].Batch, ps[0].Batch
	for _, p := range ps {
		lo, hi = min(lo, p.Batch), max(hi, p.Batch)
	}
	if lo == hi {
		return fmt.Sprintf("%.0f", lo)
	}
	return fmt.Sprintf("%.0f-%.0f", lo, hi)
}

// comparableBatch groups batch sizes whose throughput can be compared:
// exact up to 8 requests, then bins 25% wide.
func comparableBatch(b float64) int {
	if b <= 8 {
		return int(b)
	}
	return 8 + int(math.Log(b/8)/math.Log(1.25)) + 1
}

// figures is the throughput in a few words for a message.
func figures(s *RuntimeSeries) string {
	if ss := s.SingleStream(); ss != nil {
		return fmt.Sprintf("single-stream %s tok/s here", fmtRate(ss.Median))
	}
	return fmt.Sprintf("mean %s tok/s here", fmtRate(s.Mean))
}

func inFlight(pt *RatePoint) string {
	var parts []string
	if pt.Batch > 0 {
		parts = append(parts, fmt.Sprintf("%.0f running", pt.Batch))
	}
	if pt.Queue > 0 {
		parts = append(parts, fmt.Sprintf("%.0f waiting", pt.Queue))
	}
	if len(parts) == 0 {
		return "requests in flight"
	}
	return strings.Join(parts, ", ")
}

// headline is the finding's title: the single-stream figure, else the mean.
func headline(s *RuntimeSeries) string {
	if ss := s.SingleStream(); ss != nil {
		return fmt.Sprintf("single-stream %s tok/s", fmtRate(ss.Median))
	}
	return fmt.Sprintf("mean %s tok/s", fmtRate(s.Mean))
}
