package redact

import "bytes"

// hintSet finds which of many hints a line holds in one pass: for every
// byte that starts some hint, it compares only the hints that start with
// it. Dozens of separate searches per line cost most of the redaction of
// a big log.
type hintSet struct {
	byFirst [256][]hintRef
	// pair marks the first two bytes of some hint: most bytes of a line
	// fail this one lookup.
	pair [1 << 16]bool
}

type hintRef struct {
	h  []byte
	id int
}

func (s *hintSet) add(id int, hints []string) {
	for _, h := range hints {
		if h == "" {
			continue
		}
		s.byFirst[h[0]] = append(s.byFirst[h[0]], hintRef{h: []byte(h), id: id})
		if len(h) < 2 {
			panic("redact: a hint needs two bytes: " + h)
		}
		s.pair[uint16(h[0])<<8|uint16(h[1])] = true
	}
}

// find sets present[id] for every hint found in line.
func (s *hintSet) find(line []byte, present []bool) {
	for i := 0; i+1 < len(line); i++ {
		if !s.pair[uint16(line[i])<<8|uint16(line[i+1])] {
			continue
		}
		for _, r := range s.byFirst[line[i]] {
			if !present[r.id] && bytes.HasPrefix(line[i:], r.h) {
				present[r.id] = true
			}
		}
	}
}

// The hint sets of the tables: lower-case hints are found in the
// lower-cased line, exact ones as written. Secret patterns are ids 0..n-1,
// token patterns follow.
var lowerHints, exactHints = buildHints()

func buildHints() (*hintSet, *hintSet) {
	lower, exact := &hintSet{}, &hintSet{}
	for i, p := range secretPatterns {
		if p.exact {
			exact.add(i, p.hints)
		} else {
			lower.add(i, p.hints)
		}
	}
	for j, t := range tokenPatterns {
		exact.add(len(secretPatterns)+j, t.hints)
	}
	return lower, exact
}
