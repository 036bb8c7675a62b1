package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/coroner-dev/coroner/internal/escape"
)

type table struct {
	tw *tabwriter.Writer
}

func newTable(w io.Writer, header ...string) *table {
	t := &table{tw: tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)}
	t.row(header...)
	return t
}

// row writes one line. Cells hold names from a bundle (a member's name may
// carry a screen clear, a clipboard write or a newline that forges a row),
// so each is made one printable line.
func (t *table) row(cells ...string) {
	for i, c := range cells {
		cells[i] = escape.Line(c)
	}
	fmt.Fprintln(t.tw, strings.Join(cells, "\t"))
}

func (t *table) flush() error { return t.tw.Flush() }
