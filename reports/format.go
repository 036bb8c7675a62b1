package reports

import (
	"fmt"
	"math"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Escaping. Evidence is hostile: a log line may hold HTML, markdown,
// backticks, terminal escape sequences or invalid UTF-8. Every renderer
// passes evidence through cleanText, and the markdown renderers put it
// either in a fenced block (fence) or through mdInline; prose written by
// rules goes through mdRich, which keeps its `code spans` and escapes the
// rest.

// fence returns a code fence longer than any backtick run in text, so that
// evidence holding backticks cannot close its own block.
func fence(text string) string {
	longest, run := 0, 0
	for _, c := range text {
		if c == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return strings.Repeat("`", max(3, longest+1))
}

// mdInline makes text safe inside a markdown paragraph or table cell: no
// raw HTML, no table breaks, no line breaks, no emphasis or links.
func mdInline(s string) string {
	s = cleanText(s)
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

// mdRich renders prose written by rules (messages, remedies): its
// `code spans` stay code, everything else is escaped like mdInline. A
// backtick without a partner is escaped.
func mdRich(s string) string {
	s = cleanText(s)
	var b strings.Builder
	for s != "" {
		i := strings.IndexByte(s, '`')
		if i < 0 {
			b.WriteString(mdInline(s))
			break
		}
		b.WriteString(mdInline(s[:i]))
		s = s[i:]
		n := 0
		for n < len(s) && s[n] == '`' {
			n++
		}
		ticks := s[:n]
		end := closingTicks(s[n:], n)
		if end < 0 {
			b.WriteString(strings.Repeat("\\`", n))
			s = s[n:]
			continue
		}
		code := strings.NewReplacer("\n", " ", "\r", " ", "|", "\\|").Replace(s[n : n+end])
		b.WriteString(ticks + code + ticks)
		s = s[n+end+n:]
	}
	return b.String()
}

// blockSafe keeps text that starts a markdown line from starting a block:
// a leading "#", ">", "-", "+", "=" or "1." would make a heading, a quote,
// a list or a rule of it; four leading spaces a code block; three backticks
// or tildes a fence (renderers differ on whether "```x```" opens one, so
// none is risked).
func blockSafe(md string) string {
	md = strings.TrimLeft(md, " ")
	if md == "" {
		return md
	}
	switch md[0] {
	case '#', '>', '-', '+', '=':
		return "\\" + md
	}
	if strings.HasPrefix(md, "```") || strings.HasPrefix(md, "~~~") {
		return "\\" + md
	}
	i := 0
	for i < len(md) && i < 9 && md[i] >= '0' && md[i] <= '9' {
		i++
	}
	if i > 0 && i < len(md) && (md[i] == '.' || md[i] == ')') {
		return md[:i] + "\\" + md[i:]
	}
	return md
}

// closingTicks finds a run of exactly n backticks in s.
func closingTicks(s string, n int) int {
	for i := 0; i < len(s); {
		if s[i] != '`' {
			i++
			continue
		}
		j := i
		for j < len(s) && s[j] == '`' {
			j++
		}
		if j-i == n {
			return i
		}
		i = j
	}
	return -1
}

// mdCode renders s as inline code, or escaped text when it holds a backtick.
func mdCode(s string) string {
	s = cleanText(s)
	if s == "" {
		return ""
	}
	if strings.ContainsAny(s, "`\n\r") {
		return mdInline(s)
	}
	return "`" + strings.ReplaceAll(s, "|", "\\|") + "`"
}

// cleanText makes evidence printable: terminal escape sequences (colour
// codes in logs) are dropped, other control characters become U+FFFD, and
// invalid UTF-8 is replaced. Tabs and newlines stay.
func cleanText(s string) string {
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

// truncate cuts s to at most n runes, marking the cut.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// HumanBytes renders a size in binary units: 512 B, 12.0 KiB, 1.5 GiB.
func HumanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// humanSeconds renders a duration given in seconds: 45 s, 12 min, 2.3 h.
func humanSeconds(s float64) string {
	switch {
	case s <= 0:
		return "0 s"
	case s < 120:
		if s < 10 {
			return fmt.Sprintf("%.1f s", s)
		}
		return fmt.Sprintf("%d s", int(math.Round(s)))
	case s < 3*3600:
		return fmt.Sprintf("%d min", int(math.Round(s/60)))
	default:
		return fmt.Sprintf("%.1f h", s/3600)
	}
}

// clockFormat shows the timeline's instants compactly: the time of day when
// every instant falls on one day (the day is then said once), else the date
// too.
type clockFormat struct {
	day     string // "2026-02-10" when all instants share it
	sameDay bool
}

func newClockFormat(stamps ...string) clockFormat {
	day := ""
	for _, s := range stamps {
		if len(s) < 10 {
			continue
		}
		if day == "" {
			day = s[:10]
		} else if s[:10] != day {
			return clockFormat{}
		}
	}
	return clockFormat{day: day, sameDay: day != ""}
}

func (c clockFormat) show(stamp string) string {
	t, err := time.Parse(time.RFC3339, stamp)
	if err != nil {
		if stamp == "" {
			return "-"
		}
		return stamp
	}
	if c.sameDay {
		return t.Format("15:04:05")
	}
	return t.Format("01-02 15:04:05")
}

// timelineStamps lists every instant of the timeline and the snapshots.
func timelineStamps(r *Report) []string {
	var out []string
	for _, s := range r.Timeline {
		out = append(out, s.Start, s.End)
	}
	for _, s := range r.Snapshots {
		out = append(out, s.At)
	}
	return out
}

func loc(file string, line int) string {
	if line <= 0 {
		return file
	}
	return fmt.Sprintf("%s:%d", file, line)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

func titleCase(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
