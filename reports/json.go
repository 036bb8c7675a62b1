package reports

import (
	"encoding/json"
	"io"
)

// JSON writes the report (or a part of it) as indented JSON (DESIGN §6).
func JSON(w io.Writer, r any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	// Evidence holds <, > and & often (C++ templates, shell lines); escaping them
	// as \u003c only hurts a human reading the file.
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}
