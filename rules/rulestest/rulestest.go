// Package rulestest runs rules against fixture bundles and compares what
// they report with what the fixture expects, the way analysistest does for
// go/analysis. The built-in rules' tests and `coroner rules test` use it.
//
// A case is either a txtar file whose sections are the evidence files and
// whose `-- want --` section holds the expectations, or a bundle directory
// with its expectations beside it in `<dir>.want`. Expectations never sit
// inside the evidence, so a fixture stays byte-identical to a real capture.
//
// Expectation lines:
//
//	RULE-ID FILE:LINE "regexp"   a finding of RULE-ID cites FILE:LINE and its
//	                             title or message matches regexp
//	RULE-ID * "regexp"           a finding of RULE-ID, citing anything
//	verdict KEY=VALUE ...        outcome=, phase=, cause= (the top cause),
//	                             causes= (comma list that must all be ranked),
//	                             not-top= (a category that must not rank first),
//	                             no-cause= (a category that must not be ranked),
//	                             sequence= (the outcomes in order: hung,crashed)
//	# comment
//
// Every finding of the rules under test must be wanted and every want found
// (for bundle cases, findings below warning need no want). The txtar comment
// may set `year: 2025` and `tz: Europe/Berlin` for timestamps without them.
package rulestest

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/tools/txtar"

	"github.com/coroner-dev/coroner/parser"
	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/runs"
	"github.com/coroner-dev/coroner/rules"
)

// Case is one fixture with its expectations.
type Case struct {
	Name string
	// Path is the fixture file or directory; WantPath the file holding the wants.
	Path     string
	WantPath string
	Wants    []Want
	Verdict  []VerdictWant
	Year     int
	Zone     *time.Location

	fsys fs.FS  // txtar evidence
	dir  string // bundle directory
}

// Want is one expected finding.
type Want struct {
	Rule string
	File string // "" matches any evidence
	Line int    // 0 matches any line of File
	Re   *regexp.Regexp
	// At is where the want is written, for messages.
	At string
}

// VerdictWant is one expected property of the verdict.
type VerdictWant struct {
	Key, Value string
	At         string
}

var wantRE = regexp.MustCompile(`^(\S+)\s+(\S+)\s+"((?:[^"\\]|\\.)*)"\s*$`)

// LoadTxtar reads a txtar case.
func LoadTxtar(path string) (*Case, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	a := txtar.Parse(data)
	c := &Case{Name: strings.TrimSuffix(filepath.Base(path), ".txtar"), Path: path, WantPath: path}
	if err := c.header(string(a.Comment), path); err != nil {
		return nil, err
	}
	var evidence []txtar.File
	wantLine := 1 + bytes.Count(a.Comment, []byte("\n"))
	for _, f := range a.Files {
		wantLine++ // the marker line
		if f.Name == "want" {
			if err := c.parseWants(f.Data, path, wantLine); err != nil {
				return nil, err
			}
		} else {
			evidence = append(evidence, f)
		}
		wantLine += bytes.Count(f.Data, []byte("\n"))
	}
	c.fsys, err = txtar.FS(&txtar.Archive{Files: evidence})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// LoadDir reads a bundle-directory case; its wants are in dir + ".want".
func LoadDir(dir string) (*Case, error) {
	dir = strings.TrimRight(dir, "/")
	c := &Case{Name: filepath.Base(dir), Path: dir, WantPath: dir + ".want", dir: dir}
	data, err := os.ReadFile(c.WantPath)
	if err != nil {
		return nil, fmt.Errorf("case %s: %w", dir, err)
	}
	// A want file may start with the same header lines a txtar comment has.
	var head, body []string
	inHead := true
	for _, l := range strings.Split(string(data), "\n") {
		if inHead && (strings.HasPrefix(l, "year:") || strings.HasPrefix(l, "tz:")) {
			head = append(head, l)
			body = append(body, "")
			continue
		}
		inHead = false
		body = append(body, l)
	}
	if err := c.header(strings.Join(head, "\n"), c.WantPath); err != nil {
		return nil, err
	}
	if err := c.parseWants([]byte(strings.Join(body, "\n")), c.WantPath, 1); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Case) header(comment, path string) error {
	for i, l := range strings.Split(comment, "\n") {
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		switch strings.TrimSpace(k) {
		case "year":
			y, err := strconv.Atoi(v)
			if err != nil {
				return fmt.Errorf("%s:%d: year: %v", path, i+1, err)
			}
			c.Year = y
		case "tz":
			z, err := time.LoadLocation(v)
			if err != nil {
				return fmt.Errorf("%s:%d: tz: %v", path, i+1, err)
			}
			c.Zone = z
		}
	}
	return nil
}

func (c *Case) parseWants(data []byte, path string, firstLine int) error {
	sc := bufio.NewScanner(bytes.NewReader(data))
	n := firstLine - 1
	var errs []string
	for sc.Scan() {
		n++
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		at := fmt.Sprintf("%s:%d", path, n)
		if rest, ok := strings.CutPrefix(l, "verdict "); ok {
			for _, kv := range strings.Fields(rest) {
				k, v, ok := strings.Cut(kv, "=")
				if !ok {
					errs = append(errs, fmt.Sprintf("%s: verdict expects key=value, got %q", at, kv))
					continue
				}
				c.Verdict = append(c.Verdict, VerdictWant{Key: k, Value: v, At: at})
			}
			continue
		}
		m := wantRE.FindStringSubmatch(l)
		if m == nil {
			errs = append(errs, fmt.Sprintf(`%s: want RULE FILE:LINE "regexp" or verdict key=value, got %q`, at, l))
			continue
		}
		pat, err := strconv.Unquote(`"` + m[3] + `"`)
		if err != nil {
			pat = m[3]
		}
		re, err := regexp.Compile(pat)
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", at, err))
			continue
		}
		w := Want{Rule: m[1], Re: re, At: at}
		if m[2] != "*" {
			file, line, ok := strings.Cut(m[2], ":")
			w.File = file
			if ok {
				if w.Line, err = strconv.Atoi(line); err != nil {
					errs = append(errs, fmt.Sprintf("%s: bad line %q", at, line))
					continue
				}
			}
		}
		c.Wants = append(c.Wants, w)
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return nil
}

// Facts parses the case's evidence.
func (c *Case) Facts() (*facts.Facts, error) { return c.FactsWith(nil) }

// FactsWith parses the case's evidence, keeping the lines w wants (the
// lines user packs' signatures may match, rules.LineWatch).
func (c *Case) FactsWith(w facts.LineWatch) (*facts.Facts, error) {
	opts := parser.Options{Year: c.Year, Zone: c.Zone, Watch: w}
	if c.dir != "" {
		return parser.Parse([]string{c.dir}, opts)
	}
	return parser.ParseFS(c.fsys, opts)
}

// Result is what a case run found wrong; empty Problems means it passed.
type Result struct {
	Case     *Case
	Problems []string
	Run      *rules.Result
}

// Passed reports whether the case met every expectation.
func (r *Result) Passed() bool { return len(r.Problems) == 0 }

// Run runs rs over the case and compares. When strict, every finding of
// any severity must be wanted; otherwise findings below warning may go
// unwanted.
func (c *Case) Run(rs []*rules.Rule, strict bool) *Result {
	return c.RunWith(rules.Options{Rules: rs}, nil, strict)
}

// RunWith runs opts (rules, catalog) over the case and compares. Every
// finding of a rule in scope must be wanted; a nil scope means every rule
// of opts.Rules. Wants of any rule are checked, in scope or not.
// `coroner rules test` runs every rule, so that signatures and verdicts
// come out as in an analysis, and scopes the user's pack rules.
func (c *Case) RunWith(opts rules.Options, scope []string, strict bool) *Result {
	res := &Result{Case: c}
	f, err := c.FactsWith(rules.LineWatch(opts.Catalog))
	if err != nil {
		res.Problems = append(res.Problems, fmt.Sprintf("%s: %v", c.Path, err))
		return res
	}
	rs := opts.Rules
	if rs == nil {
		rs = rules.Registered()
	}
	// As analyze does: the latest run of the bundle, on its own evidence.
	run := rules.Run(runs.Latest(f), opts)
	res.Run = run
	used := make([]bool, len(run.Findings))
	for _, w := range c.Wants {
		found := false
		for i, fd := range run.Findings {
			if fd.Rule != w.Rule || !cites(fd, w) || !(w.Re.MatchString(fd.Title) || w.Re.MatchString(fd.Message)) {
				continue
			}
			found, used[i] = true, true
		}
		if !found {
			res.Problems = append(res.Problems, fmt.Sprintf("%s: no finding of %s matched %s %q", w.At, w.Rule, loc(w), w.Re))
		}
	}
	inScope := map[string]bool{}
	for _, r := range rs {
		inScope[r.ID] = scope == nil
	}
	for _, id := range scope {
		inScope[id] = true
	}
	for i, fd := range run.Findings {
		if used[i] || !inScope[fd.Rule] {
			continue
		}
		if !strict && fd.Severity.Rank() < rules.SeverityWarning.Rank() {
			continue
		}
		ev := "no evidence"
		if len(fd.Evidence) > 0 {
			ev = fd.Evidence[0].Src.String()
		}
		res.Problems = append(res.Problems, fmt.Sprintf("%s: unexpected finding %s (%s) at %s: %s: %s",
			c.WantPath, fd.Rule, fd.Severity, ev, fd.Title, fd.Message))
	}
	for _, vw := range c.Verdict {
		if p := checkVerdict(run.Verdict, vw); p != "" {
			res.Problems = append(res.Problems, vw.At+": "+p)
		}
	}
	sort.Strings(res.Problems)
	return res
}

func loc(w Want) string {
	switch {
	case w.File == "":
		return "*"
	case w.Line == 0:
		return w.File
	}
	return fmt.Sprintf("%s:%d", w.File, w.Line)
}

func cites(fd rules.Finding, w Want) bool {
	if w.File == "" {
		return true
	}
	for _, e := range fd.Evidence {
		if e.Src.File == w.File && (w.Line == 0 || e.Src.Line == w.Line) {
			return true
		}
	}
	return false
}

func checkVerdict(v rules.Verdict, w VerdictWant) string {
	var causes []string
	for _, c := range v.Causes {
		causes = append(causes, string(c.Category))
	}
	switch w.Key {
	case "outcome":
		if string(v.Outcome) != w.Value {
			return fmt.Sprintf("verdict outcome is %s, want %s (%s)", v.Outcome, w.Value, v.Summary)
		}
	case "phase":
		if string(v.Phase) != w.Value {
			return fmt.Sprintf("verdict phase is %s, want %s", v.Phase, w.Value)
		}
	case "cause":
		if len(causes) == 0 || causes[0] != w.Value {
			return fmt.Sprintf("top cause is %v, want %s first", causes, w.Value)
		}
	case "causes":
		for _, want := range strings.Split(w.Value, ",") {
			if !contains(causes, want) {
				return fmt.Sprintf("causes are %v, want %s among them", causes, want)
			}
		}
	case "not-top":
		if len(causes) > 0 && causes[0] == w.Value {
			return fmt.Sprintf("top cause is %s, which it must not be", w.Value)
		}
	case "no-cause":
		if contains(causes, w.Value) {
			return fmt.Sprintf("causes are %v, want no %s", causes, w.Value)
		}
	case "sequence":
		var seq []string
		for _, o := range v.Sequence {
			seq = append(seq, string(o))
		}
		if strings.Join(seq, ",") != w.Value {
			return fmt.Sprintf("verdict sequence is %v, want %s (%s)", seq, w.Value, v.Summary)
		}
	default:
		return fmt.Sprintf("unknown verdict key %q", w.Key)
	}
	return ""
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
