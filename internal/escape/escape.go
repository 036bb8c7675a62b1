// Package escape makes text that comes from a bundle safe to show. Evidence
// is hostile: a log line or an archive member's name may hold terminal
// escape sequences (a screen clear, an OSC 52 clipboard write, an OSC 8
// hyperlink), other control characters, line breaks that would forge lines
// of a table, HTML, markdown, or invalid UTF-8. Text is for every output
// but JSON (whose encoder escapes on its own), Line for one-line places
// (table cells, names, stderr), Markdown and MarkdownCode for markdown.
//
// The reports, the CLI's tables and messages, and coroner diff share these,
// so that each context is escaped one way everywhere.
package escape

import (
	"bytes"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Markdown makes text safe inside a markdown paragraph or table cell: no
// raw HTML, no table breaks, no line breaks, no emphasis or links.
func Markdown(s string) string {
	s = Text(s)
	var b strings.Builder
	for i, r := range s {
		switch r {
		case '&':
			// Only where it could start an entity (&lt; &#60;).
			if i+1 < len(s) && (wordByte(s, i+1) || s[i+1] == '#') {
				b.WriteString(`\&`)
			} else {
				b.WriteByte('&')
			}
		case '\n', '\r', '\t':
			b.WriteByte(' ')
		case '_':
			// Inside a word (ps_aux.txt, scheduler_TP0) an underscore
			// never starts emphasis; escaping it there only clutters the
			// plain-text reading.
			if wordByte(s, i-1) && wordByte(s, i+1) {
				b.WriteByte('_')
			} else {
				b.WriteString(`\_`)
			}
		case '#':
			// Only a run that could close a heading: after a space or at
			// the start, and before a space or the end ("#running-req" stays).
			j := i
			for j < len(s) && s[j] == '#' {
				j++
			}
			// A newline or tab became a space above, so it counts as one.
			if (i == 0 || isBlank(s[i-1]) || s[i-1] == '#') && (j == len(s) || isBlank(s[j])) {
				b.WriteString(`\#`)
			} else {
				b.WriteByte('#')
			}
		case '<', '>', '|', '`', '*', '[', ']', '\\', '~', '$':
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	out := b.String()
	// Text that may follow a list marker or start a line must not start a
	// nested list or a thematic break ("- --" is one); a lone "-" (a cell
	// with nothing to say) is harmless.
	if len(out) >= 2 && (out[0] == '-' || out[0] == '+') && (out[1] == '-' || out[1] == '+' || out[1] == ' ') {
		out = `\` + out
	}
	// Nor an ordered list: digits and a "." or ")" (renderers disagree on
	// how many digits may open one, so any number is escaped).
	d := 0
	for d < len(out) && out[d] >= '0' && out[d] <= '9' {
		d++
	}
	if d > 0 && d < len(out) && (out[d] == '.' || out[d] == ')') && (d+1 == len(out) || out[d+1] == ' ') {
		out = out[:d] + `\` + out[d:]
	}
	return out
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func wordByte(s string, i int) bool {
	if i < 0 || i >= len(s) {
		return false
	}
	c := s[i]
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// Text makes evidence printable: terminal escape sequences (colour
// codes in logs) are dropped, other control characters become U+FFFD, and
// invalid UTF-8 is replaced. Tabs and newlines stay.
func Text(s string) string {
	clean := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 && c != '\t' && c != '\n' || c == 0x7f || c >= 0x80 {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	if strings.Contains(s, "\r") {
		s = lastRedraws(s)
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == 0x1b:
			i += escapeLen(s[i:])
			continue
		case r == utf8.RuneError && size <= 1:
			b.WriteRune(utf8.RuneError)
		case r == '\t' || r == '\n':
			b.WriteRune(r)
		case unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || unicode.Is(unicode.Bidi_Control, r):
			b.WriteRune(utf8.RuneError)
		default:
			b.WriteRune(r)
		}
		i += size
	}
	return b.String()
}

// Line is Text on one line: line breaks and tabs become spaces, so that a
// name holding a newline cannot start a line of its own in a table, a
// listing or a message.
func Line(s string) string {
	s = Text(s)
	if !strings.ContainsAny(s, "\n\t") {
		return s
	}
	return strings.NewReplacer("\n", " ", "\t", " ").Replace(s)
}

// lastRedraws keeps, of each line redrawn with \r (a tqdm bar), the last
// non-empty state: what a terminal showed.
func lastRedraws(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if !strings.Contains(l, "\r") {
			continue
		}
		parts := strings.Split(l, "\r")
		lines[i] = ""
		for j := len(parts) - 1; j >= 0; j-- {
			if strings.TrimSpace(parts[j]) != "" {
				lines[i] = parts[j]
				break
			}
		}
	}
	return strings.Join(lines, "\n")
}

// escapeLen is the length of the escape sequence at the start of s (CSI
// "ESC [ ... final", OSC "ESC ] ... BEL|ESC \", or a two-byte escape).
func escapeLen(s string) int {
	if len(s) < 2 {
		return len(s)
	}
	switch s[1] {
	case '[':
		for i := 2; i < len(s); i++ {
			if s[i] >= 0x40 && s[i] <= 0x7e {
				return i + 1
			}
		}
		return len(s)
	case ']':
		for i := 2; i < len(s); i++ {
			if s[i] == 0x07 {
				return i + 1
			}
			if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '\\' {
				return i + 2
			}
		}
		return len(s)
	}
	return 2
}

// MarkdownCode renders s as inline code, or escaped text when it holds a
// backtick or a line break.
func MarkdownCode(s string) string {
	s = Text(s)
	if s == "" {
		return ""
	}
	if strings.ContainsAny(s, "`\n\r") {
		return Markdown(s)
	}
	return "`" + strings.ReplaceAll(s, "|", "\\|") + "`"
}

// JSON escapes, in encoded JSON, what encoding/json leaves raw but Text
// would not show: DEL, the C1 controls U+0080-U+009F (U+009B is a CSI to
// some terminals, so `cat report.json` could still obey a bundle) and bidi
// controls (which reorder what a reader sees). In JSON they can stand only
// inside strings, where \u escapes mean the same characters.
func JSON(b []byte) []byte {
	unsafe := func(r rune) bool {
		return r == 0x7f || r >= 0x80 && r <= 0x9f || unicode.Is(unicode.Bidi_Control, r)
	}
	if !bytes.ContainsFunc(b, unsafe) {
		return b
	}
	out := make([]byte, 0, len(b)+64)
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if unsafe(r) {
			out = fmt.Appendf(out, `\u%04x`, r)
		} else {
			out = append(out, b[:size]...)
		}
		b = b[size:]
	}
	return out
}
