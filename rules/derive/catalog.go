package derive

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/coroner-dev/coroner/parser/facts"
	catdata "github.com/coroner-dev/coroner/rules/catalog"
	"github.com/coroner-dev/coroner/rules/catalog/jsonform"
)

// decodeYAML decodes a catalog strictly (a key no field takes is an error),
// naming the file in its errors.
func decodeYAML(data []byte, file string) func(any) error {
	return func(v any) error {
		if err := jsonform.DecodeYAML(data, v); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		return nil
	}
}

// decodeJSON decodes the JSON form of an embedded catalog, as strictly.
func decodeJSON(data []byte, file string) func(any) error {
	return func(v any) error {
		if err := jsonform.Decode(data, v); err != nil {
			return fmt.Errorf("%s (JSON form): %w", file, err)
		}
		return nil
	}
}

// Signature is a known error text and what it means. The catalog is data
// (catalog/signatures.yaml, embedded), so that adding a signature needs no
// code, and users add their own with --rules.
type Signature struct {
	ID         string   `yaml:"id" json:"id"`
	Pattern    string   `yaml:"pattern" json:"pattern"`
	Category   Category `yaml:"category" json:"category"`
	Severity   Severity `yaml:"severity" json:"severity"`
	Confidence float64  `yaml:"confidence" json:"confidence"`
	Outcome    Outcome  `yaml:"outcome" json:"outcome"`
	// Phase, when set, is the phase the signature means, whatever the
	// timeline says (a Ray placement wait is distributed init).
	Phase      Phase    `yaml:"phase" json:"phase"`
	Title      string   `yaml:"title" json:"title"`
	Remedy     string   `yaml:"remedy" json:"remedy"`
	References []string `yaml:"references" json:"references"`
	// Affected is the versions that print the message, a package and a
	// range in pip's notation ("nccl >=2.5.6, <2.30.3"; clauses of several
	// packages joined by ";"); Fixed the first release with the fix ("vllm
	// 0.8.5"). Ranges derived from release tags (catalog/versions.yaml,
	// written by scripts/catalog-versions) fill Affected where it is empty.
	Affected string `yaml:"affected" json:"affected"`
	Fixed    string `yaml:"fixed" json:"fixed"`
	// Source says where the message is printed, for scripts/catalog-versions:
	// a repository and a fixed string of the code that prints it.
	Source []SourceProbe `yaml:"source" json:"source"`
	// Levels, when set, restricts the signature to log lines of these levels
	// (error, warning, info, debug, none for a line without one; critical
	// counts as error). A traceback's exception is an error; a kernel line
	// has no level.
	Levels []string `yaml:"levels" json:"levels"`
	// Owner names the rule that reports this signature; empty means the
	// generic signature rule does.
	Owner string `yaml:"owner" json:"owner"`
	// Layer is "" for an exact signature (one message of one library) and
	// "class" for a class of errors (catalog/exceptions.yaml), which is
	// matched against failure text only and reported by the
	// exception-class rule.
	Layer string `yaml:"layer" json:"layer"`
	// Relay marks a message that reports another failure rather than
	// saying what it was ("Scheduler hit an exception", "Engine core
	// initialization failed. See root cause above."): it names no cause
	// and claims no outcome; the signature rule reports where it points.
	// Relays stay out of the matches other rules read (Index.SigMatches).
	Relay bool `yaml:"relay" json:"relay"`
	// Where says where the signature was defined (file:line), for messages.
	Where string `yaml:"-" json:"-"`

	// Derived are the ranges scripts/catalog-versions found in the release
	// tags of the entry's source repositories, when it ran on them.
	Derived []*DerivedRange `yaml:"-" json:"-"`

	rx       *lazyRegexp
	pf       prefilter
	builtin  bool
	affected Range
	fix      *Fix
	levels   map[facts.Level]bool
}

// SourceProbe is where a catalog message is printed: Text is a fixed
// string of the code that prints it (a format string's stable part), Path
// an optional path (or directory) of Repo to search, Package the name the
// versions are reported under (nccl, vllm, flashinfer ...).
type SourceProbe struct {
	Repo    string `yaml:"repo" json:"repo"`
	Text    string `yaml:"text" json:"text"`
	Path    string `yaml:"path" json:"path"`
	Package string `yaml:"package" json:"package"`
	// FixedBy is the commit that fixed the bug behind the message; the
	// generator reads the first release that contains it as Fixed.
	FixedBy string `yaml:"fixed_by" json:"fixed_by"`
}

// DerivedRange is one entry of catalog/versions.yaml: the release tags of
// a repository whose source holds the entry's message.
type DerivedRange struct {
	ID      string `yaml:"id" json:"id"`
	Repo    string `yaml:"repo" json:"repo"`
	Package string `yaml:"package" json:"package"`
	// Tags is how many release tags were searched; First and Last the
	// first and the last release that hold the text, Gone the first release
	// after Last without it ("" when the newest release has it).
	Tags     int    `yaml:"tags" json:"tags"`
	First    string `yaml:"first" json:"first"`
	Last     string `yaml:"last" json:"last"`
	Gone     string `yaml:"gone" json:"gone"`
	Affected string `yaml:"affected" json:"affected"`
	// Fixed is the first release that contains the probe's fixed_by
	// commit ("flashinfer 0.6.18rc4").
	Fixed string `yaml:"fixed" json:"fixed"`
	// At is the source line at the last release that holds it.
	At string `yaml:"at" json:"at"`
}

// Level names of Signature.Levels.
var levelNames = map[string][]facts.Level{
	"error":   {facts.LevelError, facts.LevelCritical},
	"warning": {facts.LevelWarning},
	"info":    {facts.LevelInfo},
	"debug":   {facts.LevelDebug},
	"none":    {facts.LevelNone},
}

// LevelAllowed reports whether a line of level lv may match the signature.
func (s *Signature) LevelAllowed(lv facts.Level) bool {
	return s.levels == nil || s.levels[lv]
}

// AffectedRange is the parsed Affected.
func (s *Signature) AffectedRange() Range { return s.affected }

// FixedIn is the parsed Fixed, if any.
func (s *Signature) FixedIn() *Fix { return s.fix }

// Match reports whether text holds the signature.
func (s *Signature) Match(text string) bool {
	return s.match(&matchText{text: text})
}

// match is Match on a text whose lower-case form is worked out once for all
// the signatures.
func (s *Signature) match(t *matchText) bool {
	if !s.pf.mayMatch(t) {
		return false
	}
	re := s.Regexp()
	return re != nil && re.MatchString(t.text)
}

// Regexp is the compiled pattern, nil for an entry whose pattern does not
// parse (Check reports it).
func (s *Signature) Regexp() *regexp.Regexp {
	if s.rx == nil {
		return nil
	}
	return s.rx.get()
}

// lazyRegexp compiles a pattern the first time a text gets past its
// prefilter: most entries never do on a given bundle, and compiling all
// of them was a third of every run's fixed cost. Safe for concurrent use
// (the parser's workers match pack signatures while they read).
type lazyRegexp struct {
	pattern string
	once    sync.Once
	re      *regexp.Regexp
}

func (l *lazyRegexp) get() *regexp.Regexp {
	l.once.Do(func() { l.re, _ = regexp.Compile(l.pattern) })
	return l.re
}

// BuiltinCatalog returns the embedded catalog: the signatures, then the
// classes. It is validated by tests, so an error here is a build defect.
// It is parsed once per process (compiling its patterns and prefilters is
// most of coroner's fixed cost, and every run of a bundle derives with it);
// the entries are shared and must not be modified, the slice is the
// caller's.
func BuiltinCatalog() []*Signature { return slices.Clone(builtinOnce()) }

var builtinOnce = sync.OnceValue(parseBuiltinCatalog)

func parseBuiltinCatalog() []*Signature {
	sigs, err := parseCatalog(catdata.Signatures, "catalog/signatures.yaml", decodeJSON(catdata.SignaturesJSON, "catalog/signatures.yaml"))
	if err != nil {
		panic(err)
	}
	classes, err := parseCatalog(catdata.Exceptions, "catalog/exceptions.yaml", decodeJSON(catdata.ExceptionsJSON, "catalog/exceptions.yaml"))
	if err != nil {
		panic(err)
	}
	derived, err := parseDerived(decodeJSON(catdata.VersionsJSON, "catalog/versions.yaml"))
	if err != nil {
		panic(err)
	}
	if err := ApplyDerived(sigs, derived); err != nil {
		panic(err)
	}
	all := append(sigs, classes...)
	for _, s := range all {
		s.builtin = true
	}
	return all
}

// Builtin reports an entry of the embedded catalog.
func (s *Signature) Builtin() bool { return s.builtin }

// ParseDerived reads catalog/versions.yaml.
func ParseDerived(data []byte, file string) ([]*DerivedRange, error) {
	return parseDerived(decodeYAML(data, file))
}

func parseDerived(decode func(any) error) ([]*DerivedRange, error) {
	var ds []*DerivedRange
	if err := decode(&ds); err != nil {
		return nil, err
	}
	return ds, nil
}

// ApplyDerived fills each entry's Affected from the ranges derived from
// release tags (one clause per repository), where the entry has none of
// its own.
func ApplyDerived(sigs []*Signature, ds []*DerivedRange) error {
	byID := map[string]*Signature{}
	for _, s := range sigs {
		byID[s.ID] = s
	}
	var errs []error
	own := map[*Signature]bool{}
	for _, s := range sigs {
		own[s] = s.Affected != ""
	}
	for _, d := range ds {
		s := byID[d.ID]
		if s == nil {
			errs = append(errs, fmt.Errorf("catalog/versions.yaml: %s is no catalog entry (run scripts/catalog-versions again)", d.ID))
			continue
		}
		s.Derived = append(s.Derived, d)
		if d.At != "" && !slices.Contains(s.References, d.At) {
			// The source line at the last release that prints it.
			s.References = append(s.References, d.At)
		}
		if d.Fixed != "" && s.Fixed == "" {
			f, err := ParseFix(d.Fixed)
			if err != nil {
				errs = append(errs, fmt.Errorf("catalog/versions.yaml: %s: %v", d.ID, err))
			} else {
				s.Fixed, s.fix = d.Fixed, &f
			}
		}
		if own[s] || d.Affected == "" {
			continue
		}
		r, err := ParseRange(d.Affected)
		if err != nil {
			errs = append(errs, fmt.Errorf("catalog/versions.yaml: %s: %v", d.ID, err))
			continue
		}
		if s.Affected != "" {
			s.Affected += "; "
		}
		s.Affected += d.Affected
		s.affected = append(s.affected, r...)
	}
	return errors.Join(errs...)
}

// idRE is the form of rule and signature IDs: kebab-case.
var idRE = regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)

// ValidID reports an ID in kebab-case, the form of rule and signature IDs.
func ValidID(id string) bool { return idRE.MatchString(id) }

// LayerClass marks a class of errors (see Signature.Layer).
const LayerClass = "class"

// ParseCatalog reads a catalog and validates every entry, reporting all
// problems at once with file:line.
func ParseCatalog(data []byte, file string) ([]*Signature, error) {
	return parseCatalog(data, file, decodeYAML(data, file))
}

// parseCatalog decodes the entries with decode and checks them; data is
// the YAML, read for the line of each entry.
func parseCatalog(data []byte, file string, decode func(any) error) ([]*Signature, error) {
	var sigs []*Signature
	if err := decode(&sigs); err != nil {
		return nil, err
	}
	lines := entryLines(data)
	var errs []error
	seen := map[string]bool{}
	for i, s := range sigs {
		s.Where = file
		if i < len(lines) {
			s.Where = fmt.Sprintf("%s:%d", file, lines[i])
		}
		var probs []string
		if seen[s.ID] {
			probs = append(probs, fmt.Sprintf("id %q defined twice", s.ID))
		}
		seen[s.ID] = true
		for _, pr := range s.Check() {
			probs = append(probs, pr.Msg)
		}
		if len(probs) > 0 {
			errs = append(errs, fmt.Errorf("%s: signature %s: %s", s.Where, s.ID, strings.Join(probs, "; ")))
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return sigs, nil
}

// Problem is one defect of a catalog entry; Field is the YAML key it is
// about, so that a loader holding the YAML nodes can say where it is.
type Problem struct {
	Field string
	Msg   string
}

// Check validates the entry, parses its pattern (compiled at its first
// use) and fills the defaults (severity error). User packs call it for each
// signature they define.
func (s *Signature) Check() []Problem {
	var probs []Problem
	add := func(field, format string, args ...any) {
		probs = append(probs, Problem{Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	if !ValidID(s.ID) {
		add("id", "id %q is not kebab-case", s.ID)
	}
	s.rx, s.pf = nil, prefilter{}
	tree, err := syntax.Parse(s.Pattern, syntax.Perl)
	if err != nil || s.Pattern == "" {
		add("pattern", "pattern: %v", errOr(err, "empty"))
	} else {
		s.rx = &lazyRegexp{pattern: s.Pattern}
		s.pf = prefilterOf(tree)
	}
	if !s.Category.Valid() && !(s.Relay && s.Category == "") {
		add("category", "category %q is not in the taxonomy", s.Category)
	}
	if s.Relay && (s.Outcome != "" || s.Owner != "" || s.Layer != "" || s.Phase != "") {
		add("relay", "a relay names no cause: it has no outcome, phase, owner or layer")
	}
	if s.Severity == "" {
		s.Severity = SeverityError
	}
	if s.Severity.Rank() < 0 {
		add("severity", "severity %q is not critical, error, warning or info", s.Severity)
	}
	if (s.Confidence <= 0 && !s.Relay) || s.Confidence < 0 || s.Confidence > 1 {
		add("confidence", "confidence %v is not in (0, 1]", s.Confidence)
	}
	if s.Outcome != "" {
		if !s.Outcome.Valid() {
			add("outcome", "outcome %q is not in the taxonomy", s.Outcome)
		}
	}
	if s.Phase != "" && s.Phase.Order() < 0 {
		add("phase", "phase %q is not in the taxonomy", s.Phase)
	}
	if s.Layer != "" && s.Layer != LayerClass {
		add("layer", "layer %q is not \"\" or %q", s.Layer, LayerClass)
	}
	if s.Layer == LayerClass && (s.Owner != "" || s.Outcome != "") {
		add("layer", "a class claims no outcome and has no owner: the exception-class rule reports it")
	}
	if strings.TrimSpace(s.Title) == "" {
		add("title", "empty title")
	}
	s.affected, s.fix, s.levels = nil, nil, nil
	if s.Affected != "" {
		r, err := ParseRange(s.Affected)
		if err != nil {
			add("affected", "affected: %v", err)
		}
		s.affected = r
	}
	if s.Fixed != "" {
		f, err := ParseFix(s.Fixed)
		if err != nil {
			add("fixed", "fixed: %v", err)
		} else {
			s.fix = &f
		}
	}
	for _, l := range s.Levels {
		lvs, ok := levelNames[strings.ToLower(l)]
		if !ok {
			add("levels", "level %q is not error, warning, info, debug or none", l)
			continue
		}
		if s.levels == nil {
			s.levels = map[facts.Level]bool{}
		}
		for _, lv := range lvs {
			s.levels[lv] = true
		}
	}
	for _, p := range s.Source {
		if !strings.Contains(p.Repo, "/") || strings.TrimSpace(p.Text) == "" {
			add("source", "source: want repo (owner/name) and text, got %q and %q", p.Repo, p.Text)
		}
	}
	return probs
}

func errOr(err error, s string) string {
	if err != nil {
		return err.Error()
	}
	return s
}

// entryLines returns the line of each top-level "- " list item.
func entryLines(data []byte) []int {
	var out []int
	for i, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "- ") {
			out = append(out, i+1)
		}
	}
	return out
}

// SigMatch is one place a signature matched.
type SigMatch struct {
	Sig  *Signature
	Src  facts.Source
	Text string
	Time time.Time
	// Event is the log event matched (nil for a kernel line); Log its log.
	Event *facts.LogEvent
	Log   *facts.Log
	// AfterShutdown is set when the line comes after the server was told to
	// stop: errors then are shutdown noise, not the cause of anything.
	AfterShutdown bool
}

// ShutdownLine is the line of the first shutdown event of a log (0 when it
// has none). Signature matches after it are AfterShutdown, and pack rules
// leave the events after it out alike.
func ShutdownLine(l *facts.Log) int {
	for _, e := range l.Events {
		if e.Type == facts.EventShutdown {
			return e.Src.Line
		}
	}
	return 0
}

// matchCatalog runs every signature over the recognized log events, the
// traceback exception lines, the lines nothing recognized (a window of
// them, facts.Log.Unmatched) and the kernel log. A signature matches a line
// once.
func matchCatalog(f *facts.Facts, sigs []*Signature) []SigMatch {
	return MatchSignatures(f, withoutRelays(sigs))
}

// withoutRelays leaves out the relays (Signature.Relay).
func withoutRelays(sigs []*Signature) []*Signature {
	out := make([]*Signature, 0, len(sigs))
	for _, s := range sigs {
		if !s.Relay {
			out = append(out, s)
		}
	}
	return out
}

// MatchSignatures is matchCatalog over the given signatures, relays or not.
func MatchSignatures(f *facts.Facts, sigs []*Signature) []SigMatch {
	var out []SigMatch
	type key struct {
		sig  *Signature
		file string
		line int
	}
	seen := map[key]bool{}
	add := func(m SigMatch) {
		k := key{m.Sig, m.Src.File, m.Src.Line}
		if !seen[k] {
			seen[k] = true
			out = append(out, m)
		}
	}
	packs := packSignatures(sigs)
	for _, l := range f.Logs {
		from := len(out)
		shutdownLine := ShutdownLine(l)
		for _, e := range l.Unmatched {
			mt := matchText{text: e.Msg}
			fail := isFailureText(e)
			for _, sig := range sigs {
				if (fail || sig.Layer != LayerClass) && sig.LevelAllowed(e.Level) && sig.match(&mt) {
					add(SigMatch{Sig: sig, Src: e.Src, Text: e.Msg, Time: e.Time, Event: e, Log: l,
						AfterShutdown: shutdownLine > 0 && e.Src.Line > shutdownLine})
				}
			}
		}
		for _, e := range l.Events {
			texts := []string{e.Msg}
			lines := []int{e.Src.Line}
			// A traceback's exception is an error, whatever the level of
			// the line that announced it.
			levels := []facts.Level{e.Level}
			if tb := e.Traceback; tb != nil {
				texts = append(texts, tb.ExcType+": "+tb.ExcMsg)
				lines = append(lines, e.Src.Line)
				levels = append(levels, facts.LevelError)
				if tb.ExcLine > 0 {
					// The exception line is cited for what it says.
					lines[1] = tb.ExcLine
					if e.Msg == texts[1] {
						lines[0] = tb.ExcLine
						levels[0] = facts.LevelError
					}
				}
			}
			if d, ok := e.Data.(*facts.TracebackInfo); ok && d.FirstExcMsg != "" {
				texts = append(texts, d.FirstExcType+": "+d.FirstExcMsg)
				lines = append(lines, e.Src.Line)
				levels = append(levels, facts.LevelError)
			}
			mts := make([]matchText, len(texts))
			for i, t := range texts {
				mts[i].text = t
			}
			fail := isFailureText(e)
			for _, sig := range sigs {
				if sig.Layer == LayerClass && !fail {
					continue
				}
				for i := range mts {
					if mts[i].text != "" && sig.LevelAllowed(levels[i]) && sig.match(&mts[i]) {
						add(SigMatch{Sig: sig, Src: facts.Source{File: e.Src.File, Line: lines[i]}, Text: mts[i].text, Time: e.Time, Event: e, Log: l,
							AfterShutdown: shutdownLine > 0 && e.Src.Line > shutdownLine})
						break
					}
				}
			}
			// The lines after a bare traceback's exception may be the rest
			// of its message; each is cited at its own line.
			if tb := e.Traceback; tb != nil {
				for _, a := range tb.After {
					for _, sig := range sigs {
						if sig.LevelAllowed(facts.LevelError) && sig.Match(a.Text) {
							add(SigMatch{Sig: sig, Src: facts.Source{File: e.Src.File, Line: a.Line}, Text: a.Text, Time: e.Time, Event: e, Log: l,
								AfterShutdown: shutdownLine > 0 && a.Line > shutdownLine})
						}
					}
				}
			}
		}
		// Lines a pack's signature may match, wherever they are in the log
		// (parser.Options.Watch); matched last, so that a line the parser
		// also kept as a record is cited as that record.
		for _, e := range l.Watched {
			mt := matchText{text: e.Msg}
			fail := isFailureText(e)
			for _, sig := range packs {
				if (fail || sig.Layer != LayerClass) && sig.LevelAllowed(e.Level) && sig.match(&mt) {
					add(SigMatch{Sig: sig, Src: e.Src, Text: e.Msg, Time: e.Time, Event: e, Log: l,
						AfterShutdown: shutdownLine > 0 && e.Src.Line > shutdownLine})
				}
			}
		}
		lm := out[from:]
		sort.SliceStable(lm, func(a, b int) bool { return lm[a].Src.Line < lm[b].Src.Line })
	}
	for _, k := range f.Kernel {
		mt := matchText{text: k.Text}
		for _, sig := range sigs {
			if sig.LevelAllowed(facts.LevelNone) && sig.match(&mt) {
				add(SigMatch{Sig: sig, Src: k.Src, Text: k.Text, Time: k.Time})
			}
		}
	}
	return out
}

// isFailureText reports a record that may say what failed: an exception,
// a warning or an error, or a line whose level nobody printed (a paste, a
// library's own output). INFO and DEBUG lines of a levelled format are
// progress, whatever their words.
func isFailureText(e *facts.LogEvent) bool {
	switch {
	case e.Traceback != nil, e.Type == facts.EventNCCLWarn, e.Type == facts.EventOOM:
		return true
	case e.Level == facts.LevelInfo || e.Level == facts.LevelDebug:
		return false
	}
	return true
}

// Matches returns the catalog matches of the signatures with the given ids,
// or of the given owner rule when ids is empty.
func (idx *Index) Matches(owner string, ids ...string) []SigMatch {
	var out []SigMatch
	for _, m := range idx.SigMatches {
		if len(ids) == 0 && m.Sig.Owner == owner {
			out = append(out, m)
			continue
		}
		for _, id := range ids {
			if m.Sig.ID == id {
				out = append(out, m)
				break
			}
		}
	}
	return out
}

// MatchPhase is the phase the process that wrote a matched log line was in
// at that line, or otherwise for a match that is no log event (a kernel
// line).
func (idx *Index) MatchPhase(m SigMatch, otherwise Phase) Phase {
	if m.Log != nil && m.Event != nil {
		if pl := idx.PlaceFailure(m.Log, m.Event); pl.Phase != "" {
			return pl.Phase
		}
		return idx.PhaseAt(m.Log, m.Event.Proc, m.Src.Line)
	}
	return otherwise
}

// LiveMatches is Matches(owner) without the matches that are shutdown
// noise.
func (idx *Index) LiveMatches(owner string) []SigMatch {
	var out []SigMatch
	for _, m := range idx.Matches(owner) {
		if !m.AfterShutdown {
			out = append(out, m)
		}
	}
	return out
}

// SignatureFailed reports a live catalog match that claims the run failed
// (an entry with an outcome): an error the parser kept as no failure event
// of its own, such as NCCL's INFO line that its kernels do not fit the GPU.
func (idx *Index) SignatureFailed() bool {
	for _, m := range idx.SigMatches {
		if !m.AfterShutdown && m.Sig.Outcome == OutcomeCrashed {
			return true
		}
	}
	return false
}
