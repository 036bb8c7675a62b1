package reports

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/coroner-dev/coroner/internal/escape"
	"github.com/coroner-dev/coroner/parser/issue"
)

// GitHubLimit is the most characters the brief may have: a GitHub comment
// holds 65,536, and the brief leaves room for the reporter's own words.
const GitHubLimit = 60000

// briefContext is how many lines around a cited line the brief quotes.
const briefContext = 2

// briefEvidence is how many cited lines of one finding the brief quotes.
const briefEvidence = 8

// briefLine is the longest quoted line, in characters.
const briefLine = 240

// Excerpts holds lines of the bundle's files, by path (as the report names
// it) and line number, for the brief to quote evidence with its context.
type Excerpts map[string]map[int]string

// ExcerptWants lists, per file, the lines the brief would quote: the lines
// its findings cite and briefContext lines on each side, sorted.
func ExcerptWants(r *Report) map[string][]int {
	want := map[string][]int{}
	for _, f := range briefFindings(r) {
		for i, e := range f.Evidence {
			if i == briefEvidence || e.Line <= 0 || e.File == "" {
				break
			}
			for l := max(1, e.Line-briefContext); l <= e.Line+briefContext; l++ {
				want[e.File] = append(want[e.File], l)
			}
		}
	}
	for k, v := range want {
		slices.Sort(v)
		want[k] = slices.Compact(v)
	}
	return want
}

// maxExcerptLine bounds what is kept of one line while reading excerpts.
const maxExcerptLine = 4 << 10

// ReadExcerpts reads the wanted lines of the bundle. walk must call visit
// once per file of the bundle, in any order, with the file's path as the
// report names it; visit reads only files it wants and stops after the
// last wanted line. Lines are numbered the way the parsers number them
// (split at "\n", a trailing "\r" dropped). An issue document that the
// analysis cut into blocks (issue.md#1, issue.md#2, ...) is read as those
// blocks, by their names.
func ReadExcerpts(walk func(visit func(path string, r io.Reader) error) error, want map[string][]int) (Excerpts, error) {
	ex := Excerpts{}
	read := func(path string, r io.Reader) error {
		readExcerpt(ex, want[path], path, r)
		return nil
	}
	err := walk(func(path string, r io.Reader) error {
		for w := range want {
			if strings.HasPrefix(w, path+"#") {
				return issue.Visit(path, r, read)
			}
		}
		return read(path, r)
	})
	return ex, err
}

// readExcerpt reads the wanted lines of one file into ex, up to the last.
func readExcerpt(ex Excerpts, lines []int, path string, r io.Reader) {
	if len(lines) == 0 || r == nil {
		return
	}
	got := map[int]string{}
	last := lines[len(lines)-1]
	br := bufio.NewReaderSize(r, 64<<10)
	for n := 1; n <= last; n++ {
		line, err := readLine(br)
		if err != nil && line == nil {
			break
		}
		if contains1(lines, n) {
			got[n] = string(bytes.TrimSuffix(line, []byte{'\r'}))
		}
		if err != nil {
			break
		}
	}
	ex[path] = got
}

// readLine returns the next line without its "\n", at most maxExcerptLine
// bytes of it; the rest of a longer line is skipped. err is io.EOF after the
// last line.
func readLine(br *bufio.Reader) ([]byte, error) {
	var out []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(out) < maxExcerptLine {
			room := maxExcerptLine - len(out)
			out = append(out, chunk[:min(room, len(chunk))]...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			if len(out) == 0 {
				return nil, err
			}
			return bytes.TrimSuffix(out, []byte{'\n'}), err
		}
		return bytes.TrimSuffix(out, []byte{'\n'}), nil
	}
}

// briefFindings are the findings whose evidence the brief quotes: the ranked
// causes first, then every finding of warning severity or worse.
func briefFindings(r *Report) []Finding {
	var out []Finding
	used := make([]bool, len(r.Findings))
	for _, c := range r.Verdict.Causes {
		for i, f := range r.Findings {
			if !used[i] && c.names(f) {
				used[i] = true
				out = append(out, f)
				break
			}
		}
	}
	for i, f := range r.Findings {
		if !used[i] && f.Severity != "info" {
			out = append(out, f)
		}
	}
	return out
}

// GitHub writes an issue-sized brief: the verdict, what to do, the
// hypotheses, the timeline, and only the cited evidence lines with a few
// lines of context (from ex; the cited text alone where ex lacks the file),
// all in under GitHubLimit characters. Evidence that does not fit is left
// out, and the brief says so.
func GitHub(w io.Writer, r *Report, ex Excerpts) error {
	if r.fromIssue() {
		return gitHubIssue(w, r, ex)
	}
	var b strings.Builder
	briefTop(&b, r)
	footer := fmt.Sprintf("*%s %s, %s. The full postmortem: `coroner analyze --format md`.*\n",
		escape.Markdown(r.Tool.Name), escape.Markdown(r.Tool.Version), plural(len(r.Bundle.Sources), "source", "sources"))
	briefQuotes(&b, r, ex, filePlace{}, utf8.RuneCountInString(footer))
	b.WriteString(footer)
	_, err := io.WriteString(w, fitComment(b.String(), footer))
	return err
}

// briefTop is the brief down to its evidence: the verdict, the key facts,
// what to do, the hypotheses and the timeline.
func briefTop(b *strings.Builder, r *Report) {
	v := r.Verdict
	title := "coroner: " + orDash(v.Outcome)
	if v.Phase != "" {
		title += " in " + v.Phase
	}
	if v.StalledForS > 0 {
		title += ", silent " + humanSeconds(float64(v.StalledForS))
	}
	fmt.Fprintf(b, "### %s\n\n", escape.Markdown(title))
	fmt.Fprintf(b, "**%s**\n\n", mdRich(truncate(headline(r), 600)))
	var facts []string
	if e := engineName(r); e != "" {
		facts = append(facts, "engine "+escape.MarkdownCode(e))
	}
	if g := gpuSummary(r); g != "" {
		facts = append(facts, escape.Markdown(g))
	}
	for _, it := range r.Environment.Software {
		if it.Name == "driver" || it.Name == "torch" {
			facts = append(facts, it.Name+" "+escape.MarkdownCode(it.Value))
		}
	}
	for _, it := range r.Environment.ServerArgs {
		if it.Name == "attention_backend" || it.Name == "tp_size" || it.Name == "model_path" || it.Name == "model" {
			facts = append(facts, escape.MarkdownCode("--"+strings.ReplaceAll(it.Name, "_", "-")+" "+truncate(it.Value, 80)))
		}
	}
	if len(facts) > 0 {
		fmt.Fprintf(b, "%s\n\n", strings.Join(facts, " · "))
	}

	if as := actions(r); len(as) > 0 {
		b.WriteString("**What to do**\n\n")
		for i, a := range as {
			if i == 5 {
				break
			}
			fmt.Fprintf(b, "%d. %s\n", i+1, mdRich(truncate(a.Remedy, 800)))
		}
		b.WriteString("\n")
	}

	if len(v.Causes) > 0 || len(r.RuledOut) > 0 {
		b.WriteString("**Hypotheses**\n\n")
		for i, c := range v.Causes {
			if i == 5 {
				break
			}
			fmt.Fprintf(b, "%d. **%s** (%s, %.2f)", i+1, escape.Markdown(truncate(c.Title, 200)), escape.MarkdownCode(orDash(c.Category)), c.Confidence)
			if c.Why != "" {
				fmt.Fprintf(b, ": %s", mdRich(truncate(sentence(c.Why), 600)))
			}
			b.WriteString("\n")
		}
		if len(r.RuledOut) > 0 {
			var names []string
			for _, ro := range r.RuledOut {
				n := escape.Markdown(ro.Title)
				if ro.Category != "" {
					n += " (" + escape.MarkdownCode(ro.Category) + ")"
				}
				names = append(names, n)
			}
			if len(v.Causes) > 0 {
				b.WriteString("\n")
			}
			fmt.Fprintf(b, "Ruled out: %s.\n", strings.Join(names, "; "))
		}
		b.WriteString("\n")
	}

	briefTimeline(b, r)
}

// briefQuotes quotes the evidence, finding by finding, while it fits
// with reserve more characters after it; place says where a cited line is.
func briefQuotes(b *strings.Builder, r *Report, ex Excerpts, place place, reserve int) {
	fs := briefFindings(r)
	if len(fs) > 0 {
		b.WriteString("**Evidence**\n\n")
	}
	quoted := map[string]bool{}
	omitted := 0
	for i, f := range fs {
		sec := briefEvidenceBlock(f, ex, quoted, place)
		note := ""
		if rest := len(fs) - i - 1; rest > 0 {
			note = fmt.Sprintf("*Evidence of %s left out to fit one comment.*\n\n", plural(rest+1, "more finding", "more findings"))
		}
		if utf8.RuneCountInString(b.String())+utf8.RuneCountInString(sec)+utf8.RuneCountInString(note)+reserve+200 > GitHubLimit {
			omitted = len(fs) - i
			break
		}
		b.WriteString(sec)
	}
	if omitted > 0 {
		fmt.Fprintf(b, "*Evidence of %s left out to fit one comment.*\n\n", plural(omitted, "more finding", "more findings"))
	}
}

// fitComment cuts a brief that is still too long on a line and ends it
// with the footer. Only a bundle with absurd verdict text gets there.
func fitComment(out, footer string) string {
	if utf8.RuneCountInString(out) <= GitHubLimit {
		return out
	}
	rs := []rune(out)[:GitHubLimit-len(footer)-64]
	cut := string(rs)
	if i := strings.LastIndexByte(cut, '\n'); i > 0 {
		cut = cut[:i+1]
	}
	return cut + "\n*Cut to fit one comment.*\n\n" + footer
}

// briefTimeline is the timeline with ranks collapsed, at most 12 row groups.
func briefTimeline(b *strings.Builder, r *Report) {
	if len(r.Timeline) == 0 {
		return
	}
	cf := newClockFormat(timelineStamps(r)...)
	when := "UTC"
	if cf.sameDay {
		when += ", " + cf.day
	}
	fmt.Fprintf(b, "**Timeline** (%s)\n\n| process | phase | start | end | duration |\n|---|---|---|---|---|\n", when)
	groups := timelineGroups(r.Timeline)
	for gi, g := range groups {
		if gi == 12 {
			fmt.Fprintf(b, "\n%s more.\n", plural(len(groups)-12, "row group", "row groups"))
			break
		}
		for si, s := range g.Spans {
			name := ""
			if si == 0 {
				name = escape.Markdown(g.Label)
			}
			end := cf.show(s.End)
			if s.Open {
				end += " (open)"
				if w := openEnding(r); w != "" {
					end = cf.show(s.End) + " (" + w + ")"
				}
			}
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", name, escape.Markdown(s.Phase), escape.Markdown(cf.show(s.Start)), escape.Markdown(end), humanSeconds(s.DurationS))
		}
	}
	b.WriteString("\n")
}

// briefEvidenceBlock quotes a finding's cited lines with their context,
// file by file. Lines quoted for an earlier finding are referred to, not
// repeated.
func briefEvidenceBlock(f Finding, ex Excerpts, quoted map[string]bool, place place) string {
	var b strings.Builder
	fmt.Fprintf(&b, "**%s** · %s · rule %s\n\n", escape.Markdown(truncate(f.Title, 200)), escape.Markdown(f.Severity), escape.MarkdownCode(f.Rule))
	type fileCites struct {
		file  string
		lines []int
		texts map[int]string
	}
	var files []*fileCites
	var again, bare []string
	for i, e := range f.Evidence {
		if i == briefEvidence {
			bare = append(bare, fmt.Sprintf("and %d more", len(f.Evidence)-briefEvidence))
			break
		}
		key := loc(e.File, e.Line)
		if quoted[key] {
			again = append(again, place.cite(e.File, e.Line))
			continue
		}
		quoted[key] = true
		if e.Line <= 0 {
			bare = append(bare, place.cite(e.File, e.Line)+": "+e.Text)
			continue
		}
		var fc *fileCites
		for _, x := range files {
			if x.file == e.File {
				fc = x
			}
		}
		if fc == nil {
			fc = &fileCites{file: e.File, texts: map[int]string{}}
			files = append(files, fc)
		}
		fc.lines = append(fc.lines, e.Line)
		fc.texts[e.Line] = e.Text
	}
	var body strings.Builder
	for _, fc := range files {
		sort.Ints(fc.lines)
		lines := ex[fc.file]
		fmt.Fprintf(&body, "%s\n", quoteLine(place.header(fc.file)))
		if len(lines) == 0 {
			for _, l := range fc.lines {
				fmt.Fprintf(&body, "> %d | %s\n", place.line(fc.file, l), quoteLine(fc.texts[l]))
			}
			continue
		}
		width := len(fmt.Sprint(place.line(fc.file, fc.lines[len(fc.lines)-1]+briefContext)))
		prev := 0
		for _, c := range fc.lines {
			from := max(1, c-briefContext, prev+1)
			if prev > 0 && from > prev+1 {
				body.WriteString("  " + strings.Repeat(" ", width) + " ⋮\n")
			}
			for l := from; l <= c+briefContext; l++ {
				text, ok := lines[l]
				if !ok {
					if l == c {
						text = fc.texts[l]
					} else {
						continue
					}
				}
				mark := " "
				if contains1(fc.lines, l) {
					mark = ">"
				}
				fmt.Fprintf(&body, "%s %*d | %s\n", mark, width, place.line(fc.file, l), quoteLine(text))
				prev = l
			}
		}
	}
	for _, s := range bare {
		fmt.Fprintf(&body, "%s\n", quoteLine(s))
	}
	if body.Len() > 0 {
		fc := fence(body.String())
		fmt.Fprintf(&b, "%stext\n%s%s\n\n", fc, body.String(), fc)
	}
	if len(again) > 0 {
		fmt.Fprintf(&b, "Also cites %s (quoted above).\n\n", escape.Markdown(strings.Join(place.also(again), ", ")))
	}
	return b.String()
}

// contains1 reports whether the sorted v holds x.
func contains1(v []int, x int) bool {
	_, ok := slices.BinarySearch(v, x)
	return ok
}

// quoteLine is one evidence line made printable and short.
func quoteLine(s string) string {
	s = strings.ReplaceAll(escape.Text(s), "\n", " ")
	s = strings.ReplaceAll(s, "\t", "    ")
	return truncate(s, briefLine)
}

// place says where a cited line is: the header above a file's quoted
// lines, the number a quoted line shows, a citation in words, and the
// citations of lines quoted before.
type place interface {
	header(file string) string
	line(file string, n int) int
	cite(file string, n int) string
	also(cites []string) []string
}

// filePlace cites the bundle's files as they are.
type filePlace struct{}

func (filePlace) header(file string) string      { return file }
func (filePlace) line(_ string, n int) int       { return n }
func (filePlace) cite(file string, n int) string { return loc(file, n) }
func (filePlace) also(cites []string) []string   { return cites }
