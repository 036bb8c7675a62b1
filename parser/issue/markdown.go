package issue

import (
	"bytes"
	"fmt"
	"html"
	"regexp"
	"strings"
)

// The markdown read here is what GitHub shows of an issue, line by line:
// fenced code (``` or ~~~, three or more, closed by a fence of the same
// character at least as long, or by the end of the quote or document it
// opened in), <pre> blocks, <details> blocks with their <summary>, HTML
// comments (hidden, so skipped), headings, block quotes ("> " markers are
// removed from what a block holds) and the prose between them, where
// unfenced runs of log lines are looked for.

// splitter cuts the documents of one input into blocks.
type splitter struct {
	input string
	out   *Split
	full  bool // MaxBlocks reached

	// Per document.
	doc   string
	lines []string // without "\n" and a trailing "\r"
	ctx   context
	run   run
	para  []int // the lines of the paragraph being read
	cand  run   // a lone technical line that may start a run
	dets  []*details
	sect  *details // an environment section being read
}

// context is what the issue said last before a block: the heading it is
// under and the last sentence of prose.
type context struct {
	heading string
	prose   string
	proseAt int // the line of prose, 0-based
}

// details is an open <details> block.
type details struct {
	summary string
	// free are the lines of its text outside any structure, held until
	// the block closes: a <details> that holds only text is one block.
	free []int
	// structured is set once a fence, a <pre> or a nested <details>
	// opened inside: then its free lines are prose like any other.
	structured bool
	line       int
}

var (
	headingRe = regexp.MustCompile(`^#{1,6}(\s+(.*?))?\s*#*\s*$`)
	boldRe    = regexp.MustCompile(`^\*\*([^*]{1,80})\*\*:?\s*$`)
	tagRe     = regexp.MustCompile(`<[^>]*>`)
	summaryRe = regexp.MustCompile(`(?is)<summary[^>]*>(.*?)</summary>`)
)

// document splits one document.
func (s *splitter) document(d document) {
	s.doc = d.name
	s.ctx = context{}
	s.run = run{}
	s.cand = run{}
	s.para = nil
	s.dets = nil
	s.sect = nil
	s.lines = splitLines(d.text)
	inComment := false
	for i := 0; i < len(s.lines); i++ {
		raw := s.lines[i]
		depth, body := unquote(raw)
		trim := strings.TrimSpace(body)
		if inComment {
			s.flush()
			if strings.Contains(trim, "-->") {
				inComment = false
			}
			continue
		}
		if strings.HasPrefix(trim, "<!--") {
			s.flush()
			if !strings.Contains(trim[4:], "-->") {
				inComment = true
			}
			continue
		}
		if ch, n, indent, info, ok := fenceOpen(body); ok {
			s.structure()
			i = s.fence(i, depth, ch, n, indent, info)
			continue
		}
		low := strings.ToLower(trim)
		switch {
		case strings.HasPrefix(low, "<pre"):
			s.structure()
			i = s.pre(i)
			continue
		case strings.HasPrefix(low, "<details"):
			s.structure()
			dt := &details{line: i + 1}
			s.dets = append(s.dets, dt)
			from := i
			i = s.summary(i, dt)
			for k := from; k <= i; k++ {
				if strings.Contains(strings.ToLower(s.lines[k]), "</details") {
					s.closeDetails() // all on one line: nothing between the tags is a block
					break
				}
			}
			continue
		case strings.HasPrefix(low, "</details"):
			s.closeDetails()
			continue
		case strings.HasPrefix(low, "<summary"):
			// A <summary> not right after its <details> tag.
			if n := len(s.dets); n > 0 {
				i = s.summary(i, s.dets[n-1])
			}
			continue
		}
		if m := headingRe.FindStringSubmatch(trim); m != nil && depth == 0 && !technical(trim) {
			s.heading(i, m[2])
			continue
		}
		if m := boldRe.FindStringSubmatch(trim); m != nil && depth == 0 {
			s.heading(i, m[1])
			continue
		}
		if n := len(s.dets); n > 0 && !s.dets[n-1].structured {
			s.dets[n-1].free = append(s.dets[n-1].free, i)
			continue
		}
		if s.sect != nil && !s.sect.structured && len(s.dets) == 0 {
			s.sect.free = append(s.sect.free, i)
			continue
		}
		s.free(i)
	}
	s.endSection()
	s.flush()
	for len(s.dets) > 0 {
		dt := s.dets[len(s.dets)-1]
		s.note(dt.line, "a <details> block opened here is never closed: its text runs to the end of the document")
		s.closeDetails()
	}
}

// heading ends a section and opens the next. A section the heading calls
// the environment ("Your current environment", SGLang's "Environment") is
// held like a <details>: when it holds no fence, its text is one block, an
// environment report pasted as it printed, banners, blank lines, tables
// and all.
func (s *splitter) heading(i int, text string) {
	s.endSection()
	s.flush()
	s.ctx = context{heading: text}
	if hintFor(text) == "env.txt" {
		s.sect = &details{summary: text, line: i + 1}
	}
}

// endSection ends an environment section: its text is one block when two
// of its lines are an environment report's, else prose like any other.
func (s *splitter) endSection() {
	sect := s.sect
	s.sect = nil
	if sect == nil || sect.structured {
		return
	}
	env, first, last := 0, -1, -1
	for _, l := range sect.free {
		_, body := unquote(s.lines[l])
		if strings.TrimSpace(body) == "" {
			continue
		}
		if first < 0 {
			first = l
		}
		last = l
		if classify(body) == lineEnv {
			env++
		}
	}
	if env < 2 {
		for _, l := range sect.free {
			s.free(l)
		}
		s.flush()
		return
	}
	var body []string
	for l := first; l <= last; l++ {
		_, b := unquote(s.lines[l])
		body = append(body, b)
	}
	s.flush()
	s.emit("unfenced", "", first, body, "env.txt")
}

// structure is called when a fence, <pre> or <details> opens: the prose
// run before it ends, and an enclosing <details> or environment section no
// longer holds only text.
func (s *splitter) structure() {
	if sect := s.sect; sect != nil && !sect.structured && len(s.dets) == 0 {
		sect.structured = true
		for _, l := range sect.free {
			s.free(l)
		}
		sect.free = nil
	}
	s.flush()
	if n := len(s.dets); n > 0 && !s.dets[n-1].structured {
		dt := s.dets[n-1]
		dt.structured = true
		for _, l := range dt.free {
			s.free(l)
		}
		dt.free = nil
		s.flush()
	}
}

// summary reads a <details> tag's line and its <summary>, which may follow
// on the same line or the next ones. It returns the last line it used.
func (s *splitter) summary(i int, dt *details) int {
	text := s.lines[i]
	low := strings.ToLower(text)
	if !strings.Contains(low, "<summary") {
		// The summary may be on the next non-blank line.
		j := i + 1
		for j < len(s.lines) && strings.TrimSpace(s.lines[j]) == "" {
			j++
		}
		if j >= len(s.lines) || !strings.HasPrefix(strings.ToLower(strings.TrimSpace(s.lines[j])), "<summary") {
			return i
		}
		i, text = j, s.lines[j]
		low = strings.ToLower(text)
	}
	for !strings.Contains(low, "</summary>") && i+1 < len(s.lines) && i < dt.line+20 {
		i++
		text += " " + s.lines[i]
		low = strings.ToLower(text)
	}
	if m := summaryRe.FindStringSubmatch(text); m != nil {
		dt.summary = cleanText(m[1])
	}
	return i
}

// closeDetails ends the innermost <details>; one that held only text is a
// block of its own.
func (s *splitter) closeDetails() {
	n := len(s.dets)
	if n == 0 {
		return
	}
	dt := s.dets[n-1]
	s.dets = s.dets[:n-1]
	if !dt.structured {
		first, last := -1, -1
		for _, l := range dt.free {
			if strings.TrimSpace(s.lines[l]) != "" {
				if first < 0 {
					first = l
				}
				last = l
			}
		}
		if first >= 0 {
			var body []string
			for l := first; l <= last; l++ {
				_, b := unquote(s.lines[l])
				body = append(body, b)
			}
			s.emit("details", "", first, body, s.hint(dt.line-1, "", dt.summary, body))
		}
	}
	s.flush()
	if n := len(s.dets); n > 0 && !dt.structured {
		// The enclosing block holds a structure now.
		s.dets[n-1].structured = true
	}
}

// fenceOpen recognizes an opening fence: three or more backticks or
// tildes, after up to three spaces (more inside a list item, which GitHub
// accepts), and an info string (without backticks after backticks).
func fenceOpen(body string) (ch byte, n, indent int, info string, ok bool) {
	for indent < len(body) && body[indent] == ' ' {
		indent++
	}
	if indent > 12 || indent >= len(body) {
		return 0, 0, 0, "", false
	}
	ch = body[indent]
	if ch != '`' && ch != '~' {
		return 0, 0, 0, "", false
	}
	for indent+n < len(body) && body[indent+n] == ch {
		n++
	}
	if n < 3 {
		return 0, 0, 0, "", false
	}
	info = strings.TrimSpace(body[indent+n:])
	if ch == '`' && strings.Contains(info, "`") {
		return 0, 0, 0, "", false
	}
	if i := strings.IndexAny(info, " \t{"); i >= 0 {
		info = info[:i]
	}
	return ch, n, indent, info, true
}

// isFenceClose reports a closing fence for an opening of n ch.
func isFenceClose(body string, ch byte, n int) bool {
	t := strings.TrimLeft(body, " ")
	if len(body)-len(t) > 12 {
		return false
	}
	k := 0
	for k < len(t) && t[k] == ch {
		k++
	}
	return k >= n && strings.TrimSpace(t[k:]) == ""
}

// fence reads a fenced block that opens on line i and returns its last
// line. A fence that is never closed runs to the end of the quote it opened
// in, or of the document, as GitHub shows it.
func (s *splitter) fence(i, depth int, ch byte, n, indent int, info string) int {
	open := i
	var body []string
	j := i + 1
	closed := false
	for ; j < len(s.lines); j++ {
		b := s.lines[j]
		if depth > 0 {
			if d, _ := unquote(b); d < depth {
				break // the quote ended, and the fence with it
			}
			b = dequote(b, depth)
		}
		if isFenceClose(b, ch, n) {
			closed = true
			break
		}
		body = append(body, trimIndent(b, indent))
	}
	if !closed {
		end := "document"
		if j < len(s.lines) {
			end = "quote"
		}
		s.note(open+1, fmt.Sprintf("a fence opened here (%s) is never closed: its text runs to the end of the %s, as GitHub shows it",
			strings.Repeat(string(ch), n), end))
	}
	if len(body) > 0 {
		s.emit("fence", info, open+1, body, s.hint(open, info, s.summaryNow(), body))
	}
	if !closed {
		return j - 1
	}
	return j
}

// pre reads a <pre> block from line i to its </pre> and returns the last
// line. Its text is HTML: tags are dropped and entities decoded.
func (s *splitter) pre(i int) int {
	open := i
	first := s.lines[i]
	start := strings.Index(first, ">")
	var rest string
	if start >= 0 {
		rest = first[start+1:]
	}
	var body []string
	from := i + 1
	if k := strings.Index(asciiLower(rest), "</pre>"); k >= 0 {
		if t := cleanPre(rest[:k]); strings.TrimSpace(t) != "" {
			s.emit("pre", "", open, []string{t}, s.hint(open, "", s.summaryNow(), body))
		}
		return i
	}
	if strings.TrimSpace(rest) != "" {
		body = append(body, cleanPre(rest))
		from = i
	}
	j := i + 1
	for ; j < len(s.lines); j++ {
		l := s.lines[j]
		if k := strings.Index(asciiLower(l), "</pre>"); k >= 0 {
			if t := l[:k]; strings.TrimSpace(t) != "" {
				body = append(body, cleanPre(t))
			}
			break
		}
		body = append(body, cleanPre(l))
	}
	if j == len(s.lines) {
		s.note(open+1, "a <pre> block opened here is never closed: its text runs to the end of the document")
		j--
	}
	if len(body) > 0 {
		s.emit("pre", "", from, body, s.hint(open, "", s.summaryNow(), body))
	}
	return j
}

func cleanPre(l string) string {
	return html.UnescapeString(tagRe.ReplaceAllString(l, ""))
}

// summaryNow is the summary of the innermost open <details>.
func (s *splitter) summaryNow() string {
	if n := len(s.dets); n > 0 {
		return s.dets[n-1].summary
	}
	return ""
}

// free takes a line of prose. Lines are judged a paragraph at a time (a
// paste is one paragraph or several, prose a sentence or a few): see
// endPara.
func (s *splitter) free(i int) {
	_, body := unquote(s.lines[i])
	if strings.TrimSpace(body) != "" {
		s.para = append(s.para, i)
		return
	}
	s.endPara()
	if s.run.n > 0 {
		s.run.blanks++
		if s.run.blanks > 2 {
			s.endRun()
		}
	}
	if s.cand.n > 0 {
		s.cand.blanks++
		if s.cand.blanks > 2 {
			s.cand = run{}
		}
	}
}

// flush ends the paragraph and the run: a structure or a heading follows.
func (s *splitter) flush() {
	s.endPara()
	s.endRun()
}

// endPara judges the paragraph just read. Its evidence is the span from
// its first to its last line that looks like evidence (strong or
// technical, see classify and technical); the prose before and after the
// span is what the issue says about it. The span is evidence when it has a
// strong line and at least 60% of its lines look like evidence, or at
// least two technical lines and 80%, or, right after a run, a technical
// line and 60%. Evidence extends the open run (at most two blank lines
// away) or starts one.
func (s *splitter) endPara() {
	para := s.para
	s.para = s.para[:0]
	if len(para) == 0 {
		return
	}
	cls := make([]lineClass, len(para))
	tech := make([]bool, len(para))
	f, l := -1, -1
	for k, i := range para {
		_, body := unquote(s.lines[i])
		cls[k] = classify(body)
		tech[k] = !cls[k].strong() && technical(body)
		if cls[k].strong() || tech[k] {
			if f < 0 {
				f = k
			}
			l = k
		} else if f >= 0 && l == k-1 && cls[k] == lineWeak {
			l = k // a record's continuation: a traceback's source line
		}
	}
	prose := func(k int) {
		_, body := unquote(s.lines[para[k]])
		s.ctx.prose, s.ctx.proseAt = strings.TrimSpace(body), para[k]
	}
	if f < 0 {
		s.endRun()
		prose(len(para) - 1)
		return
	}
	if f > 0 && s.run.n > 0 {
		// Prose that opens a paragraph right after a run may be the log's
		// own message ("The following component could not be created:"):
		// it stays in the run if the paragraph still looks like evidence.
		good := 0
		for k := 0; k <= l; k++ {
			if cls[k].strong() || tech[k] || cls[k] == lineWeak {
				good++
			}
		}
		if good*10 >= (l+1)*6 {
			f = 0
		}
	}
	strong, techs, good := 0, 0, 0
	var kinds [4]int
	for k := f; k <= l; k++ {
		switch {
		case cls[k].strong():
			strong++
			kinds[cls[k]]++
			good++
		case tech[k]:
			techs++
			good++
		case cls[k] == lineWeak:
			good++
		}
	}
	n := l - f + 1
	qualified := strong >= 1 && good*10 >= n*6 || strong+techs >= 2 && good*10 >= n*8 ||
		s.run.n > 0 && techs >= 1 && good*10 >= n*6 // more of the run just above
	// A paragraph of one technical line and nothing else is evidence only
	// next to other evidence: a log pasted with blank lines between its
	// lines (each a paragraph of its own).
	lone := !qualified && strong == 0 && techs == 1 && good == n && f == 0 && l == len(para)-1
	if !qualified && !lone {
		s.endRun()
		prose(len(para) - 1)
		return
	}
	if f > 0 {
		s.endRun()
		prose(f - 1)
	}
	r := &s.run
	c := s.cand
	s.cand = run{}
	if r.n == 0 {
		if lone && c.n == 0 {
			s.cand = run{first: para[f], last: para[l], n: 1}
			return
		}
		r.first = para[f]
		if c.n > 0 && f == 0 {
			*r = c // the lone line before starts the run
		}
	}
	r.n += strong + techs
	for c, v := range kinds {
		r.kinds[c] += v
	}
	r.last = para[l]
	r.blanks = 0
	if l < len(para)-1 {
		s.endRun()
		prose(len(para) - 1)
	}
}

// run is an unfenced run of log-looking lines being read.
type run struct {
	first, last int
	n           int // strong and technical lines
	blanks      int
	kinds       [4]int // strong lines by lineClass
}

// endRun emits the current unfenced run, if any.
func (s *splitter) endRun() {
	r := s.run
	s.run = run{}
	s.cand = run{}
	if r.n == 0 {
		return
	}
	var body []string
	for l := r.first; l <= r.last; l++ {
		_, b := unquote(s.lines[l])
		body = append(body, b)
	}
	body = dedent(body)
	// An unfenced run was found by what its lines are: that names it,
	// unless the sentence just before it says otherwise.
	hint := hintFor(s.ctx.near(r.first))
	if hint == "" {
		switch {
		case r.kinds[lineEnv] > r.kinds[lineLog] && r.kinds[lineEnv] >= r.kinds[lineCmd]:
			hint = "env.txt"
		case r.kinds[lineCmd] > r.kinds[lineLog]:
			hint = "launch.sh"
		case r.kinds[lineLog] > 0:
			hint = "server.log"
		default:
			hint = s.hint(r.first, "", s.summaryNow(), body)
		}
	}
	s.emit("unfenced", "", r.first, body, hint)
}

// emit adds a block whose first line is line first (0-based) of the
// document.
func (s *splitter) emit(how, info string, first int, body []string, hint string) {
	if s.full {
		return
	}
	if len(s.out.Blocks) == MaxBlocks {
		s.full = true
		s.note(first+1, fmt.Sprintf("more than %d blocks: this one and the rest were not read", MaxBlocks))
		return
	}
	var b bytes.Buffer
	for i, l := range body {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(l)
	}
	b.WriteByte('\n')
	s.out.Blocks = append(s.out.Blocks, Block{
		Name:   fmt.Sprintf("%s#%d", s.input, len(s.out.Blocks)+1),
		Doc:    s.doc,
		Offset: first,
		Lines:  len(body),
		How:    how,
		Info:   info,
		Hint:   hint,
		Text:   b.Bytes(),
	})
}

func (s *splitter) note(line int, detail string) {
	s.out.Notes = append(s.out.Notes, Note{Doc: s.doc, Line: line, Detail: detail})
}

// splitLines splits text at "\n", dropping a trailing "\r" of each line.
func splitLines(text []byte) []string {
	if len(text) == 0 {
		return nil
	}
	s := string(text)
	s = strings.TrimSuffix(s, "\n")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// unquote removes a line's block-quote markers and returns how many there
// were.
func unquote(l string) (depth int, body string) {
	body = l
	for {
		t := strings.TrimLeft(body, " ")
		if len(body)-len(t) > 3 || !strings.HasPrefix(t, ">") {
			return depth, body
		}
		body = strings.TrimPrefix(t[1:], " ")
		depth++
	}
}

// dequote removes at most depth quote markers.
func dequote(l string, depth int) string {
	for k := 0; k < depth; k++ {
		t := strings.TrimLeft(l, " ")
		if !strings.HasPrefix(t, ">") {
			break
		}
		l = strings.TrimPrefix(t[1:], " ")
	}
	return l
}

// trimIndent removes up to n leading spaces, a fence's own indentation.
func trimIndent(l string, n int) string {
	k := 0
	for k < n && k < len(l) && l[k] == ' ' {
		k++
	}
	return l[k:]
}

// dedent removes the indentation every non-blank line shares, when it is
// four spaces or more (an indented code block, a list item's paste).
func dedent(body []string) []string {
	common := -1
	for _, l := range body {
		if strings.TrimSpace(l) == "" {
			continue
		}
		k := len(l) - len(strings.TrimLeft(l, " "))
		if common < 0 || k < common {
			common = k
		}
	}
	if common < 4 {
		return body
	}
	out := make([]string, len(body))
	for i, l := range body {
		if len(l) >= common {
			out[i] = l[common:]
		} else {
			out[i] = strings.TrimLeft(l, " ")
		}
	}
	return out
}

// cleanText is HTML text made plain: tags dropped, entities decoded,
// spaces collapsed.
func cleanText(s string) string {
	s = html.UnescapeString(tagRe.ReplaceAllString(s, " "))
	return strings.Join(strings.Fields(s), " ")
}

// asciiLower lowers ASCII letters only, so that indexes into the result
// are indexes into s (strings.ToLower changes the length of invalid UTF-8).
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
