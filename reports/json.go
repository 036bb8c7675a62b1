package reports

import (
	"bytes"
	"encoding/json"
	"io"

	"github.com/coroner-dev/coroner/internal/escape"
)

// JSON writes the report (or a part of it) as indented JSON (the contract of
// the README, The JSON report).
func JSON(w io.Writer, r any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	// Evidence holds <, > and & often (C++ templates, shell lines); escaping them
	// as \u003c only hurts a human reading the file.
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return err
	}
	_, err := w.Write(escape.JSON(b.Bytes()))
	return err
}
