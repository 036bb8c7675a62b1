package derive

import (
	"regexp/syntax"
	"strings"
)

// prefilter holds literals of which every match of a pattern contains at
// least one: a text that holds none of them cannot match, and
// strings.Contains rules it out far faster than the regexp engine does.
// Most log lines match no signature, so this is most of the catalog's cost
// (the technique is RE2's and Google Code Search's prefilter, reduced to
// what the catalog's patterns need).
type prefilter struct {
	lits []string // empty: no literal is required, run the regexp
	fold bool     // compare case-insensitively (lits are lower case)
}

// minLiteral is the shortest literal worth testing for: a shorter one is
// in nearly every line.
const minLiteral = 3

func newPrefilter(pattern string) prefilter {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return prefilter{}
	}
	return prefilterOf(re)
}

// prefilterOf is the prefilter of a parsed pattern.
func prefilterOf(re *syntax.Regexp) prefilter {
	lits, fold, ok := required(re.Simplify())
	if !ok {
		return prefilter{}
	}
	if fold {
		for i, l := range lits {
			if !isASCII(l) {
				// Unicode case folding is not ToLower ('K' folds to the
				// Kelvin sign): leave such a pattern to the regexp.
				return prefilter{}
			}
			lits[i] = strings.ToLower(l)
		}
	}
	return prefilter{lits: lits, fold: fold}
}

// maxAlternatives bounds the literals of one pattern.
const maxAlternatives = 16

// required returns literals one of which every match of re contains, or
// ok false when it cannot tell. fold says some literal is case-folded, in
// which case all are compared case-insensitively.
func required(re *syntax.Regexp) (lits []string, fold, ok bool) {
	switch re.Op {
	case syntax.OpLiteral:
		if len(re.Rune) < minLiteral {
			return nil, false, false
		}
		return []string{string(re.Rune)}, re.Flags&syntax.FoldCase != 0, true
	case syntax.OpCapture:
		return required(re.Sub[0])
	case syntax.OpPlus:
		return required(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return required(re.Sub[0])
		}
	case syntax.OpConcat:
		// Any part's literals will do; the longest shortest one is the
		// most selective.
		best := -1
		for _, sub := range re.Sub {
			l, f, ok := required(sub)
			if !ok {
				continue
			}
			if n := shortest(l); n > best {
				lits, fold, best = l, f, n
			}
		}
		return lits, fold, best >= 0
	case syntax.OpAlternate:
		for _, sub := range re.Sub {
			l, f, ok := required(sub)
			if !ok {
				return nil, false, false
			}
			lits = append(lits, l...)
			fold = fold || f
		}
		return lits, fold, len(lits) <= maxAlternatives
	}
	return nil, false, false
}

func shortest(lits []string) int {
	n := -1
	for _, l := range lits {
		if n < 0 || len(l) < n {
			n = len(l)
		}
	}
	return n
}

// matchText is a text to match, with its lower-case form once a
// case-insensitive prefilter has needed it.
type matchText struct {
	text, lower string
	lowered     bool
}

// mayMatch reports whether t can match.
func (p prefilter) mayMatch(t *matchText) bool {
	if len(p.lits) == 0 {
		return true
	}
	s := t.text
	if p.fold {
		if !isASCII(s) {
			// Unicode case folding is not ToLower ('ſ' folds to 's'):
			// leave such text to the regexp.
			return true
		}
		if !t.lowered {
			t.lower, t.lowered = strings.ToLower(s), true
		}
		s = t.lower
	}
	for _, l := range p.lits {
		if strings.Contains(s, l) {
			return true
		}
	}
	return false
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
