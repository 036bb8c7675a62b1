package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/coroner-dev/coroner/internal/escape"
	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/kernlog"
	"github.com/coroner-dev/coroner/reports"
	"github.com/coroner-dev/coroner/rules"
	"github.com/coroner-dev/coroner/rules/calibrate"
	"github.com/coroner-dev/coroner/rules/pack"
	"github.com/coroner-dev/coroner/rules/rulestest"
	"github.com/coroner-dev/coroner/rules/suppress"
)

type rulesCmd struct {
	List      rulesListCmd      `cmd:"" help:"List every rule: the built-in ones and those of the packs given with --rules."`
	Explain   rulesExplainCmd   `cmd:"" help:"Explain a rule or signature: what it looks at, why, what it needs. Without an ID: the rule pack language."`
	Test      rulesTestCmd      `cmd:"" help:"Run the fixture cases of DIR (txtar files, bundle folders with DIR.want) against the built-in rules and the packs (--rules, and DIR/*.rules.yaml); print PASS or FAIL per case."`
	Calibrate rulesCalibrateCmd `cmd:"" help:"Measure how often each kind of cause finding is right on labeled cases (incident sets with expected.json, fixture cases with verdict cause= wants) and write the table the reported confidences come from."`
}

type rulesCalibrateCmd struct {
	Dirs   []string `arg:"" name:"DIR" help:"Labeled sets: a folder with expected.json and a folder per case, or a folder of fixture cases."`
	Output string   `short:"o" placeholder:"FILE" help:"Write the table to FILE (default: stdout)."`
	Check  string   `placeholder:"FILE" help:"Compare with FILE instead of writing; exit 1 when it is not current."`
	rulePackFlags
}

func (c *rulesCalibrateCmd) Run(e *env) error {
	set, err := c.load()
	if err != nil {
		return err
	}
	sets := map[string][]calibrate.Case{}
	for _, d := range c.Dirs {
		cases, err := calibrate.Load(d)
		if err != nil {
			return fail(exitInput, "%s: %v", d, err)
		}
		sets[d] = cases
	}
	cal, err := calibrate.Measure(sets, set.Options())
	if err != nil {
		return fail(exitInternal, "%v", err)
	}
	data, err := json.MarshalIndent(cal, "", " ")
	if err != nil {
		return fail(exitInternal, "%v", err)
	}
	data = append(data, '\n')
	if c.Check != "" {
		old, err := os.ReadFile(c.Check)
		if err != nil {
			return fail(exitInput, "%v", unwrapPathError(err))
		}
		if !bytes.Equal(old, data) {
			return fail(exitFindings, "%s is not current: run `coroner rules calibrate -o %s %s`", c.Check, c.Check, strings.Join(c.Dirs, " "))
		}
		fmt.Fprintf(e.stdout, "%s is current (%d kinds of finding measured)\n", c.Check, len(cal.Keys))
		return nil
	}
	return writeOutput(e, c.Output, data)
}

// rulePackFlags loads user rule packs.
type rulePackFlags struct {
	Rules []string `name:"rules" placeholder:"FILE" sep:"none" help:"Load a user rule pack (YAML; coroner rules explain describes it). Repeatable."`
}

// load reads the packs; their defects are a usage error, all listed.
func (p *rulePackFlags) load(more ...string) (*pack.Set, error) {
	// A pack named twice (--rules and DIR/*.rules.yaml) is loaded once.
	var paths []string
	seen := map[string]bool{}
	for _, path := range append(append([]string(nil), p.Rules...), more...) {
		key := filepath.Clean(path)
		if abs, err := filepath.Abs(path); err == nil {
			key = abs
		}
		if !seen[key] {
			seen[key] = true
			paths = append(paths, path)
		}
	}
	set, err := pack.Load(paths...)
	if err != nil {
		return nil, fail(exitUsage, "rule packs:\n%v", err)
	}
	return set, nil
}

// engineOptions loads the packs and suppression files that analyze uses.
func engineOptions(packs, suppressions []string) (rules.Options, *suppress.List, error) {
	set, err := (&rulePackFlags{Rules: packs}).load()
	if err != nil {
		return rules.Options{}, nil, err
	}
	opts := set.Options()
	if len(suppressions) == 0 {
		return opts, nil, nil
	}
	sup, err := suppress.Load(suppressions...)
	if err == nil {
		err = sup.Check(func(id string) bool {
			return id == "signature" || rules.Lookup(set.Rules(), id) != nil
		})
	}
	if err != nil {
		return rules.Options{}, nil, fail(exitUsage, "suppressions:\n%v", err)
	}
	opts.Filter = sup.Filter()
	return opts, sup, nil
}

// allRules is every rule a finding can come from: the set's and the
// suppression rule.
func allRules(set *pack.Set) []*rules.Rule {
	out := append(append([]*rules.Rule(nil), set.Rules()...), suppress.Rule())
	sort.SliceStable(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

type rulesListCmd struct {
	rulePackFlags
	Format     string `short:"f" enum:"table,json" default:"table" help:"Output format: table or json."`
	Signatures bool   `help:"List the signature catalog instead of the rules."`
}

// ruleJSON is one rule of `rules list --format json`.
type ruleJSON struct {
	ID         string   `json:"id"`
	Title      string   `json:"title"`
	Severity   string   `json:"severity"`
	Category   string   `json:"category"`
	Builtin    bool     `json:"builtin"`
	From       string   `json:"from,omitempty"`
	Needs      []string `json:"needs"`
	References []string `json:"references"`
}

func (c *rulesListCmd) Run(e *env) error {
	set, err := c.load()
	if err != nil {
		return err
	}
	if c.Signatures {
		return listSignatures(e, set, c.Format)
	}
	rs := allRules(set)
	if c.Format == "json" {
		out := make([]ruleJSON, 0, len(rs))
		for _, r := range rs {
			j := ruleJSON{ID: r.ID, Title: r.Title, Severity: string(r.Severity), Category: string(r.Category),
				Builtin: r.Builtin, Needs: []string{}, References: []string{}}
			for _, k := range r.Needs {
				j.Needs = append(j.Needs, string(k))
			}
			j.References = append(j.References, r.References...)
			if info, ok := set.Info(r.ID); ok {
				j.From = info.Where
			}
			out = append(out, j)
		}
		return writeJSON(e, out)
	}
	tw := newTable(e.stdout, "ID", "SEVERITY", "CATEGORY", "TITLE")
	for _, r := range rs {
		tw.row(r.ID, string(r.Severity), orDash(string(r.Category)), r.Title)
	}
	if err := tw.flush(); err != nil {
		return err
	}
	exact, classes, relays := 0, 0, 0
	for _, s := range set.Catalog() {
		switch {
		case s.Relay:
			relays++
		case s.Layer == rules.LayerClass:
			classes++
		default:
			exact++
		}
	}
	_, err = fmt.Fprintf(e.stdout, "\ncatalog: %d signatures, %d classes of errors, %d relays in %d categories (coroner rules list --signatures lists them by category); %d Xid codes (coroner rules explain xid-79)\n",
		exact, classes, relays, len(byCategory(set.Catalog())), len(kernlog.XidCodes()))
	return err
}

// byCategory groups catalog entries by cause category, relays under
// "relay", each group sorted by ID.
func byCategory(sigs []*rules.Signature) map[string][]*rules.Signature {
	out := map[string][]*rules.Signature{}
	for _, s := range sigs {
		c := string(s.Category)
		if s.Relay {
			c = "relay"
		}
		out[c] = append(out[c], s)
	}
	for _, g := range out {
		sort.SliceStable(g, func(i, j int) bool { return g[i].ID < g[j].ID })
	}
	return out
}

// sigJSON is one signature of `rules list --signatures --format json`.
type sigJSON struct {
	ID         string   `json:"id"`
	Title      string   `json:"title"`
	Severity   string   `json:"severity"`
	Category   string   `json:"category"`
	Confidence float64  `json:"confidence"`
	Pattern    string   `json:"pattern"`
	Owner      string   `json:"owner,omitempty"`
	Layer      string   `json:"layer,omitempty"`
	Relay      bool     `json:"relay,omitempty"`
	Phase      string   `json:"phase,omitempty"`
	Affected   string   `json:"affected,omitempty"`
	Fixed      string   `json:"fixed,omitempty"`
	Derived    bool     `json:"derived,omitempty"`
	Levels     []string `json:"levels,omitempty"`
	From       string   `json:"from"`
	References []string `json:"references"`
}

// listSignatures lists the catalog by category: one table of every entry
// (sorted by category, then ID), then the count of each category.
func listSignatures(e *env, set *pack.Set, format string) error {
	groups := byCategory(set.Catalog())
	cats := make([]string, 0, len(groups))
	for c := range groups {
		cats = append(cats, c)
	}
	sort.Strings(cats)
	if format == "json" {
		out := []sigJSON{}
		for _, c := range cats {
			for _, s := range groups[c] {
				out = append(out, sigJSON{ID: s.ID, Title: s.Title, Severity: string(s.Severity), Category: string(s.Category),
					Confidence: s.Confidence, Pattern: s.Pattern, Owner: s.Owner, Layer: s.Layer, Relay: s.Relay,
					Phase: string(s.Phase), Affected: s.Affected, Fixed: s.Fixed, Derived: len(s.Derived) > 0,
					Levels: s.Levels, From: s.Where, References: append([]string{}, s.References...)})
			}
		}
		return writeJSON(e, out)
	}
	tw := newTable(e.stdout, "ID", "SEVERITY", "CATEGORY", "TITLE")
	for _, c := range cats {
		for _, s := range groups[c] {
			tw.row(s.ID, string(s.Severity), orDash(string(s.Category)), s.Title)
		}
	}
	if err := tw.flush(); err != nil {
		return err
	}
	fmt.Fprintln(e.stdout)
	tw = newTable(e.stdout, "CATEGORY", "SIGNATURES", "CLASSES", "VERSIONS FROM TAGS")
	total, classes, derived := 0, 0, 0
	for _, c := range cats {
		n, k, d := 0, 0, 0
		for _, s := range groups[c] {
			if s.Layer == rules.LayerClass {
				k++
			} else {
				n++
			}
			if len(s.Derived) > 0 {
				d++
			}
		}
		total, classes, derived = total+n, classes+k, derived+d
		tw.row(c, fmt.Sprint(n), fmt.Sprint(k), fmt.Sprint(d))
	}
	tw.row("all", fmt.Sprint(total), fmt.Sprint(classes), fmt.Sprint(derived))
	if err := tw.flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(e.stdout, "\nand %d Xid codes of NVIDIA's driver with their meaning and action (rules/catalog/xid.yaml; coroner rules explain xid-79), which the kernel-log parser reads and the gpu-fault rule reports\n", len(kernlog.XidCodes()))
	return err
}

func writeJSON(e *env, v any) error {
	if err := reports.JSON(e.stdout, v); err != nil {
		return fail(exitInternal, "write json: %v", err)
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

type rulesExplainCmd struct {
	rulePackFlags
	ID string `arg:"" optional:"" help:"A rule or signature ID (coroner rules list shows them)."`
}

func (c *rulesExplainCmd) Run(e *env) error {
	set, err := c.load()
	if err != nil {
		return err
	}
	w := e.stdout
	if c.ID == "" {
		_, err := fmt.Fprint(w, pack.Reference)
		return err
	}
	if r := rules.Lookup(allRules(set), c.ID); r != nil {
		fmt.Fprintf(w, "%s: %s\n\n", r.ID, r.Title)
		from := "built-in"
		if info, ok := set.Info(r.ID); ok {
			from = "pack " + info.Where
		}
		fmt.Fprintf(w, "severity: %s   category: %s   %s\n", r.Severity, orDash(string(r.Category)), from)
		if len(r.Needs) > 0 {
			var ks []string
			for _, k := range r.Needs {
				ks = append(ks, string(k))
			}
			fmt.Fprintf(w, "needs (any of): %s\n", strings.Join(ks, ", "))
		}
		fmt.Fprintf(w, "\n%s\n", strings.TrimRight(r.Doc, "\n"))
		if info, ok := set.Info(r.ID); ok {
			if info.Match != "" {
				fmt.Fprintf(w, "\nmatch:\n%s\n", indent(info.Match))
			}
			if info.When != "" {
				fmt.Fprintf(w, "\nwhen:\n%s\n", indent(strings.TrimRight(info.When, "\n")))
			}
			if info.Message != "" {
				fmt.Fprintf(w, "\nmessage:\n%s\n", indent(info.Message))
			}
			fmt.Fprintf(w, "\n(the names a pack rule's expressions see: coroner rules explain, without an ID)\n")
		}
		writeRefs(w, r.References)
		return nil
	}
	for _, s := range set.Catalog() {
		if s.ID != c.ID {
			continue
		}
		fmt.Fprintf(w, "%s: %s (signature)\n\n", s.ID, s.Title)
		fmt.Fprintf(w, "severity: %s   category: %s   confidence: %.2f   defined at %s\n", s.Severity, s.Category, s.Confidence, s.Where)
		fmt.Fprintf(w, "pattern: %s\n", s.Pattern)
		if s.Owner != "" {
			fmt.Fprintf(w, "reported by: %s\n", s.Owner)
		} else {
			fmt.Fprintf(w, "reported by: signature\n")
		}
		switch {
		case s.Relay:
			fmt.Fprintf(w, "relay: it reports another failure; the relay rule points at it when nothing else explains the failure\n")
		case s.Layer == rules.LayerClass:
			fmt.Fprintf(w, "layer: class of errors (matched against failure text only, below the exact signatures)\n")
		}
		if s.Phase != "" {
			fmt.Fprintf(w, "phase: %s\n", s.Phase)
		}
		if s.Outcome != "" {
			fmt.Fprintf(w, "outcome: %s\n", s.Outcome)
		}
		if len(s.Levels) > 0 {
			fmt.Fprintf(w, "levels: %s\n", strings.Join(s.Levels, ", "))
		}
		writeVersions(w, s)
		if s.Remedy != "" {
			fmt.Fprintf(w, "\nremedy: %s\n", s.Remedy)
		}
		writeRefs(w, s.References)
		return nil
	}
	if code, ok := strings.CutPrefix(c.ID, "xid-"); ok {
		if n, err := strconv.Atoi(code); err == nil {
			if x, ok := kernlog.XidInfo(n); ok {
				fmt.Fprintf(w, "Xid %d: %s (%s)\n\nseverity: %s", x.Code, x.Meaning, x.Name, x.Severity)
				if x.Secondary {
					fmt.Fprintf(w, "   usually follows another Xid")
				}
				if x.Hardware {
					fmt.Fprintf(w, "   usually a failing part")
				}
				fmt.Fprintf(w, "\nNVIDIA's resolution: %s", orDash(x.Immediate))
				if x.Investigate != "" {
					fmt.Fprintf(w, "; investigate: %s", x.Investigate)
				}
				if len(x.Causes) > 0 {
					fmt.Fprintf(w, "\npossible causes: %s", strings.Join(x.Causes, ", "))
				}
				fmt.Fprintf(w, "\n\naction: %s\n\nreported by: gpu-fault (from the kernel log)\n", x.Action)
				writeRefs(w, x.References)
				return nil
			}
		}
	}
	return fail(exitUsage, "no rule or signature %q (coroner rules list shows the rules, --signatures the signatures)", c.ID)
}

// writeVersions says which versions print a signature's message and where
// that was read: the release tags scripts/catalog-versions searched, or the
// entry's own range (from the upstream threads).
func writeVersions(w io.Writer, s *rules.Signature) {
	if s.Affected == "" && s.Fixed == "" && len(s.Derived) == 0 {
		return
	}
	fmt.Fprintf(w, "\nversions:\n")
	if s.Affected != "" {
		fmt.Fprintf(w, "  printed by: %s\n", s.Affected)
	}
	if s.Fixed != "" {
		fmt.Fprintf(w, "  fixed in: %s\n", s.Fixed)
	}
	own := true
	for _, d := range s.Derived {
		if d.First == "" {
			fmt.Fprintf(w, "  %s: none of %d release tags holds the text\n", d.Repo, d.Tags)
			continue
		}
		line := fmt.Sprintf("  %s: derived from %d release tags: first %s, last %s", d.Repo, d.Tags, d.First, d.Last)
		if d.Gone != "" {
			line += ", gone in " + d.Gone
		}
		if d.Fixed != "" {
			line += "; fix first released in " + d.Fixed
		}
		fmt.Fprintln(w, line)
		own = own && !strings.Contains(s.Affected, d.Affected)
	}
	if s.Affected != "" && own {
		fmt.Fprintf(w, "  (the range above is the entry's own, from the upstream threads and release notes)\n")
	}
	for _, p := range s.Source {
		where := p.Repo
		if p.Path != "" {
			where += " " + p.Path
		}
		fmt.Fprintf(w, "  source: %q in %s\n", p.Text, where)
	}
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(s, "\n", "\n  ")
}

func writeRefs(w io.Writer, refs []string) {
	if len(refs) == 0 {
		return
	}
	fmt.Fprintf(w, "\nreferences:\n")
	for _, r := range refs {
		fmt.Fprintf(w, "  %s\n", r)
	}
}

type rulesTestCmd struct {
	rulePackFlags
	Paths []string `arg:"" name:"DIR" help:"Folders of cases (searched recursively) or single .txtar cases."`
}

// testCase is one case found, or the error that kept it from loading.
type testCase struct {
	name string
	c    *rulestest.Case
	err  error
}

func (c *rulesTestCmd) Run(e *env) error {
	var packs []string
	var cases []testCase
	for _, p := range c.Paths {
		st, err := os.Stat(p)
		if err != nil {
			return fail(exitUsage, "%s: %v", p, unwrapPathError(err))
		}
		if !st.IsDir() {
			tc, err := rulestest.LoadTxtar(p)
			cases = append(cases, testCase{name: p, c: tc, err: err})
			continue
		}
		found, _ := filepath.Glob(filepath.Join(p, "*.rules.yaml"))
		packs = append(packs, found...)
		more, err := findCases(p)
		if err != nil {
			return fail(exitInternal, "%v", err)
		}
		cases = append(cases, more...)
	}
	set, err := c.load(packs...)
	if err != nil {
		return err
	}
	if len(cases) == 0 {
		return fail(exitUsage, "no cases in %s: want *.txtar files or bundle folders with a .want beside them", strings.Join(c.Paths, ", "))
	}
	// In scope, every finding must be wanted: the pack rules, and the
	// signature rule when a pack adds signatures (it reports them).
	var scope []string
	for _, r := range set.PackRules() {
		scope = append(scope, r.ID)
	}
	for _, p := range set.Packs {
		if len(p.Signatures) > 0 {
			scope = append(scope, "signature")
			break
		}
	}
	opts := set.Options()
	failed := 0
	fires := map[string]int{}
	quiet := map[string]int{}
	for _, tc := range cases {
		if tc.err != nil {
			failed++
			fmt.Fprintf(e.stdout, "FAIL %s\n    %s\n", escape.Line(tc.name), strings.ReplaceAll(escape.Text(tc.err.Error()), "\n", "\n    "))
			continue
		}
		wanted := map[string]bool{}
		for _, w := range tc.c.Wants {
			wanted[w.Rule] = true
		}
		for _, r := range set.PackRules() {
			if wanted[r.ID] {
				fires[r.ID]++
			} else {
				quiet[r.ID]++
			}
		}
		res := tc.c.RunWith(opts, scope, true)
		// A case's names and the evidence quoted in its problems come
		// from its bundle: one printable line each.
		if res.Passed() {
			fmt.Fprintf(e.stdout, "PASS %s\n", escape.Line(tc.name))
			continue
		}
		failed++
		fmt.Fprintf(e.stdout, "FAIL %s\n", escape.Line(tc.name))
		for _, p := range res.Problems {
			fmt.Fprintf(e.stdout, "    %s\n", escape.Line(p))
		}
		if res.Run != nil {
			// A signature that stayed quiet because of its levels says so.
			for _, m := range rules.LevelMisses(res.Run.Index.Facts, packSignatures(set)) {
				fmt.Fprintf(e.stdout, "    note: signature %s matches %s, but the line's level is %s, outside its levels [%s]\n",
					m.Sig.ID, m.Src, levelName(m.Level), strings.Join(m.Sig.Levels, ", "))
			}
		}
	}
	var coverage []string
	for _, r := range set.PackRules() {
		if fires[r.ID] == 0 {
			coverage = append(coverage, fmt.Sprintf("rule %s has no case where it fires", r.ID))
		}
		if quiet[r.ID] == 0 {
			coverage = append(coverage, fmt.Sprintf("rule %s has no case where it stays quiet", r.ID))
		}
	}
	if len(coverage) > 0 {
		fmt.Fprintf(e.stdout, "FAIL coverage\n    %s\n", strings.Join(coverage, "\n    "))
	}
	summary := fmt.Sprintf("%d case(s), %d pack rule(s) from %d pack(s)", len(cases), len(set.PackRules()), len(set.Packs))
	if failed > 0 || len(coverage) > 0 {
		fmt.Fprintf(e.stdout, "FAIL: %d failed case(s), %d coverage problem(s); %s\n", failed, len(coverage), summary)
		return &exitError{code: exitFindings, err: errors.New("")}
	}
	fmt.Fprintf(e.stdout, "ok: %s\n", summary)
	return nil
}

// packSignatures are the signatures the packs of set define.
func packSignatures(set *pack.Set) []*rules.Signature {
	var out []*rules.Signature
	for _, p := range set.Packs {
		out = append(out, p.Signatures...)
	}
	return out
}

// levelName is a log level as the pack language writes it.
func levelName(l facts.Level) string {
	if l == facts.LevelNone {
		return "none"
	}
	return strings.ToLower(string(l))
}

// findCases finds the cases under dir: txtar files, and folders with a
// .want file beside them (whose insides are evidence, not more cases).
func findCases(dir string) ([]testCase, error) {
	var out []testCase
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name, _ := filepath.Rel(dir, p)
		name = filepath.ToSlash(name)
		if d.IsDir() {
			if p == dir {
				return nil
			}
			if _, err := os.Stat(p + ".want"); err == nil {
				c, err := rulestest.LoadDir(p)
				out = append(out, testCase{name: name, c: c, err: err})
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(p, ".txtar") {
			c, err := rulestest.LoadTxtar(p)
			out = append(out, testCase{name: name, c: c, err: err})
		}
		return nil
	})
	return out, err
}
