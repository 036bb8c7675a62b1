package parser

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/coroner-dev/coroner/parser/facts"
)

// normalizeTimes places every timestamp of the bundle on one time line
// (DESIGN §4). Parsers store times that lack a zone as wall-clock readings in
// UTC and times that lack a year in facts.BaseYear; here the zone and year
// are taken from the strongest evidence at hand and applied to every time of
// those sources, and snapshots without an in-band time get their directory's
// capture stamp. Every guess is recorded as an assumption.
func normalizeTimes(f *facts.Facts, mtimes map[string]fileTime, opts Options) {
	zone, zoneWhy := bundleZone(f, opts)
	if zoneWhy != "" {
		f.Assumptions = append(f.Assumptions, zoneWhy)
	}
	// Zone first: a year is chosen by comparing instants. In UTC rezone
	// changes nothing, and the walk is skipped.
	if zone != nil && zone != time.UTC {
		shiftSources(f, func(file string, c facts.Clock, t time.Time) time.Time {
			if c.NoZone {
				return rezone(t, zone)
			}
			return t
		})
	}
	refs := newYearRefs(f, mtimes)
	yearWhy := map[string]string{}
	shifts := map[string]int{}                  // a file is here when its year was decided
	moved := false                              // some year moved: the times must be walked
	files := slices.Sorted(maps.Keys(f.Clocks)) // the walks below change values, not keys
	for _, file := range files {
		c := f.Clocks[file]
		if !c.NoYear || c.Latest.IsZero() {
			continue
		}
		latest := c.Latest // already in the bundle's zone
		var year int
		if opts.Year > 0 {
			year = opts.Year
			yearWhy[file] = fmt.Sprintf("%s: its timestamps carry no year; used %d from --year", file, year)
		} else {
			ref, refWhy := refs.of(file)
			if ref.IsZero() {
				continue
			}
			// The latest line cannot be later than the reference: if its
			// month and day fall after the reference's, it is from the
			// year before.
			year = ref.Year()
			if atYear(latest, year).After(ref.Add(24 * time.Hour)) {
				year--
			}
			yearWhy[file] = fmt.Sprintf("%s: its timestamps carry no year; took %d from %s", file, year, refWhy)
		}
		shifts[file] = year - latest.Year()
		moved = moved || shifts[file] != 0
	}
	if moved {
		shiftSources(f, func(file string, c facts.Clock, t time.Time) time.Time {
			if d := shifts[file]; d != 0 {
				return t.AddDate(d, 0, 0)
			}
			return t
		})
	}
	for _, file := range slices.Sorted(maps.Keys(yearWhy)) {
		f.Assumptions = append(f.Assumptions, yearWhy[file])
	}
	for _, file := range files {
		if c := f.Clocks[file]; c.NoYear && !c.Latest.IsZero() {
			if _, ok := shifts[file]; !ok {
				// Outputs leave the year out (facts.FormatTime), never
				// show the placeholder.
				c.YearUnknown = true
				f.Clocks[file] = c
				f.Assumptions = append(f.Assumptions, fmt.Sprintf(
					"%s: its timestamps carry no year and nothing in the bundle gives one (no manifest, capture stamp or file time): dates are shown without a year (pass --year)", file))
			}
		}
	}
	stampSnapshots(f, zone)
}

// rezone reads a wall-clock time stored as UTC in zone.
func rezone(t time.Time, zone *time.Location) time.Time {
	if zone == nil || zone == time.UTC || t.IsZero() {
		return t
	}
	y, mo, d := t.Date()
	h, mi, s := t.Clock()
	return time.Date(y, mo, d, h, mi, s, t.Nanosecond(), zone).UTC()
}

func atYear(t time.Time, year int) time.Time { return t.AddDate(year-t.Year(), 0, 0) }

// bundleZone decides the zone of wall-clock times: --tz, then a manifest's
// zone (collect records it as an env var TZ_OFFSET... see manifest parser),
// then the offset between a zoned capture stamp and an unzoned in-band stamp
// of the same directory, then UTC.
func bundleZone(f *facts.Facts, opts Options) (*time.Location, string) {
	if opts.Zone != nil {
		return opts.Zone, fmt.Sprintf("wall-clock times read in zone %s (--tz)", opts.Zone)
	}
	for _, e := range f.Env {
		if e.From == "manifest" && e.Name == "TZ_OFFSET_SECONDS" {
			var off int
			if _, err := fmt.Sscan(e.Value, &off); err == nil {
				z := time.FixedZone("UTC"+offsetName(off), off)
				return z, fmt.Sprintf("wall-clock times read in zone %s, the host's zone recorded in %s", z, e.Src)
			}
		}
	}
	// A zoned stamp and an unzoned snapshot time taken within seconds of each
	// other in one directory give the host's offset.
	for _, cs := range f.Capture {
		if !cs.Zoned {
			continue
		}
		for _, g := range f.GPUs {
			if g.At.IsZero() || dirOf(g.Src.File) != cs.Scope || !f.Clocks[g.Src.File].NoZone {
				continue
			}
			diff := g.At.Sub(cs.At)
			off := (diff + 450*time.Second).Truncate(15 * time.Minute)
			if d := diff - off; d > 10*time.Minute || d < -10*time.Minute {
				continue
			}
			if off < -14*time.Hour || off > 14*time.Hour {
				continue
			}
			secs := int(off / time.Second)
			z := time.UTC
			if secs != 0 {
				z = time.FixedZone(offsetName(secs), secs)
			}
			return z, fmt.Sprintf("wall-clock times read as UTC%s: %s (local) against the capture stamp %s (%s)",
				offsetName(secs), g.Src, cs.Src, cs.At.Format(time.RFC3339))
		}
	}
	if len(f.Clocks) == 0 {
		return time.UTC, ""
	}
	for _, c := range f.Clocks {
		if c.NoZone {
			return time.UTC, "log and snapshot times carry no zone and nothing in the bundle gives one: read as UTC (pass --tz)"
		}
	}
	return time.UTC, ""
}

func offsetName(secs int) string {
	if secs == 0 {
		return ""
	}
	sign := "+"
	if secs < 0 {
		sign, secs = "-", -secs
	}
	return fmt.Sprintf("%s%02d:%02d", sign, secs/3600, secs%3600/60)
}

// fileTime is a source's modification time: recorded by its archive, or,
// for a file of a folder, its file system's (FS).
type fileTime struct {
	At time.Time
	FS bool
}

// yearRefs finds, for a source whose stamps carry no year, the time that
// gives it one. Evidence about the source itself comes first, so that a
// log never borrows the year of an unrelated file while its own capture
// says another: the capture manifest (the collector's record of the
// capture), the capture stamp of its folder, the snapshots and logs with
// years in its folder, its own modification time (in the archive, or its
// file's); then the latest such time elsewhere in the bundle; then other
// files' modification times.
type yearRefs struct {
	manifest       time.Time
	manifestWhy    string
	byDir          map[string]yearRef // capture stamps, then in-band stamps, per folder
	global         yearRef
	mtimes         map[string]fileTime
	otherMtime     yearRef
	otherMtimeSeen bool
}

type yearRef struct {
	at  time.Time
	why string
}

func (r *yearRef) consider(t time.Time, why string) {
	if !t.IsZero() && t.After(r.at) {
		r.at, r.why = t, why
	}
}

func newYearRefs(f *facts.Facts, mtimes map[string]fileTime) *yearRefs {
	r := &yearRefs{byDir: map[string]yearRef{}, mtimes: mtimes}
	for _, a := range f.Runs {
		if !a.End.IsZero() && a.End.After(r.manifest) {
			r.manifest, r.manifestWhy = a.End, "the capture manifest "+a.Src.String()
		}
	}
	stamps := map[string]yearRef{}
	inband := map[string]yearRef{}
	add := func(m map[string]yearRef, dir string, t time.Time, why string) {
		ref := m[dir]
		ref.consider(t, why)
		m[dir] = ref
		r.global.consider(t, why)
	}
	for _, c := range f.Capture {
		add(stamps, c.Scope, c.At, "the capture stamp "+c.Src.String())
	}
	for _, g := range f.GPUs {
		if !f.Clocks[g.Src.File].NoYear {
			add(inband, dirOf(g.Src.File), g.At, "the snapshot time in "+g.Src.String())
		}
	}
	for _, p := range f.Procs {
		if !f.Clocks[p.Src.File].NoYear {
			add(inband, dirOf(p.Src.File), p.At, "the snapshot time in "+p.Src.String())
		}
	}
	for _, l := range f.Logs {
		if !f.Clocks[l.Path].NoYear {
			add(inband, dirOf(l.Path), l.LastTime, "the timestamps of "+l.Path)
		}
	}
	for _, p := range f.Probes {
		if !f.Clocks[p.Src.File].NoYear {
			add(inband, dirOf(p.Src.File), p.At, "the probe time in "+p.Src.String())
		}
	}
	for _, k := range f.Kernel {
		if !f.Clocks[k.Src.File].NoYear {
			add(inband, dirOf(k.Src.File), k.Time, "the timestamps of "+k.Src.File)
		}
	}
	for dir, ref := range stamps {
		r.byDir[dir] = ref
	}
	for dir, ref := range inband {
		if _, ok := r.byDir[dir]; !ok {
			r.byDir[dir] = ref
		}
	}
	return r
}

// of returns the reference time for file and what it is.
func (r *yearRefs) of(file string) (time.Time, string) {
	if !r.manifest.IsZero() {
		return r.manifest, r.manifestWhy
	}
	if ref, ok := r.byDir[dirOf(file)]; ok && !ref.at.IsZero() {
		return ref.at, ref.why
	}
	if m, ok := r.mtimes[file]; ok && !m.At.IsZero() {
		if m.FS {
			return m.At, "its file's modification time"
		}
		return m.At, "its modification time in the archive"
	}
	if !r.global.at.IsZero() {
		return r.global.at, r.global.why
	}
	if !r.otherMtimeSeen {
		r.otherMtimeSeen = true
		for _, k := range slices.Sorted(maps.Keys(r.mtimes)) {
			how := "the archive's modification time of "
			if r.mtimes[k].FS {
				how = "the file modification time of "
			}
			r.otherMtime.consider(r.mtimes[k].At, how+k)
		}
	}
	return r.otherMtime.at, r.otherMtime.why
}

// stampSnapshots gives snapshots without an in-band time the capture stamp
// of their directory, and resolves ps START columns against the snapshot day.
func stampSnapshots(f *facts.Facts, zone *time.Location) {
	// The first stamp of each directory, and the first source of each path
	// (as f.Source finds it): a bundle of many rounds has thousands of
	// snapshots, each looked up here.
	byDir := make(map[string]*facts.CaptureStamp, len(f.Capture))
	for _, c := range f.Capture {
		if _, ok := byDir[c.Scope]; !ok {
			byDir[c.Scope] = c
		}
	}
	stamp := func(file string) (*facts.CaptureStamp, bool) {
		c, ok := byDir[dirOf(file)]
		return c, ok
	}
	byPath := make(map[string]*facts.SourceInfo, len(f.Sources))
	for _, s := range f.Sources {
		if _, ok := byPath[s.Path]; !ok {
			byPath[s.Path] = s
		}
	}
	for _, s := range f.Procs {
		if s.At.IsZero() {
			if c, ok := stamp(s.Src.File); ok {
				s.At, s.AtFrom = c.At, "capture stamp "+c.Src.String()
			}
		}
		if s.At.IsZero() {
			continue
		}
		for _, p := range s.Procs {
			if p.Start.IsZero() && p.StartRaw != "" {
				p.Start = resolveStart(p.StartRaw, s.At, zone)
			}
		}
	}
	for _, g := range f.GPUs {
		if g.At.IsZero() {
			if c, ok := stamp(g.Src.File); ok {
				g.At, g.AtFrom = c.At, "capture stamp "+c.Src.String()
			}
		}
	}
	for _, m := range f.Memory {
		if m.At.IsZero() {
			if c, ok := stamp(m.Src.File); ok {
				m.At = c.At
			}
		}
	}
	for _, s := range f.Sources {
		if c, ok := stamp(s.Path); ok && s.Kind != facts.KindCaptureTime {
			s.CapturedAt, s.CapturedAtFrom = c.At, c.Src.String()
		}
	}
	for _, s := range f.Procs {
		if src := byPath[s.Src.File]; src != nil && src.CapturedAt.IsZero() && !s.At.IsZero() {
			src.CapturedAt, src.CapturedAtFrom = s.At, s.AtFrom
		}
	}
	for _, g := range f.GPUs {
		if src := byPath[g.Src.File]; src != nil && src.CapturedAt.IsZero() && !g.At.IsZero() {
			src.CapturedAt, src.CapturedAtFrom = g.At, g.AtFrom
		}
	}
}

// resolveStart reads ps START/STIME: "HH:MM" today, "MonDD" this year, "YYYY".
func resolveStart(raw string, at time.Time, zone *time.Location) time.Time {
	local := at.In(zone)
	if t, err := time.Parse("15:04", raw); err == nil {
		s := time.Date(local.Year(), local.Month(), local.Day(), t.Hour(), t.Minute(), 0, 0, zone)
		if s.After(local) {
			s = s.AddDate(0, 0, -1)
		}
		return s.UTC()
	}
	if t, err := time.Parse("15:04:05", raw); err == nil {
		s := time.Date(local.Year(), local.Month(), local.Day(), t.Hour(), t.Minute(), t.Second(), 0, zone)
		if s.After(local) {
			s = s.AddDate(0, 0, -1)
		}
		return s.UTC()
	}
	if t, err := time.Parse("Jan02", raw); err == nil {
		s := time.Date(local.Year(), t.Month(), t.Day(), 0, 0, 0, 0, zone)
		if s.After(local) {
			s = s.AddDate(-1, 0, 0)
		}
		return s.UTC()
	}
	return time.Time{}
}

func dirOf(file string) string {
	i := strings.LastIndexByte(file, '/')
	if i < 0 {
		return ""
	}
	return file[:i]
}

var timeType = reflect.TypeOf(time.Time{})

// typeInfo is what shiftSources needs to know about a type.
type typeInfo struct {
	hasTime   bool // a time.Time is reachable through exported fields
	src, path int  // index of the Src (or, for a Log, Path) field, or -1
	fields    []int
}

// timeTypes caches typeInfo per type for one walk.
type timeTypes map[reflect.Type]*typeInfo

func (m timeTypes) of(t reflect.Type) *typeInfo {
	if ti, ok := m[t]; ok {
		return ti
	}
	// A recursive type reaches itself: it counts as holding a time until
	// proven otherwise, which only costs a walk.
	ti := &typeInfo{hasTime: true, src: -1, path: -1}
	m[t] = ti
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array:
		ti.hasTime = m.of(t.Elem()).hasTime
	case reflect.Interface:
		// Whatever it holds is known only at run time.
	case reflect.Struct:
		if t == timeType {
			return ti
		}
		has := false
		for i := 0; i < t.NumField(); i++ {
			sf := t.Field(i)
			if !sf.IsExported() {
				continue
			}
			switch {
			case sf.Name == "Src" && sf.Type == sourceType:
				ti.src = i
			case sf.Name == "Path" && sf.Type.Kind() == reflect.String && t == logType:
				ti.path = i
			}
			if m.of(sf.Type).hasTime {
				ti.fields = append(ti.fields, i)
				has = true
			}
		}
		ti.hasTime = has
	default:
		// Maps are not walked: their values cannot be set in place.
		ti.hasTime = false
	}
	return ti
}

var (
	sourceType = reflect.TypeOf(facts.Source{})
	logType    = reflect.TypeOf(facts.Log{})
)

// shiftSources applies fn to every time.Time in the facts whose source has a
// clock entry. A struct's source is its Src field (or Path, for a Log); nested
// structs without their own inherit it. Reflection keeps this in one place:
// a new fact type with a Src and a time needs no change here. What each type
// holds is worked out once, so the walk never enters what cannot hold a time
// (series buckets, strings, numbers): on a 100-round snapshot bundle those
// were most of the walk.
func shiftSources(f *facts.Facts, fn func(file string, c facts.Clock, t time.Time) time.Time) {
	if len(f.Clocks) == 0 {
		return
	}
	types := timeTypes{}
	var walk func(v reflect.Value, file string)
	walk = func(v reflect.Value, file string) {
		ti := types.of(v.Type())
		if !ti.hasTime {
			return
		}
		switch v.Kind() {
		case reflect.Pointer, reflect.Interface:
			if !v.IsNil() {
				walk(v.Elem(), file)
			}
		case reflect.Slice, reflect.Array:
			for i := 0; i < v.Len(); i++ {
				walk(v.Index(i), file)
			}
		case reflect.Struct:
			if v.Type() == timeType {
				c, ok := f.Clocks[file]
				if ok && v.CanSet() {
					t := v.Interface().(time.Time)
					if !t.IsZero() {
						v.Set(reflect.ValueOf(fn(file, c, t)))
					}
				}
				return
			}
			if ti.src >= 0 {
				if s := v.Field(ti.src).Interface().(facts.Source); s.File != "" {
					file = s.File
				}
			} else if ti.path >= 0 {
				file = v.Field(ti.path).String()
			}
			for _, i := range ti.fields {
				walk(v.Field(i), file)
			}
		}
	}
	v := reflect.ValueOf(f).Elem()
	for _, name := range []string{"Logs", "Procs", "GPUs", "Kernel", "Memory", "Probes", "Runs", "Capture"} {
		walk(v.FieldByName(name), "")
	}
	// Clock.Latest moves with its source so later passes compare like with like.
	for file, c := range f.Clocks {
		if !c.Latest.IsZero() {
			c.Latest = fn(file, c, c.Latest)
		}
		f.Clocks[file] = c
	}
}
