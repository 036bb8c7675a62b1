// Package issue reads the documents bug reports arrive as: a markdown file
// (an issue body saved to disk), the JSON of `gh issue view N --json
// title,body,comments`, and a GitHub webhook or Actions event payload
// (`issues`, `issue_comment`). It is an intake, not a parser of facts: it
// cuts each document into the blocks that hold evidence, and the parser
// reads every block as a source of its own, sniffed by content like any
// other file.
//
// A block is a fenced code block, a <pre> block, the text of a <details>
// block that holds no fence, or an unfenced run of lines that look like a
// log, a command or an environment report (loglike.go says which). Each is
// named by its position in the input ("issue.md#3") and keeps its place:
// line n of the block is line n+Offset of its document, so a citation of
// the block maps to the line of the issue the reporter wrote.
//
// What the issue says around a block (the heading it sits under, the
// <summary> of its <details>, the sentence before it, a fence's info
// string) becomes a file-name hint for kind detection: the "Your current
// environment" section reads as env.txt, the reproduction command as
// launch.sh, anything else as server.log. Content still decides: a hint
// only breaks a tie between sniffers that recognize nothing for sure.
package issue

import (
	"bytes"
	"io"
	"path"
	"strings"

	"github.com/coroner-dev/coroner/parser/facts"
)

// MaxDocument is the most of an input read as an issue; a longer one is
// cut there (a parse issue says so).
const MaxDocument = 64 << 20

// MaxBlocks is the most blocks one input yields; the rest are left out
// and a parse issue says so. A real issue has a handful; a hostile one
// must not become a hundred thousand sources.
const MaxBlocks = 400

// Block is a part of a document read as a source of its own.
type Block struct {
	// Name is the source's name: the input's name, "#", the block's
	// position among the input's blocks, from 1.
	Name string
	// Doc names the document the block is in: "" when the input is the
	// document (a markdown file), "body" or "comment N" in a gh issue's
	// JSON or an event payload.
	Doc string
	// Offset places the block: its line n is line n+Offset of Doc.
	Offset int
	// Lines is how many lines the block has.
	Lines int
	// How the block was found: "fence", "pre", "details" or "unfenced".
	How string
	// Info is a fence's info string ("bash", "text"), if any.
	Info string
	// Hint is the file name kind detection sees: what the issue calls
	// the block (server.log, env.txt, launch.sh, ...).
	Hint string
	// Text is the block's lines joined by "\n", with the markdown around
	// them (quote markers, a list's indentation, the fence) removed.
	Text []byte
}

// Split is what an input holds.
type Split struct {
	Kind   facts.Kind
	Blocks []Block
	// Docs names the input's documents in order ("" for a markdown file).
	Docs []string
	// Notes are what the reading met that a reader should know: an
	// unclosed fence, blocks left out. Line is a line of the input's
	// document Doc.
	Notes []Note
}

// Note is something the split met, at a line of a document.
type Note struct {
	Doc    string
	Line   int
	Detail string
}

// Sniff says whether an input is an issue document, from its name (a hint)
// and its first bytes. It is cheap: an ordinary bundle file is turned away
// by a few byte searches. A JSON candidate is confirmed only by Read.
func Sniff(name string, head []byte) facts.Kind {
	t := bytes.TrimLeft(head, " \t\r\n\ufeff")
	t = bytes.TrimPrefix(t, []byte("\ufeff"))
	if len(t) > 0 && (t[0] == '{' || t[0] == '[') {
		return sniffJSON(t)
	}
	n := strings.ToLower(path.Base(name))
	isMD := strings.HasSuffix(n, ".md") || strings.HasSuffix(n, ".markdown")
	if isMD || hasMarkup(head) {
		if looksMarkdown(head, isMD) {
			return facts.KindMarkdown
		}
	}
	return ""
}

// hasMarkup is the fast test: a fence or a <details> anywhere in the head.
func hasMarkup(head []byte) bool {
	return bytes.Contains(head, []byte("```")) || bytes.Contains(head, []byte("~~~")) ||
		bytes.Contains(head, []byte("<details")) || bytes.Contains(head, []byte("<DETAILS")) ||
		bytes.Contains(head, []byte("<Details"))
}

// sniffJSON recognizes the shapes of Read's JSON inputs by their keys.
func sniffJSON(t []byte) facts.Kind {
	has := func(k string) bool { return bytes.Contains(t, []byte(`"`+k+`"`)) }
	switch {
	case has("issue") && has("action") && has("body"):
		return facts.KindGitHubEvent
	case has("body") && (has("title") || has("comments")):
		return facts.KindGitHubIssue
	case t[0] == '[' && has("body"):
		return facts.KindGitHubIssue
	}
	return ""
}

// Read splits an input into its blocks. ok is false when the input is not
// an issue document after all (JSON of another shape); the caller then
// reads it as an ordinary file.
func Read(name string, kind facts.Kind, data []byte) (s *Split, ok bool) {
	s = &Split{Kind: kind}
	var docs []document
	switch kind {
	case facts.KindMarkdown:
		docs = []document{{name: "", text: data}}
	case facts.KindGitHubIssue, facts.KindGitHubEvent:
		d, k, ok := readJSON(data)
		if !ok {
			return nil, false
		}
		docs, s.Kind = d, k
	default:
		return nil, false
	}
	sp := &splitter{input: name, out: s}
	for _, d := range docs {
		s.Docs = append(s.Docs, d.name)
		sp.document(d)
	}
	return s, true
}

// document is one markdown text of an input.
type document struct {
	name string
	text []byte
}

// Visit reads the issue document named name from r, cut the way the parse
// cuts it, and calls visit with each block's name and text: for reading a
// block's lines again (the brief's excerpts) from the document that holds
// it. A document that is not an issue after all visits nothing.
func Visit(name string, r io.Reader, visit func(block string, r io.Reader) error) error {
	data, err := io.ReadAll(io.LimitReader(r, MaxDocument))
	if err != nil {
		return err
	}
	kind := Sniff(path.Base(name), data[:min(len(data), SniffSize)])
	if kind == "" {
		return nil
	}
	s, ok := Read(name, kind, data)
	if !ok {
		return nil
	}
	for _, b := range s.Blocks {
		if err := visit(b.Name, bytes.NewReader(b.Text)); err != nil {
			return err
		}
	}
	return nil
}

// SniffSize is how much of an input Sniff is given: the parser's head.
const SniffSize = 8 << 10
