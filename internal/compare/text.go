package compare

import (
	"bufio"
	"bytes"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/coroner-dev/coroner/internal/escape"
	"github.com/coroner-dev/coroner/internal/termtext"
)

// Text writes the diff for a terminal: what Markdown writes, as plain
// text: titles in capitals, tables as aligned columns (a row too wide for
// width wraps its last cell under itself), prose wrapped at width (100
// when width is 0), no markdown marks or escapes. It reads the markdown
// this package writes, a known subset (headings, bold paragraphs, pipe
// tables, "- " lists, code spans and backslash escapes), so that the two
// formats always say the same.
func Text(w io.Writer, d *Diff, width int) error {
	if width <= 0 {
		width = 100
	}
	var md bytes.Buffer
	if err := Markdown(&md, d); err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	var table [][]string
	flush := func() {
		if len(table) > 0 {
			writeTable(bw, table, width)
			table = nil
		}
	}
	for _, l := range strings.Split(strings.TrimRight(md.String(), "\n"), "\n") {
		switch {
		case strings.HasPrefix(l, "|"):
			if cells := tableCells(l); !isRule(cells) {
				table = append(table, cells)
			}
			continue
		case strings.HasPrefix(l, "# "):
			flush()
			bw.WriteString(strings.ToUpper(plain(l[2:])) + "\n")
		case strings.HasPrefix(l, "## "):
			flush()
			bw.WriteString(strings.ToUpper(plain(l[3:])) + "\n")
		case strings.HasPrefix(l, "- "):
			flush()
			writeWrapped(bw, "  - ", plain(l[2:]), width)
		case l == "":
			flush()
			bw.WriteString("\n")
		default:
			flush()
			writeWrapped(bw, "", plain(strings.TrimSuffix(strings.TrimPrefix(l, "**"), "**")), width)
		}
	}
	flush()
	return bw.Flush()
}

// tableCells splits a table row at its unescaped pipes, each cell plain.
func tableCells(l string) []string {
	var cells []string
	var cur strings.Builder
	ticks := 0 // inside a code span of this many backticks
	for i := 0; i < len(l); i++ {
		c := l[i]
		switch {
		case c == '\\' && i+1 < len(l):
			cur.WriteByte(c)
			cur.WriteByte(l[i+1])
			i++
		case c == '`':
			n := 1
			for i+n < len(l) && l[i+n] == '`' {
				n++
			}
			if ticks == 0 {
				ticks = n
			} else if n == ticks {
				ticks = 0
			}
			cur.WriteString(l[i : i+n])
			i += n - 1
		case c == '|' && ticks == 0:
			cells = append(cells, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(c)
		}
	}
	cells = append(cells, cur.String())
	// The row's leading and trailing pipes leave an empty first and last.
	if len(cells) >= 2 {
		cells = cells[1 : len(cells)-1]
	}
	for i, c := range cells {
		cells[i] = plain(strings.TrimSpace(c))
	}
	return cells
}

// isRule reports a table's |---|---| line.
func isRule(cells []string) bool {
	for _, c := range cells {
		if strings.Trim(c, "-:") != "" || c == "" {
			return false
		}
	}
	return len(cells) > 0
}

// plain drops markdown from inline text: code spans' backticks, bold
// marks and backslash escapes; what is left is the text the markdown
// shows, made safe for a terminal.
func plain(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s) && isPunct(s[i+1]):
			b.WriteByte(s[i+1])
			i++
		case c == '`':
			n := 1
			for i+n < len(s) && s[i+n] == '`' {
				n++
			}
			fence := s[i : i+n]
			end := strings.Index(s[i+n:], fence)
			if end < 0 {
				b.WriteString(fence)
				i += n - 1
				continue
			}
			inner := s[i+n : i+n+end]
			if n > 1 && len(inner) >= 2 && inner[0] == ' ' && inner[len(inner)-1] == ' ' {
				inner = inner[1 : len(inner)-1]
			}
			// Inside a table cell a code span's pipes are escaped.
			b.WriteString(strings.ReplaceAll(inner, `\|`, "|"))
			i += n + end + n - 1
		case c == '*' && i+1 < len(s) && s[i+1] == '*':
			i++
		default:
			b.WriteByte(c)
		}
	}
	return escape.Line(b.String())
}

func isPunct(c byte) bool {
	return c < utf8.RuneSelf && strings.IndexByte("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", c) >= 0
}

// writeWrapped writes a paragraph wrapped at width, the lines after the
// first indented under the text after prefix.
func writeWrapped(w *bufio.Writer, prefix, text string, width int) {
	indent := strings.Repeat(" ", utf8.RuneCountInString(prefix))
	for i, l := range termtext.Wrap(text, width-len(indent)) {
		if i == 0 {
			w.WriteString(prefix + l + "\n")
		} else {
			w.WriteString(indent + l + "\n")
		}
	}
}

// writeTable writes rows as aligned columns with a two-space margin,
// narrowed to fit width (termtext.Columns).
func writeTable(w *bufio.Writer, rows [][]string, width int) {
	for _, r := range termtext.Columns(rows, width-2) {
		for _, l := range r {
			w.WriteString(strings.TrimRight("  "+l, " ") + "\n")
		}
	}
}
