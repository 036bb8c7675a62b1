package serverlog

import (
	"bytes"
	"strconv"
	"strings"
	"time"

	"github.com/coroner-dev/coroner/parser/facts"
)

type barState struct {
	bar       *facts.ProgressBar
	detail    []byte
	detailBad bool
	inherited bool
}

// tqdmBar is one state of a tqdm bar as printed.
type tqdmBar struct {
	desc, detail []byte
	n, total     int
	elapsed      float64
	end          int // index after the closing "]"
}

// parseBar reads a tqdm state at the start of b:
//
//	Loading safetensors checkpoint shards:  67% Completed | 2/3 [00:00<00:00,  4.06it/s]
//	Capturing batches (bs=1 avail_mem=10.28 GB): 100%|██████████| 23/23 [00:16<00:00,  1.42it/s]
//	  0%|          | 0/13 [00:00<?, ?it/s]
func parseBar(b []byte) (tqdmBar, bool) {
	var t tqdmBar
	// The percentage is followed by "|" (tqdm's bar) or " Completed |"
	// (SGLang's and vLLM's weight-loading format).
	pct := -1
	var after int
	for i := 0; i < len(b) && i < 2048; i++ {
		if b[i] != '%' || i == 0 || !isDigit(b[i-1]) {
			continue
		}
		if i+1 < len(b) && b[i+1] == '|' {
			close := bytes.IndexByte(b[i+2:], '|')
			if close < 0 {
				return t, false
			}
			pct, after = i, i+2+close+1
			break
		}
		if bytes.HasPrefix(b[i+1:], []byte(" Completed |")) {
			pct, after = i, i+len("% Completed |")
			break
		}
	}
	if pct < 0 {
		return t, false
	}
	d := pct
	for d > 0 && isDigit(b[d-1]) && pct-d < 3 {
		d--
	}
	desc := bytes.TrimRight(b[:d], " ")
	desc = bytes.TrimSuffix(desc, []byte(":"))
	desc = bytes.TrimSpace(desc)
	i := skipSpaces(b, after)
	n, k := parseNum(b[i:])
	if k == 0 || i+k >= len(b) || b[i+k] != '/' {
		return t, false
	}
	i += k + 1
	tot, k2 := parseNum(b[i:])
	if k2 == 0 {
		return t, false
	}
	i += k2
	if i+1 < len(b) && b[i] == ' ' && b[i+1] == '[' {
		end := bytes.IndexByte(b[i+2:], ']')
		if end < 0 {
			return t, false
		}
		inner := b[i+2 : i+2+end]
		t.end = i + 2 + end + 1
		if lt := bytes.IndexByte(inner, '<'); lt > 0 {
			t.elapsed = clockSeconds(inner[:lt])
		} else if c := bytes.IndexByte(inner, ','); c > 0 {
			t.elapsed = clockSeconds(inner[:c])
		}
	} else if elided(b[i:]) {
		// A paste that cut the bar after its count ("4/35 ...", or the
		// line's end): the state is there, the timing is not.
		t.end = len(b)
	} else {
		return t, false
	}
	// "Capturing batches (bs=1 avail_mem=10.28 GB)": the parenthetical with
	// "=" is per-step detail.
	if len(desc) > 0 && desc[len(desc)-1] == ')' {
		if o := bytes.LastIndexByte(desc, '('); o >= 0 && bytes.IndexByte(desc[o:], '=') >= 0 {
			t.detail = desc[o+1 : len(desc)-1]
			desc = bytes.TrimSpace(desc[:o])
		}
	}
	t.desc = desc
	t.n, t.total = int(n), int(tot)
	if t.n < 0 || t.total < 0 || t.total > 1<<40 {
		return t, false
	}
	return t, true
}

// clockSeconds reads tqdm's "[H:]MM:SS".
func clockSeconds(b []byte) float64 {
	b = bytes.TrimSpace(b)
	var total float64
	for len(b) > 0 {
		v, n := parseNum(b)
		if n == 0 {
			return 0
		}
		total = total*60 + v
		b = b[n:]
		if len(b) > 0 && b[0] == ':' {
			b = b[1:]
		} else {
			break
		}
	}
	return total
}

func isWeightsBar(desc string) bool {
	return strings.Contains(desc, "shards") || strings.HasPrefix(desc, "Loading safetensors") ||
		strings.HasPrefix(desc, "Loading pt ") || strings.HasPrefix(desc, "Loading np_cache")
}

func isCaptureBar(desc string) bool {
	return strings.HasPrefix(desc, "Capturing") || strings.HasPrefix(desc, "Compiling num tokens") ||
		strings.HasPrefix(desc, "[BCG] Capturing")
}

// bar records a progress bar state and returns what follows it on the
// segment (a log line glued to an unfinished bar).
func (p *parser) bar(l *line, ps *procState, bare bool) ([]byte, bool) {
	t, ok := parseBar(l.body)
	if !ok {
		return nil, false
	}
	if bare {
		switch {
		case p.pendingTag != nil:
			ps = p.pendingTag
		case p.rank0 != nil && p.engine() == facts.EngineSGLang:
			ps = p.rank0
		}
	}
	if p.hasT && !p.inherited {
		p.lastStamp, p.hasLastStamp = p.t, true
	}
	p.count(ps, l, l.body[:t.end])
	p.barState(ps, &t)
	// What follows, if only spaces, is dropped by the caller (segment).
	return l.body[t.end:], true
}

func (p *parser) barState(ps *procState, t *tqdmBar) {
	var bs *barState
	for i := len(ps.bars) - 1; i >= 0; i-- {
		b := ps.bars[i]
		if b.bar.Desc == string(t.desc) {
			if b.bar.Total == t.total && t.n >= b.bar.N {
				bs = b
			}
			break
		}
	}
	if bs == nil && len(t.desc) > 0 {
		// tqdm prints the first state before the description is set.
		for i := len(ps.bars) - 1; i >= 0 && i >= len(ps.bars)-3; i-- {
			b := ps.bars[i]
			if b.bar.Desc == "" && b.bar.Total == t.total && b.bar.N <= t.n && !b.bar.Done() {
				bs = b
				bs.bar.Desc = strings.ToValidUTF8(string(t.desc), "\uFFFD")
				break
			}
		}
	}
	src := facts.Source{File: p.in.Path, Line: p.lineNo}
	if bs == nil {
		if len(p.barList) >= maxBars {
			return
		}
		desc := string(t.desc)
		if p.bad {
			desc = strings.ToValidUTF8(desc, "\uFFFD")
		}
		bs = &barState{bar: &facts.ProgressBar{Desc: desc, Proc: ps.pl.Proc, FirstSrc: src}}
		ps.bars = append(ps.bars, bs)
		p.barList = append(p.barList, bs)
		p.log.Bars = append(p.log.Bars, bs.bar)
	}
	b := bs.bar
	b.Src = src
	b.N, b.Total, b.Elapsed = t.n, t.total, t.elapsed
	b.Updates++
	if p.hasT || p.inherited {
		b.Time, bs.inherited = p.t, p.inherited
		if b.Start.IsZero() {
			b.Start = p.t.Add(-time.Duration(t.elapsed * float64(time.Second)))
		}
	}
	bs.detail = append(bs.detail[:0], t.detail...)
	bs.detailBad = p.bad
}

// finishBars materializes the bars' details and adds the events that put a
// weight-loading or graph-capture bar's last state on the timeline.
func (p *parser) finishBars() {
	for _, bs := range p.barList {
		b := bs.bar
		if len(bs.detail) > 0 {
			b.Detail = validString(bs.detail, bs.detailBad)
		}
		var typ facts.EventType
		switch {
		case isWeightsBar(b.Desc):
			typ = facts.EventLoadProgress
		case isCaptureBar(b.Desc):
			typ = facts.EventGraphProgress
		default:
			continue
		}
		f := &facts.Progress{Desc: b.Desc, Detail: b.Detail, Done: b.Done(),
			N: facts.N(float64(b.N)), Total: facts.N(float64(b.Total)), ElapsedS: facts.N(b.Elapsed)}
		msg := b.Desc
		ev := &facts.LogEvent{
			Src:   b.Src,
			Time:  b.Time,
			Proc:  b.Proc,
			Level: facts.LevelInfo,
			Type:  typ,
			Msg:   msg + ": " + strconv.Itoa(b.N) + "/" + strconv.Itoa(b.Total),
			Data:  f,
		}
		ev.Inherited = bs.inherited && !b.Time.IsZero()
		p.events.add(ev)
	}
}

// elided reports what is left of a bar a paste cut after its count:
// nothing, or an ellipsis.
func elided(rest []byte) bool {
	rest = bytes.TrimSpace(rest)
	return len(rest) == 0 || bytes.Equal(rest, []byte("...")) || bytes.Equal(rest, []byte("…")) ||
		bytes.Equal(rest, []byte("[...]"))
}
