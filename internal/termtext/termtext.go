// Package termtext lays text out for a terminal of a given width: prose
// wrapped at spaces, and tables as aligned columns that narrow to fit. The
// text format of coroner analyze and of coroner diff use it. Widths count
// runes; the caller has made the text one printable line per cell
// (internal/escape).
package termtext

import (
	"strings"
	"unicode/utf8"
)

// Wrap breaks text into lines of at most width runes (width at least 20)
// at spaces; a word longer than that stays whole on its line. A "\n" in
// text starts a new paragraph.
func Wrap(text string, width int) []string {
	var lines []string
	for _, para := range strings.Split(text, "\n") {
		lines = append(lines, words(para, max(width, 20))...)
	}
	return lines
}

// words wraps one paragraph at width (at least 1).
func words(text string, width int) []string {
	width = max(width, 1)
	var lines []string
	cur, n := "", 0
	for _, w := range strings.Fields(text) {
		wl := utf8.RuneCountInString(w)
		if n > 0 && n+1+wl > width {
			lines = append(lines, cur)
			cur, n = "", 0
		}
		if n > 0 {
			cur += " "
			n++
		}
		cur += w
		n += wl
	}
	return append(lines, cur)
}

// MinColumn is how narrow Columns makes a column to fit the width.
const MinColumn = 12

// Columns lays rows out as columns two spaces apart, each as wide as its
// widest cell. When that is wider than width (0: no limit), the widest
// columns narrow, one rune at a time and to MinColumn at least, and their
// cells wrap within them. It returns each row's lines (a row with a
// wrapped cell has several), without trailing spaces.
func Columns(rows [][]string, width int) [][]string {
	n := 0
	for _, r := range rows {
		n = max(n, len(r))
	}
	widths := make([]int, n)
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	if width > 0 {
		avail := width - 2*(n-1)
		for total(widths) > avail {
			wi := 0
			for i := range widths {
				if widths[i] > widths[wi] {
					wi = i
				}
			}
			if widths[wi] <= MinColumn {
				break
			}
			widths[wi]--
		}
	}
	// Wrap the cells, then size each column by its widest line: a word
	// longer than its column stays whole and widens it.
	wrapped := make([][][]string, len(rows))
	final := make([]int, n)
	for ri, r := range rows {
		wrapped[ri] = make([][]string, len(r))
		for i, c := range r {
			if utf8.RuneCountInString(c) <= widths[i] {
				wrapped[ri][i] = []string{c}
			} else {
				wrapped[ri][i] = words(c, widths[i])
			}
			for _, l := range wrapped[ri][i] {
				final[i] = max(final[i], utf8.RuneCountInString(l))
			}
		}
	}
	widths = final
	out := make([][]string, len(rows))
	for ri, r := range rows {
		cells := wrapped[ri]
		height := 1
		for i := range r {
			height = max(height, len(cells[i]))
		}
		for k := range height {
			var b strings.Builder
			for i := range r {
				c := ""
				if k < len(cells[i]) {
					c = cells[i][k]
				}
				b.WriteString(c)
				if i < len(r)-1 {
					b.WriteString(strings.Repeat(" ", max(widths[i]-utf8.RuneCountInString(c), 0)+2))
				}
			}
			out[ri] = append(out[ri], strings.TrimRight(b.String(), " "))
		}
	}
	return out
}

func total(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}
