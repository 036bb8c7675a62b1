package parser

import (
	"bytes"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/textio"
)

// A format reads one family of evidence kinds. Each lives in its own
// sub-package, which exports a Sniff and a Parse with these signatures; this
// table is the only place that knows them all.
//
// Sniff looks at the entry's name (a hint) and the first HeadSize bytes of
// its content and returns the kind it recognizes with a score: 0 not mine,
// 1-29 the name alone suggests it, 30-69 the content plausibly is, 70-100
// the content unmistakably is. The highest score wins; ties go to the
// earlier format in the table.
//
// Parse reads the whole input and adds facts to out, which holds only this
// source's facts; it reports what it cannot read through in.Issuef and never
// panics on any input.
type format struct {
	name  string
	kinds []facts.Kind
	sniff func(name string, head []byte) (facts.Kind, int)
	parse func(in *textio.Input, kind facts.Kind, out *facts.Facts)
}

// HeadSize is how much of a file kind detection sees.
const HeadSize = 8 << 10

// Detect returns the kind of a file from its name and the first bytes of its
// content. Binary content is never a kind; the caller reports it.
func Detect(name string, head []byte) facts.Kind {
	best, bestScore := facts.KindUnknown, 0
	for _, f := range formats {
		k, score := f.sniff(name, head)
		if k == "" || score <= 0 {
			continue
		}
		if score > bestScore {
			best, bestScore = k, score
		}
	}
	return best
}

// isBinary reports content that is not text: NUL bytes, or many control
// bytes. Logs hold ANSI escapes, tabs and carriage returns; those are text.
func isBinary(head []byte) (bool, string) {
	if len(head) == 0 {
		return false, ""
	}
	if i := bytes.IndexByte(head, 0); i >= 0 {
		// One stray NUL in a long log is damage, not a binary file.
		if n := bytes.Count(head, []byte{0}); n*20 > len(head) || n > 64 {
			return true, "NUL bytes in the first bytes"
		}
	}
	ctrl, invalid := 0, 0
	for i := 0; i < len(head); {
		c := head[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != 0x1b && c != '\f' && c != '\b' {
				ctrl++
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(head[i:])
		if r == utf8.RuneError && n == 1 && len(head)-i >= utf8.UTFMax {
			invalid++
		}
		i += n
	}
	if ctrl*10 > len(head) || invalid*4 > len(head) {
		return true, "mostly non-text bytes"
	}
	return false, ""
}

// baseName is the last path element without compression suffixes, the name
// hint sniffers see.
func baseName(p string) string {
	b := path.Base(p)
	for _, ext := range []string{".gz", ".zst", ".xz", ".zstd"} {
		b = strings.TrimSuffix(b, ext)
	}
	return b
}
