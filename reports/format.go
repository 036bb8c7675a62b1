package reports

import (
	"fmt"
	"math"
	"strings"
)

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
// raw HTML, no table breaks, no line breaks.
func mdInline(s string) string {
	r := strings.NewReplacer(
		"&", "&amp;", "<", "&lt;", ">", "&gt;",
		"|", "\\|", "\r\n", " ", "\n", " ", "\r", " ",
		"`", "\\`", "*", "\\*", "_", "\\_", "[", "\\[", "]", "\\]",
	)
	return r.Replace(s)
}

// mdCode renders s as inline code, or escaped text when it holds backticks.
func mdCode(s string) string {
	if strings.ContainsAny(s, "`\n\r") {
		return mdInline(s)
	}
	return "`" + strings.ReplaceAll(s, "|", "\\|") + "`"
}

// humanBytes renders 1.5 GB, 12 KB.
func humanBytes(n int64) string {
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
