package reports

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/coroner-dev/coroner/internal/escape"
	"github.com/coroner-dev/coroner/parser/facts"
)

// Escaping. Evidence is hostile: a log line or a member's name may hold
// HTML, markdown, backticks, terminal escape sequences, line breaks or
// invalid UTF-8. Every renderer passes evidence through escape.Text (names
// and table cells through escape.Line), and the markdown renderers put it
// either in a fenced block (fence) or through escape.Markdown; prose
// written by rules goes through mdRich, which keeps its `code spans` and
// escapes the rest.

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

// mdRich renders prose written by rules (messages, remedies): its
// `code spans` stay code, everything else is escaped like mdInline. A
// backtick without a partner is escaped.
func mdRich(s string) string {
	s = escape.Text(s)
	var b strings.Builder
	for s != "" {
		i := strings.IndexByte(s, '`')
		if i < 0 {
			b.WriteString(escape.Markdown(s))
			break
		}
		b.WriteString(escape.Markdown(s[:i]))
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

// humanSeconds renders a duration given in seconds: 45 s, 12 min, 2.3 h,
// as the rules and coroner diff do (facts.Seconds).
func humanSeconds(s float64) string { return facts.Seconds(s) }

// clockFormat shows the timeline's instants compactly: the time of day when
// every instant falls on one day (the day is then said once), else the date
// too, without its year.
type clockFormat struct {
	day     string // "2026-02-10" when all instants share it ("May 16, year unknown")
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
	if t, err := time.Parse(time.DateOnly, day); err == nil && yearless(t) {
		day = t.Format("Jan 2") + ", year unknown"
	}
	return clockFormat{day: day, sameDay: day != ""}
}

// yearless reports a time of a report whose year is unknown, which the
// report writes in year 0000 (stampOf): renderers leave its year out.
func yearless(t time.Time) bool { return t.Year() < 100 }

// showStamp shows a stamp of the report as it is, or without its year
// when the year is unknown ("05-16T21:40:38Z"); "" stays "".
func showStamp(stamp string) string {
	t, err := time.Parse(time.RFC3339, stamp)
	if err != nil || !yearless(t) {
		return stamp
	}
	return facts.FormatTime(t, "2006-01-02T15:04:05Z07:00", true)
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

// loc cites a place in the bundle. The name is the member's, which may
// hold anything, so it is made one printable line here, where every
// renderer cites from.
func loc(file string, line int) string {
	file = escape.Line(file)
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
