package serverlog

import (
	"time"

	"github.com/coroner-dev/coroner/parser/facts"
)

// jumpThreshold is how far a clock may go backwards before it is reported:
// processes interleave their output and a few seconds out of order is normal.
const jumpThreshold = 5 * time.Minute

// clockState turns stamps into times for one file (DESIGN §4).
//
// A file's times are either all wall-clock readings stored as UTC (NoZone) or
// all instants: the first stamped line decides. Stamps without a year take
// the year of the file's own dated stamps when it has some (an SGLang log
// with vLLM import lines, torch glog lines, Ray lines); otherwise they are
// placed in facts.BaseYear and the file is marked NoYear.
type clockState struct {
	modeSet bool
	zoned   bool
	// offset between a zoned wrapper stamp and the engine's own wall clock,
	// learned from lines that carry both.
	offset      time.Duration
	offsetKnown bool

	year      int // year of the latest dated stamp, 0 if none yet
	yearRef   time.Time
	firstYear time.Time // the first dated stamp, for the final fix-up

	// Yearless stamps seen before any dated one are stored in BaseYear
	// (+rollovers) and shifted at the end if a dated stamp shows up.
	placeholders bool
	rollover     int
	lastYearless time.Time
	noYearSeen   bool
	// dateless marks SGLang's 2024 "[HH:MM:SS]" stamps.
	dateless    bool
	daylessDay  int
	lastDayless time.Time

	// Bounds of the dated times and of the placeholder ones, kept apart
	// because the placeholders move at the end.
	first, latest     time.Time
	phFirst, phLatest time.Time

	// The last engine stamp and the time it gave: lines of the same second
	// are many, and they need no new computation.
	lastSt   stamp
	lastKind hdrKind
	lastT    time.Time
	// The midnight of the last dated stamp's day, and that day: the next
	// stamps of the day are an addition, not a calendar computation.
	day      [3]int
	dayT     time.Time
	dayYear  int
	dayValid bool
	// phLo and phHi bound the placeholder years: times in [phLo, phHi) are
	// placeholders. Kept as instants so that checking a time needs no
	// calendar.
	phLo, phHi time.Time
	phRoll     int
}

// resolve turns a line's stamps into a time. ok is false when the line has
// none.
func (c *clockState) resolve(l *line) (time.Time, bool) {
	inner, wrap := l.st.ok, l.wst.ok
	if !inner && !wrap {
		return time.Time{}, false
	}
	if !c.modeSet {
		c.modeSet = true
		c.zoned = wrap && l.wst.zoned
	}
	if c.zoned {
		if wrap && l.wst.zoned {
			t := l.wst.instant()
			if inner && l.kind != hdrSGLangOld {
				// Learn the engine clock's offset so that lines without a
				// wrapper stamp can still be placed.
				y := l.st.year
				if y == 0 {
					y = t.Year()
				}
				if d := l.st.wall(y).Sub(t); d < 15*time.Hour && d > -15*time.Hour {
					c.offset = d.Round(15 * time.Minute)
					c.offsetKnown = true
				}
			}
			c.noteYear(t)
			return c.seen(t), true
		}
		if inner && c.offsetKnown {
			t := c.fromInner(&l.st, l.kind)
			return c.seen(t.Add(-c.offset)), true
		}
		return time.Time{}, false
	}
	if inner {
		if l.st == c.lastSt && l.kind == c.lastKind && !c.lastT.IsZero() {
			return c.lastT, true
		}
		t := c.seen(c.fromInner(&l.st, l.kind))
		c.lastSt, c.lastKind, c.lastT = l.st, l.kind, t
		return t, true
	}
	// A wrapper stamp alone in a file whose first stamp had no zone: take its
	// wall-clock reading so that the file stays of one kind.
	if l.wst.year == 0 {
		return c.seen(c.yearless(&l.wst)), true
	}
	t := l.wst.wall(l.wst.year)
	c.noteYear(t)
	return c.seen(t), true
}

func (c *clockState) fromInner(s *stamp, k hdrKind) time.Time {
	if k == hdrSGLangOld {
		return c.dayless(s)
	}
	if s.year > 0 {
		t, y := c.dated(s)
		c.noteYearOf(t, y)
		return t
	}
	return c.yearless(s)
}

// dated is s.wall(s.year) and its year.
func (c *clockState) dated(s *stamp) (time.Time, int) { return c.wall(s, s.year) }

// wall is s.wall(year) and its year. Within one day it adds the time of day
// to the day's midnight; a leap second (which time.Date carries into the
// next minute, maybe the next year) takes the long way.
func (c *clockState) wall(s *stamp, year int) (time.Time, int) {
	if s.sec > 59 {
		t := s.wall(year)
		return t, t.Year()
	}
	if !c.dayValid || c.day != [3]int{year, s.month, s.day} {
		c.day = [3]int{year, s.month, s.day}
		c.dayT = time.Date(year, time.Month(s.month), s.day, 0, 0, 0, 0, time.UTC)
		c.dayYear = c.dayT.Year()
		c.dayValid = true
	}
	return c.dayT.Add(time.Duration(s.hour*3600+s.min*60+s.sec)*time.Second + time.Duration(s.nsec)), c.dayYear
}

func (c *clockState) noteYear(t time.Time) { c.noteYearOf(t, t.Year()) }

// noteYearOf is noteYear for a time whose year is known.
func (c *clockState) noteYearOf(t time.Time, year int) {
	if c.year == 0 {
		c.firstYear = t
	}
	c.year = year
	c.yearRef = t
}

// yearless places a stamp that has month and day but no year.
func (c *clockState) yearless(s *stamp) time.Time {
	c.noYearSeen = true
	if c.year > 0 {
		t, _ := c.wall(s, c.year)
		// A yearless line next to a dated one is within months of it; across
		// New Year it belongs to the neighbouring year.
		if t.Sub(c.yearRef) > 183*24*time.Hour {
			t, _ = c.wall(s, c.year-1)
		} else if c.yearRef.Sub(t) > 183*24*time.Hour {
			t, _ = c.wall(s, c.year+1)
		}
		return t
	}
	c.placeholders = true
	t, _ := c.wall(s, facts.BaseYear+c.rollover)
	if !c.lastYearless.IsZero() && c.lastYearless.Sub(t) > 183*24*time.Hour {
		// December to January inside one file.
		c.rollover++
		t, _ = c.wall(s, facts.BaseYear+c.rollover)
	}
	c.lastYearless = t
	return t
}

// dayless places SGLang's time-only stamps of 2024 on the placeholder's
// first day, moving to the next day when the clock goes back by more than
// twelve hours.
func (c *clockState) dayless(s *stamp) time.Time {
	c.dateless = true
	c.placeholders = true
	t := time.Date(facts.BaseYear, 1, 1+c.daylessDay, s.hour, s.min, s.sec, s.nsec, time.UTC)
	if !c.lastDayless.IsZero() && c.lastDayless.Sub(t) > 12*time.Hour {
		c.daylessDay++
		t = t.AddDate(0, 0, 1)
	}
	c.lastDayless = t
	return t
}

func (c *clockState) seen(t time.Time) time.Time {
	if c.isPlaceholder(t) {
		if c.phFirst.IsZero() || t.Before(c.phFirst) {
			c.phFirst = t
		}
		if t.After(c.phLatest) {
			c.phLatest = t
		}
		return t
	}
	if c.first.IsZero() || t.Before(c.first) {
		c.first = t
	}
	if t.After(c.latest) {
		c.latest = t
	}
	return t
}

// bounds returns the earliest and latest time of the file after the fix-up.
func (c *clockState) bounds() (first, latest time.Time) {
	first, latest = c.first, c.latest
	if c.phLatest.IsZero() {
		return first, latest
	}
	pf, pl := c.fix(c.phFirst), c.fix(c.phLatest)
	if first.IsZero() || pf.Before(first) {
		first = pf
	}
	if pl.After(latest) {
		latest = pl
	}
	return first, latest
}

// isPlaceholder reports a time stored in the placeholder year range
// (years BaseYear to BaseYear+rollover+1; times are UTC).
func (c *clockState) isPlaceholder(t time.Time) bool {
	if t.IsZero() || c.dateless {
		return false
	}
	if c.phHi.IsZero() || c.phRoll != c.rollover {
		c.phRoll = c.rollover
		c.phLo = time.Date(facts.BaseYear, 1, 1, 0, 0, 0, 0, time.UTC)
		c.phHi = time.Date(facts.BaseYear+c.rollover+2, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	return !t.Before(c.phLo) && t.Before(c.phHi)
}

// fix shifts a placeholder time into the year of the file's dated stamps.
func (c *clockState) fix(t time.Time) time.Time {
	if c.year == 0 || !c.isPlaceholder(t) {
		return t
	}
	n := t.AddDate(c.firstYear.Year()-facts.BaseYear, 0, 0)
	if n.Sub(c.firstYear) > 183*24*time.Hour {
		n = n.AddDate(-1, 0, 0)
	}
	return n
}

// needsFix reports whether stored times must be passed through fix.
func (c *clockState) needsFix() bool { return c.placeholders && c.year > 0 && !c.dateless }

// clock returns what the file's times lack, for facts.Clocks.
func (c *clockState) clock() (facts.Clock, bool) {
	_, latest := c.bounds()
	if latest.IsZero() {
		return facts.Clock{}, false
	}
	return facts.Clock{
		NoZone: !c.zoned,
		NoYear: c.year == 0 && (c.noYearSeen || c.dateless),
		Latest: latest,
	}, true
}
