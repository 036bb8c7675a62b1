package derive

import (
	"bytes"

	"github.com/coroner-dev/coroner/parser/facts"
)

// Every line for the user's signatures.
//
// The built-in catalog matches what the parser keeps of a log: its
// recognized events, traceback exceptions, a window of the lines nothing
// recognized, the kernel log. A user pack's signature sees every line: a
// warning, an INFO line, a stat line, a frame of a traceback, a line past
// the window. The parser asks the LineWatch of the packs' signatures about
// each raw line as it reads it (their literal prefilters, no regexp), keeps
// the ones it wants in facts.Log.Watched, and the catalog matches them like
// the other lines. The built-in entries keep their own view, whether packs
// are loaded or not, so a pack never changes what they report (and a run
// without packs reads no line twice).

// packWatch is the facts.LineWatch of the signatures that are not built in.
type packWatch struct {
	sigs []watchedSig
}

// watchedSig is one signature's test of a raw line: its prefilter's
// literals as bytes (lower case when fold), or its regexp when it has none.
type watchedSig struct {
	lits [][]byte
	fold bool
	sig  *Signature
}

// LineWatch returns the watch the parser needs for sigs: nil when every one
// is built in.
func LineWatch(sigs []*Signature) facts.LineWatch {
	var w packWatch
	for _, s := range sigs {
		if s.builtin || s.rx == nil {
			continue
		}
		ws := watchedSig{fold: s.pf.fold, sig: s}
		for _, l := range s.pf.lits {
			ws.lits = append(ws.lits, []byte(l))
		}
		w.sigs = append(w.sigs, ws)
	}
	if len(w.sigs) == 0 {
		return nil
	}
	return &w
}

// Want reports a raw line that one of the signatures may match: one of its
// literals is in the line, or it has none and its regexp matches the raw
// line. The header is still on the line, so the regexp decides again on
// the message later. It allocates nothing: the parser calls it on every
// line of every log.
func (w *packWatch) Want(line []byte) bool {
	for i := range w.sigs {
		s := &w.sigs[i]
		if len(s.lits) == 0 {
			if re := s.sig.Regexp(); re != nil && re.Match(line) {
				return true
			}
			continue
		}
		for _, l := range s.lits {
			if s.fold && containsFold(line, l) || !s.fold && bytes.Contains(line, l) {
				return true
			}
		}
	}
	return false
}

// containsFold reports whether b holds lit (lower case, ASCII) in any
// case. Unicode folds two ASCII letters to other runes too ('k' to the
// Kelvin sign, 's' to the long s), which the regexp would accept: a line
// that could hold them always may match.
func containsFold(b, lit []byte) bool {
	if len(lit) == 0 {
		return true
	}
	c := lit[0]
	up := c
	if 'a' <= c && c <= 'z' {
		up = c - 'a' + 'A'
	}
	for _, first := range []byte{c, up} {
		rest := b
		for {
			j := bytes.IndexByte(rest, first)
			if j < 0 || len(rest)-j < len(lit) {
				break
			}
			if bytes.EqualFold(rest[j:j+len(lit)], lit) {
				return true
			}
			rest = rest[j+1:]
		}
		if up == c {
			break
		}
	}
	return bytes.ContainsAny(lit, "ks") && !isASCII(string(b))
}

// packSignatures are the signatures of sigs that are not built in: they
// alone are matched against the watched lines.
func packSignatures(sigs []*Signature) []*Signature {
	var out []*Signature
	for _, s := range sigs {
		if !s.builtin {
			out = append(out, s)
		}
	}
	return out
}

// LevelMiss is a line a signature's pattern matches but its levels leave
// out.
type LevelMiss struct {
	Sig   *Signature
	Src   facts.Source
	Level facts.Level
	Text  string
}

// LevelMisses lists the lines that sigs would match but for their levels,
// so that a pack's author learns why a signature stayed quiet.
func LevelMisses(f *facts.Facts, sigs []*Signature) []LevelMiss {
	var open []*Signature
	orig := map[*Signature]*Signature{}
	for _, s := range sigs {
		if s.levels == nil {
			continue
		}
		c := *s
		c.levels = nil
		open = append(open, &c)
		orig[&c] = s
	}
	if len(open) == 0 {
		return nil
	}
	var out []LevelMiss
	for _, m := range MatchSignatures(f, open) {
		s := orig[m.Sig]
		lv := facts.LevelNone
		if m.Event != nil {
			lv = m.Event.Level
			if tb := m.Event.Traceback; tb != nil && m.Src.Line != m.Event.Src.Line {
				lv = facts.LevelError
			}
		}
		if !s.LevelAllowed(lv) {
			out = append(out, LevelMiss{Sig: s, Src: m.Src, Level: lv, Text: m.Text})
		}
	}
	return out
}
