package reports

import (
	"fmt"
	"io"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/coroner-dev/coroner/internal/escape"
	"github.com/coroner-dev/coroner/internal/labels"
)

// The answer to an issue. When the report's sources are blocks of an
// issue (coroner analyze ISSUE.md, gh's issue JSON, an event payload), the
// GitHub brief speaks to the reporter: it quotes the lines it relied on at
// their place in the issue ("comment 2, lines 14-30"), says what evidence
// is missing and the command that collects it, and lists the labels the
// verdict maps to. An issue with nothing diagnosable gets a short comment
// that asks for the evidence, never a guess.
//
// Issue text is hostile, and this comment is posted where it pings and
// links: every quote stays in a fence longer than any backtick run in it
// or goes through internal/escape, and the whole comment then loses what
// GitHub would turn into a mention, a link or a reference outside code
// (safeComment). The comment holds no raw HTML of its own, so nothing in
// it can close a <details> or comment out the rest.

// fromIssue reports whether the report's evidence comes from an issue.
func (r *Report) fromIssue() bool {
	for _, s := range r.Bundle.Sources {
		if s.Part != nil || s.Kind == "markdown" || s.Kind == "github-issue" || s.Kind == "github-event" {
			return true
		}
	}
	return false
}

// diagnosable: the report says something about the run.
func (r *Report) diagnosable() bool { return labels.Diagnosable(r.LabelInput()) }

// LabelInput is what a label table maps of the report: the verdict and
// the GPUs.
func (r *Report) LabelInput() labels.Input {
	in := labels.Input{Outcome: r.Verdict.Outcome, Phase: r.Verdict.Phase}
	for _, c := range r.Verdict.Causes {
		in.Causes = append(in.Causes, labels.Cause{Category: c.Category, Confidence: c.Confidence})
	}
	for _, g := range r.Environment.GPUs {
		in.GPUs = append(in.GPUs, labels.GPU{Model: g.Model, Arch: g.Arch})
	}
	return in
}

func gitHubIssue(w io.Writer, r *Report, ex Excerpts) error {
	var b strings.Builder
	if !r.diagnosable() {
		askForEvidence(&b, r)
	} else {
		briefTop(&b, r)
		tail := issueTail(r)
		briefQuotes(&b, r, ex, issuePlace{r}, utf8.RuneCountInString(tail))
		b.WriteString(tail)
	}
	out := safeComment(b.String())
	if utf8.RuneCountInString(out) > GitHubLimit {
		// Escaping lengthened it past the limit: cut on a line.
		out = fitComment(out, issueFooter(r))
	}
	_, err := io.WriteString(w, out)
	return err
}

// issueTail is what follows the evidence: what is missing, the labels,
// the footer.
func issueTail(r *Report) string {
	var b strings.Builder
	if m := missingEvidence(r); len(m) > 0 {
		b.WriteString("**What would make this diagnosis surer**\n\n")
		for _, s := range m {
			fmt.Fprintf(&b, "- %s\n", s)
		}
		b.WriteString("\n")
	}
	labelLine(&b, r)
	b.WriteString(issueFooter(r))
	return b.String()
}

func labelLine(b *strings.Builder, r *Report) {
	if len(r.Labels) == 0 {
		return
	}
	var ls []string
	for _, l := range r.Labels {
		ls = append(ls, escape.MarkdownCode(l))
	}
	fmt.Fprintf(b, "**Suggested labels:** %s\n\n", strings.Join(ls, " "))
}

// issueFooter says what coroner read of the issue.
func issueFooter(r *Report) string {
	hows := map[string]int{}
	blocks := 0
	for _, s := range r.Bundle.Sources {
		if s.Part != nil {
			blocks++
			hows[s.Part.How]++
		}
	}
	var parts []string
	for _, h := range []struct{ how, one, many string }{
		{"fence", "fenced block", "fenced blocks"}, {"details", "details block", "details blocks"},
		{"pre", "pre block", "pre blocks"}, {"unfenced", "unfenced log", "unfenced logs"},
	} {
		if n := hows[h.how]; n > 0 {
			parts = append(parts, plural(n, h.one, h.many))
		}
	}
	tool := escape.Markdown(r.Tool.Name) + " " + escape.Markdown(r.Tool.Version)
	if blocks == 0 {
		return fmt.Sprintf("*%s found no block of evidence in this issue; nothing in it was run.*\n", tool)
	}
	read := plural(blocks, "block", "blocks") + " (" + strings.Join(parts, ", ") + ")"
	if !r.diagnosable() {
		return fmt.Sprintf("*%s read %s of this issue and found nothing it could diagnose; nothing in it was run.*\n", tool, read)
	}
	return fmt.Sprintf("*%s read %s of this issue; nothing in it was run. The full postmortem: `coroner analyze ISSUE --format md`.*\n",
		tool, read)
}

// engineOf is the engine the issue is about, "" when unknown.
func engineOf(r *Report) string {
	e := strings.ToLower(engineName(r))
	switch {
	case strings.Contains(e, "vllm"):
		return "vllm"
	case strings.Contains(e, "sglang"):
		return "sglang"
	}
	return ""
}

// envCommand is how a reporter collects the environment report.
func envCommand(engine string) string {
	switch engine {
	case "vllm":
		return "`python -m vllm.collect_env`"
	case "sglang":
		return "`python -m sglang.check_env`"
	}
	return "`python -m vllm.collect_env` (vLLM) or `python -m sglang.check_env` (SGLang)"
}

func (r *Report) hasKind(kinds ...string) bool {
	for _, s := range r.Bundle.Sources {
		for _, k := range kinds {
			if s.Kind == k {
				return true
			}
		}
	}
	return false
}

// missingEvidence says, for a diagnosed issue, what evidence it lacks and
// how to collect it: the rules' own requests, and the environment report
// when the issue has none.
func missingEvidence(r *Report) []string {
	var out []string
	if !r.hasKind("collect-env", "check-env", "env", "pip-list") {
		out = append(out, "the environment: the output of "+envCommand(engineOf(r))+", in a `<details>` block")
	}
	if !r.hasKind("cmdline") {
		out = append(out, "the exact command that started the server, in a code fence")
	}
	seen := map[string]bool{}
	for _, in := range r.Inconclusive {
		if in.Collect == "" || seen[in.Collect] || len(out) >= 6 {
			continue
		}
		seen[in.Collect] = true
		what := strings.Join(in.Missing, "; ")
		if what != "" {
			out = append(out, mdRich(truncate(what, 300))+": "+mdRich(truncate(in.Collect, 300)))
		} else {
			out = append(out, mdRich(truncate(in.Collect, 300)))
		}
	}
	return out
}

// askForEvidence is the comment on an issue with nothing diagnosable.
func askForEvidence(b *strings.Builder, r *Report) {
	b.WriteString("### coroner: nothing to diagnose yet\n\n")
	b.WriteString("coroner found no server log, traceback, environment report or GPU snapshot in this issue that it " +
		"could read, so it does not guess. To get a diagnosis, please add:\n\n")
	fmt.Fprintf(b, "1. The environment: the output of %s, in a `<details>` block.\n", envCommand(engineOf(r)))
	b.WriteString("2. The exact command that started the server, in a code fence.\n")
	b.WriteString("3. The server's whole log, from the launch to the failure, in a code fence (or attached as a file).\n")
	b.WriteString("4. For a hang or a crash on the GPU: `nvidia-smi -q` taken while it happens.\n\n")
	b.WriteString("Or take all of it at once: `coroner collect --match vllm -o bundle.tar.zst` (or `--match sglang`) " +
		"while the server runs or hangs writes the log, the processes, `nvidia-smi -q`, the kernel log and the " +
		"environment into one redacted bundle to attach here.\n\n")
	labelLine(b, r)
	b.WriteString(issueFooter(r))
}

// issuePlace cites the blocks of an issue at their place in it.
type issuePlace struct{ r *Report }

func (p issuePlace) part(file string) *SourcePart {
	for i := range p.r.Bundle.Sources {
		if s := &p.r.Bundle.Sources[i]; s.Path == file {
			return s.Part
		}
	}
	return nil
}

// docName names a document of the issue in words.
func docName(sp *SourcePart) string {
	switch sp.Doc {
	case "":
		return "the issue"
	case "body":
		return "the issue's text"
	case "comment":
		return "the new comment"
	}
	return sp.Doc
}

var howWords = map[string]string{"fence": "a fenced block", "pre": "a pre block", "details": "a details block", "unfenced": "an unfenced log"}

func (p issuePlace) header(file string) string {
	sp := p.part(file)
	if sp == nil {
		return file
	}
	lines := fmt.Sprintf("line %d", sp.FirstLine)
	if sp.LastLine > sp.FirstLine {
		lines = fmt.Sprintf("lines %d-%d", sp.FirstLine, sp.LastLine)
	}
	return fmt.Sprintf("%s, %s (%s, %s)", docName(sp), lines, howWords[sp.How], file)
}

func (p issuePlace) line(file string, n int) int {
	if sp := p.part(file); sp != nil && n > 0 {
		return sp.FirstLine + n - 1
	}
	return n
}

// also lists each line once: a finding often cites one line for several
// reasons.
func (issuePlace) also(cites []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, c := range cites {
		if !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	return out
}

func (p issuePlace) cite(file string, n int) string {
	sp := p.part(file)
	if sp == nil {
		return loc(file, n)
	}
	if n <= 0 {
		return fmt.Sprintf("%s (%s)", docName(sp), escape.Line(file))
	}
	return fmt.Sprintf("%s line %d", docName(sp), sp.FirstLine+n-1)
}

// What GitHub turns into a ping, a link or a reference in comment text:
// @name (and an e-mail address), a URL with a scheme or www., #123,
// owner/repo#123 and GH-123. A zero-width space after the @, the colon, "www" or the "#"
// leaves the text as it reads and takes the meaning away.
var (
	mentionRe = regexp.MustCompile(`@([A-Za-z0-9])`)
	schemeRe  = regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.-]{1,15}):(//)?`)
	wwwRe     = regexp.MustCompile(`(?i)www\.`) // also inside a word: "000www.x"
)

const zwsp = "\u200b"

// safeComment neutralizes mentions, autolinks and issue references in the
// text of a comment outside its fences (where GitHub reads none), inline
// code spans included: a renderer pairs backticks across the lines of a
// paragraph, so which text a span covers is not decidable line by line, and
// GitHub links nothing inside code anyway, so a zero-width space there
// changes nothing it shows. The comment's own fences start at the beginning
// of a line.
func safeComment(md string) string {
	var out strings.Builder
	fence := ""
	for _, line := range strings.SplitAfter(md, "\n") {
		t := strings.TrimRight(line, "\n")
		if fence != "" {
			if strings.HasPrefix(t, fence) && strings.Trim(t, "`") == "" {
				fence = ""
			}
			out.WriteString(line)
			continue
		}
		if strings.HasPrefix(t, "```") {
			n := len(t) - len(strings.TrimLeft(t, "`"))
			fence = strings.Repeat("`", n)
			out.WriteString(line)
			continue
		}
		out.WriteString(neutralize(line))
	}
	return out.String()
}

func neutralize(s string) string {
	if !strings.ContainsAny(s, "@:#wWG") {
		return s
	}
	s = mentionRe.ReplaceAllString(s, "@"+zwsp+"$1")
	s = schemeRe.ReplaceAllStringFunc(s, func(m string) string {
		if !strings.HasSuffix(m, "//") && !isScheme(strings.TrimSuffix(m, ":")) {
			return m
		}
		i := strings.IndexByte(m, ':')
		return m[:i+1] + zwsp + m[i+1:]
	})
	// A scheme glued to a word before it ("000000https://") is no scheme
	// to the regexp's \b, and some autolinkers still see the URL in it:
	// every "://" left is broken too.
	s = strings.ReplaceAll(s, "://", ":"+zwsp+"//")
	s = wwwRe.ReplaceAllStringFunc(s, func(m string) string { return m[:3] + zwsp + m[3:] })
	return breakRefs(s)
}

// breakRefs puts a zero-width space between "#" or "GH-" and a digit
// (also in "&#64;": escaping has made every entity text already).
func breakRefs(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		b.WriteByte(s[i])
		if i+1 < len(s) && digitByte(s[i+1]) && (s[i] == '#' || s[i] == '-' && i >= 2 && s[i-2:i] == "GH") {
			b.WriteString(zwsp)
		}
	}
	return b.String()
}

func digitByte(c byte) bool { return '0' <= c && c <= '9' }

// isScheme reports the schemes GitHub links without "//".
func isScheme(s string) bool {
	switch strings.ToLower(s) {
	case "mailto", "xmpp", "javascript", "data", "vbscript", "tel", "sms":
		return true
	}
	return false
}
