package facts

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// YearUnknown reports whether some of the bundle's times carry no year
// that anything gave (Clock.YearUnknown): they are stored in BaseYear, and
// every output leaves the year out (FormatTime) instead of printing the
// placeholder. When one source stays without a year, no source of the
// bundle had one to give, so the whole bundle's times are yearless.
func (f *Facts) YearUnknown() bool {
	for _, c := range f.Clocks {
		if c.YearUnknown {
			return true
		}
	}
	return false
}

// FormatTime formats t with layout, a time.Format layout that starts with
// the year ("2006-01-02 15:04:05Z"), leaving the year out when noYear
// ("05-16 21:40:38Z"): a time of a bundle whose year is unknown is never
// shown in the placeholder year.
func FormatTime(t time.Time, layout string, noYear bool) string {
	if noYear {
		layout = strings.TrimPrefix(layout, "2006-")
	}
	return t.Format(layout)
}

// Stamp writes t as the JSON outputs do: RFC 3339 in UTC, "" for the zero
// time. A time whose year is unknown (noYear) is stored in the placeholder
// BaseYear; it is written in year 0000 instead (0001 after a New Year in
// the log), a year no evidence has: 2000 years earlier, a multiple of the
// 400-year Gregorian cycle, so that Feb 29, weekdays and every duration
// stay as they were.
func Stamp(t time.Time, noYear bool) string {
	if t.IsZero() {
		return ""
	}
	if noYear {
		t = t.AddDate(-BaseYear, 0, 0)
	}
	return t.UTC().Format(time.RFC3339)
}

// Duration says how long something took the way every output says it:
// 0 s, 3.2 s (one decimal under 10 s), 45 s, 12 min (from 2 min, to the
// minute), 2.3 h (from 3 h). analyze, diff and the rules' messages all
// use it, so that a phase reads the same in each.
func Duration(d time.Duration) string { return Seconds(d.Seconds()) }

// Seconds is Duration for a count of seconds.
func Seconds(s float64) string {
	switch {
	case s <= 0:
		return "0 s"
	case s < 10:
		return fmt.Sprintf("%.1f s", s)
	case s < 120:
		return fmt.Sprintf("%d s", int(math.Round(s)))
	case s < 3*3600:
		return fmt.Sprintf("%d min", int(math.Round(s/60)))
	default:
		return fmt.Sprintf("%.1f h", s/3600)
	}
}
