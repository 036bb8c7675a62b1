// Package capture reads explicit capture stamps: a file that holds only the
// time the files beside it were captured (captured_at.txt, the output of
// `date`, `date -u +%FT%TZ`). Such a stamp is the strongest time evidence a
// bundle of plain snapshots can have.
package capture

import (
	"bytes"
	"path"
	"strings"
	"time"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/textio"
)

// layouts are the stamp formats, zoned first.
var layouts = []struct {
	layout string
	zoned  bool
}{
	{time.RFC3339Nano, true},
	{"2006-01-02T15:04:05.999999999Z0700", true},
	{"Mon Jan _2 15:04:05 MST 2006", true}, // date(1) default; MST is any abbreviation
	{"Mon 02 Jan 2006 15:04:05 PM MST", true},
	{"Mon Jan _2 15:04:05 2006", false},
	{"2006-01-02 15:04:05.999999999", false},
	{"2006-01-02T15:04:05.999999999", false},
}

// ParseStamp reads one capture stamp. zoned is false when the text carries no
// zone (the time is then a wall-clock reading, stored as UTC).
func ParseStamp(s string) (t time.Time, zoned bool, ok bool) {
	s = strings.TrimSpace(s)
	for _, l := range layouts {
		if t, err := time.Parse(l.layout, s); err == nil {
			if l.zoned && strings.Contains(l.layout, "MST") {
				// time.Parse accepts any abbreviation but knows only UTC's offset.
				if z, _ := t.Zone(); z != "UTC" && z != "GMT" {
					return t, false, true
				}
			}
			return t, l.zoned, true
		}
	}
	return time.Time{}, false, false
}

// Sniff recognizes a file whose only content is one time stamp.
func Sniff(name string, head []byte) (facts.Kind, int) {
	text := bytes.TrimSpace(head)
	if len(text) == 0 || len(text) > 64 || bytes.IndexByte(text, '\n') >= 0 {
		return "", 0
	}
	if _, _, ok := ParseStamp(string(text)); !ok {
		return "", 0
	}
	n := strings.ToLower(name)
	if strings.Contains(n, "captured") || strings.Contains(n, "date") || strings.Contains(n, "time") {
		return facts.KindCaptureTime, 95
	}
	return facts.KindCaptureTime, 75
}

// Parse records the stamp; it applies to the files of its directory.
func Parse(in *textio.Input, _ facts.Kind, out *facts.Facts) {
	for in.Scan() {
		line := strings.TrimSpace(in.Text())
		if line == "" {
			continue
		}
		t, zoned, ok := ParseStamp(line)
		if !ok {
			in.Issuef(facts.IssueMalformed, "not a time stamp: %q", line)
			continue
		}
		dir := path.Dir(in.Path)
		if dir == "." {
			dir = ""
		}
		out.Capture = append(out.Capture, &facts.CaptureStamp{Src: in.Src(), At: t, Scope: dir, Zoned: zoned})
		if !zoned {
			out.Clocks[in.Path] = facts.Clock{NoZone: true, Latest: t}
		}
		return
	}
}
