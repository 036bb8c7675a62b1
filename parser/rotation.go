package parser

import (
	"fmt"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/coroner-dev/coroner/parser/facts"
)

// Rotated logs. A log that outgrows its limit is renamed and a new one
// started: Python's RotatingFileHandler and logrotate make server.log.1
// (the newest piece), server.log.2 ... beside server.log; logrotate's
// dateext, Python's TimedRotatingFileHandler and the kubelet add a date
// instead (server.log-20240101, server.log.2024-01-01_12-00-00,
// 0.log.20240101-120000); compressed pieces (server.log.1.gz) reach the
// parser decompressed, under the name without .gz. Only a suffix after the
// log's whole name is read as rotation: server-2024-01-01.log is a run
// named by its date, not a piece.
var (
	numbered = regexp.MustCompile(`^(.+)\.([0-9]{1,4})$`)
	dated    = regexp.MustCompile(`^(.+?)([-._])((?:19|20)[0-9]{2})-?([01][0-9])-?([0-3][0-9])` +
		`(?:[-_T.]?([0-2][0-9])(?:[-:.]?([0-5][0-9])(?:[-:.]?([0-5][0-9]))?)?)?(?:-([0-9]{9,10}))?$`)
)

// rotationSlack is how far a piece may run past the start of the next: the
// lines of several processes reach a log a little out of order.
const rotationSlack = time.Minute

// piece is a file that may be a piece of a rotated log.
type piece struct {
	src    *facts.SourceInfo
	log    string // the log's path
	suffix string
	// order sorts the pieces of one log, oldest first: dated pieces by
	// date, then numbered ones from the highest number, then the live file.
	class int // 0 dated, 1 numbered, 2 live
	date  string
	n     int
}

// splitRotation reads a file name as a log's name and a rotation suffix;
// ok is false for a name without one.
func splitRotation(name string) (log, suffix string, class int, date string, n int, ok bool) {
	if m := dated.FindStringSubmatch(name); m != nil {
		mon, _ := strconv.Atoi(m[4])
		day, _ := strconv.Atoi(m[5])
		if mon >= 1 && mon <= 12 && day >= 1 && day <= 31 {
			d := m[3] + m[4] + m[5]
			for _, t := range m[6:9] {
				d += t + strings.Repeat("0", 2-len(t))
			}
			return m[1], name[len(m[1]):], 0, d + m[9], 0, true
		}
	}
	if m := numbered.FindStringSubmatch(name); m != nil {
		n, _ := strconv.Atoi(m[2])
		return m[1], name[len(m[1]):], 1, "", n, true
	}
	return "", "", 0, "", 0, false
}

// family is what may be pieces of one log: server logs of either engine
// (a piece cut in the middle of a traceback may not show its engine), or
// kernel logs.
func family(k facts.Kind) string {
	switch {
	case k.IsLog():
		return "server"
	case k == facts.KindKernelLog:
		return "kernel"
	}
	return ""
}

// rotations finds the rotated logs of a bundle: the files of one folder
// whose names are one log's name with rotation suffixes, of one family of
// kinds, at least two of them. Each gets its Rotation, and the bundle's
// logs are put in order: a rotated log's pieces next to each other, oldest
// first, where its first piece was. Pieces whose times overlap are no
// rotation (per-task outputs job.out.0, job.out.1 are written at once): they
// stay apart, and an assumption says so.
func rotations(f *facts.Facts) {
	logs := map[string]*facts.Log{}
	for _, l := range f.Logs {
		if _, ok := logs[l.Path]; !ok {
			logs[l.Path] = l
		}
	}
	groups := map[string][]*piece{}
	var keys []string
	for _, s := range f.Sources {
		fam := family(s.Kind)
		if fam == "" {
			continue
		}
		dir, name := path.Split(s.Path)
		pc := &piece{src: s, log: s.Path, class: 2}
		if log, suffix, class, date, n, ok := splitRotation(name); ok {
			pc.log, pc.suffix, pc.class, pc.date, pc.n = dir+log, suffix, class, date, n
		}
		key := fam + "\x00" + pc.log
		if groups[key] == nil {
			keys = append(keys, key)
		}
		groups[key] = append(groups[key], pc)
	}
	member := map[*facts.Log]string{}   // a rotated log's piece: its group
	pieces := map[string][]*facts.Log{} // a group's logs, oldest first
	for _, key := range keys {
		g := groups[key]
		if len(g) < 2 {
			continue
		}
		order(g)
		if !fits(g, logs) {
			// Python's handler numbers the newest piece 1; a few others the
			// oldest. The times decide.
			reverseNumbered(g)
			if !fits(g, logs) {
				var names []string
				for _, pc := range g {
					names = append(names, pc.src.Path)
				}
				sort.Strings(names)
				f.Assumptions = append(f.Assumptions, fmt.Sprintf("%s are named like rotated pieces of %s but their times overlap: read as separate logs",
					strings.Join(names, ", "), g[0].log))
				continue
			}
		}
		for i, pc := range g {
			pc.src.Rotation = &facts.Rotation{Log: pc.log, Piece: i + 1, Pieces: len(g), Suffix: pc.suffix}
			if l := logs[pc.src.Path]; l != nil && member[l] == "" {
				member[l] = key
				pieces[key] = append(pieces[key], l)
			}
		}
	}
	if len(member) == 0 {
		return
	}
	// Each rotated log's pieces go, in order, where the first of them was.
	out := make([]*facts.Log, 0, len(f.Logs))
	placed := map[string]bool{}
	for _, l := range f.Logs {
		key, ok := member[l]
		switch {
		case !ok:
			out = append(out, l)
		case !placed[key]:
			placed[key] = true
			out = append(out, pieces[key]...)
		}
	}
	f.Logs = out
}

func order(g []*piece) {
	sort.SliceStable(g, func(i, j int) bool {
		a, b := g[i], g[j]
		switch {
		case a.class != b.class:
			return a.class < b.class
		case a.class == 0:
			return a.date < b.date
		case a.class == 1:
			return a.n > b.n
		}
		return false
	})
}

func reverseNumbered(g []*piece) {
	var idx []int
	for i, pc := range g {
		if pc.class == 1 {
			idx = append(idx, i)
		}
	}
	for i, j := 0, len(idx)-1; i < j; i, j = i+1, j-1 {
		g[idx[i]], g[idx[j]] = g[idx[j]], g[idx[i]]
	}
}

// fits reports pieces whose times, where they have any, follow each other.
func fits(g []*piece, logs map[string]*facts.Log) bool {
	var last time.Time
	for _, pc := range g {
		l := logs[pc.src.Path]
		if l == nil || l.FirstTime.IsZero() {
			continue
		}
		if !last.IsZero() && last.After(l.FirstTime.Add(rotationSlack)) {
			return false
		}
		if !l.LastTime.IsZero() {
			last = l.LastTime
		}
	}
	return true
}
