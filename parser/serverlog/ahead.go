package serverlog

import (
	"bytes"
	"unsafe"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/textio"
)

// aheadAfter is how far into a file Parse starts reading on a second
// goroutine (textio.Ahead) that takes each line's first record apart and
// reads stat lines' items while the parser handles the lines before. Small
// files, most of a bundle, are parsed by several workers at once already
// and would only pay for the goroutine and its buffers. Tests change it;
// a negative value turns the read-ahead off.
var aheadAfter int64 = 4 << 20

// aheadAlways makes the read-ahead read every stat line, as when it is
// ahead of the parser; tests set it so that they see that path whatever
// the timing.
var aheadAlways bool

// prepared is what the read-ahead goroutine made of a line. Everything in
// it depends on the line's bytes alone, so the parser takes it instead of
// doing the same work, where it would reach the same bytes.
type prepared struct {
	// peeled is set when l is the line's first record taken apart: the
	// line has no ESC, no colour remnant and no '\r', so its first segment
	// is the whole line as physical would read it.
	peeled bool
	l      line
	// stat is the kind of stat line read from rest (preNone if none), ok
	// whether the sample had a value, keys and vals the sample.
	stat preKind
	typ  facts.EventType
	rest []byte
	ok   bool
	// keys is shared with the slots of other lines of the same keys and
	// never written; vals[:len(keys)] are the values. A sample of more
	// values than vals holds is left to the parser.
	keys []string
	vals [maxPrepared]float64
}

// maxPrepared is the most values of a prepared sample: vLLM's speculative
// decoding line of 16 positions has 24.
const maxPrepared = 24

type preKind uint8

const (
	preNone preKind = iota
	preSGLang
	preVLLM
	preSpec
)

// preparer runs on the read-ahead goroutine, with a stat reader of its own
// and the key list of the last sample of each kind, which the next samples
// of the same keys share.
type preparer struct {
	r    statReader
	last [4][]string
}

// prep fills pre for line: it must set every field that the parser reads.
// When the parser waits for it (ahead is false), it leaves the stat items
// to the parser: reading them is most of its work, and the two goroutines
// then share it as they keep up with each other.
func (q *preparer) prep(raw []byte, pre *prepared, ahead bool) {
	pre.peeled, pre.stat = false, preNone
	if hasEscape(raw) || sgrRemnant(raw) > 0 || bytes.IndexByte(raw, '\r') >= 0 || len(bytes.TrimSpace(raw)) == 0 {
		return
	}
	l := &pre.l
	l.reset(raw)
	peel(l)
	pre.peeled = true
	if l.tagOnly || !ahead && !aheadAlways {
		return
	}
	// What handle and table will do with the body, for the stat lines.
	body, _ := stripRayDedup(l.body)
	r := &q.r
	switch {
	case len(body) == 0:
		return
	case has(body, "Decode batch"):
		pre.set(preSGLang, facts.EventStatDecode, body[len("Decode batch"):])
		pre.ok = r.readSGLang(facts.EventStatDecode, pre.rest)
	case has(body, "Prefill batch"):
		pre.set(preSGLang, facts.EventStatPrefill, body[len("Prefill batch"):])
		pre.ok = r.readSGLang(facts.EventStatPrefill, pre.rest)
	case has(body, "Avg prompt throughput:"):
		pre.set(preVLLM, facts.EventStatThroughput, body)
		r.readVLLM(pre.rest)
		pre.ok = true
	case has(body, "Engine "):
		// engineLine's "Engine 000: Avg prompt throughput: ..."
		k := bytes.Index(body, []byte(": "))
		if k <= 0 || k > 40 || !has(body[k+2:], "Avg prompt throughput") {
			return
		}
		pre.set(preVLLM, facts.EventStatThroughput, body[k+2:])
		r.readVLLM(pre.rest)
		pre.ok = true
	case has(body, "SpecDecoding metrics:"), has(body, "Speculative metrics:"):
		pre.set(preSpec, facts.EventStatSpecDecode, body)
		r.readSpec(pre.rest)
		pre.ok = true
	default:
		return
	}
	if len(r.keys) > maxPrepared {
		pre.stat = preNone
		return
	}
	k := int(pre.stat)
	if pre.typ == facts.EventStatPrefill {
		k = 0 // preNone's slot is free
	}
	last := &q.last[k]
	if !sameStrings(*last, r.keys) {
		*last = append([]string(nil), r.keys...)
	}
	pre.keys = *last
	copy(pre.vals[:], r.vals)
}

func sameStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		// Interned keys: the same pointer settles it.
		if (unsafe.StringData(a[i]) != unsafe.StringData(b[i]) || len(a[i]) != len(b[i])) && a[i] != b[i] {
			return false
		}
	}
	return true
}

func (pre *prepared) set(k preKind, typ facts.EventType, rest []byte) {
	pre.stat, pre.typ, pre.rest = k, typ, rest
}

// prepared returns the sample that the read-ahead read from these very
// bytes (the same memory, so the same line and item), nil if it read none.
func (p *parser) prepared(k preKind, typ facts.EventType, rest []byte) *prepared {
	pre := p.pre
	if pre == nil || pre.stat != k || pre.typ != typ || len(pre.rest) != len(rest) || unsafe.SliceData(pre.rest) != unsafe.SliceData(rest) {
		return nil
	}
	return pre
}

// peeled returns the read-ahead's taking apart of seg, if seg is the
// current line as it was prepared (the slot is this line's alone: handle
// may change it).
func (p *parser) peeled(seg []byte) (*line, bool) {
	pre := p.pre
	if pre == nil || !pre.peeled || len(pre.l.seg) != len(seg) || unsafe.SliceData(pre.l.seg) != unsafe.SliceData(seg) {
		return nil, false
	}
	return &pre.l, true
}

// parseAhead is Parse's loop with the read-ahead.
func (p *parser) parseAhead(in *textio.Input) {
	q := &preparer{r: newStatReader()}
	a := textio.ReadAhead(in, q.prep)
	defer a.Close()
	for in.Scan() {
		p.pre = a.Prepared()
		p.physical()
	}
	p.pre = nil
}
