package parser

import (
	"bytes"
	"fmt"
	"io"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/issue"
)

// Issue documents (a markdown file, gh's issue JSON, an event payload) are
// read the way an archive is: parser/issue cuts each into its blocks, and
// every block becomes a source of its own, named by its position
// ("issue.md#3"), parsed by the parser its content is sniffed as, with what
// the issue calls it as the name hint (job.hint). The document itself is a
// source of kind markdown, github-issue or github-event that yields no
// facts. Recognizing one costs an ordinary file a few byte searches of its
// head (issue.Sniff).

// document reads the entry of job j as an issue document if it is one, and
// reports whether it did. got is what was read of it so far, rerr the
// error that read ended with (nil: there is more in r).
func (p *run) document(j *job, got []byte, r io.Reader, rerr error) bool {
	kind := issue.Sniff(baseName(j.src.Path), got[:min(len(got), HeadSize)])
	if kind == "" {
		return false
	}
	data := got
	var readErr error
	more := false
	switch {
	case rerr == nil:
		rest, err := io.ReadAll(io.LimitReader(r, int64(issue.MaxDocument-len(got)+1)))
		data = append(append(make([]byte, 0, len(got)+len(rest)), got...), rest...)
		readErr = err
		if len(data) > issue.MaxDocument {
			more = true
		}
	case rerr != io.EOF && rerr != io.ErrUnexpectedEOF:
		readErr = rerr
	}
	doc := data
	if more {
		doc = data[:issue.MaxDocument]
	}
	split, ok := issue.Read(j.src.Path, kind, doc)
	if !ok {
		p.ordinary(j, data, r, more, readErr)
		return true
	}
	src := j.src
	src.Kind = split.Kind
	src.Bytes = int64(len(doc))
	src.Lines = bytes.Count(doc, []byte{'\n'})
	if len(doc) > 0 && doc[len(doc)-1] != '\n' {
		src.Lines++
	}
	if more {
		src.Issues = append(src.Issues, facts.Issue{Src: facts.Source{File: src.Path}, Kind: facts.IssueSizeLimit,
			Detail: fmt.Sprintf("only the first %d MiB were read as an issue", issue.MaxDocument>>20)})
	}
	if readErr != nil {
		src.Issues = append(src.Issues, facts.Issue{Src: facts.Source{File: src.Path, Line: src.Lines}, Kind: facts.IssueUnreadable,
			Detail: fmt.Sprintf("read failed after %d bytes: %v; kept what was read", len(data), readErr)})
	}
	for _, n := range split.Notes {
		is := facts.Issue{Src: facts.Source{File: src.Path, Line: n.Line}, Kind: facts.IssueMalformed, Detail: n.Detail}
		if n.Doc != "" {
			is.Src.Line = 0 // a line of a body inside the JSON, not of the file
			is.Detail = fmt.Sprintf("%s, line %d: %s", n.Doc, n.Line, n.Detail)
		}
		src.Issues = append(src.Issues, is)
	}
	if pr := p.opts.Progress; pr != nil {
		pr.Files.Add(1)
	}
	for _, b := range split.Blocks {
		bj := &job{src: &facts.SourceInfo{Path: b.Name, Kind: facts.KindUnknown, Container: src.Container + " > " + string(split.Kind),
			Part: &facts.Part{Of: src.Path, Doc: b.Doc, Offset: b.Offset, How: b.How}},
			part: &facts.Facts{Clocks: map[string]facts.Clock{}}, hint: b.Hint}
		if _, dup := p.byName[b.Name]; dup {
			bj.src.Issues = append(bj.src.Issues, facts.Issue{Src: facts.Source{File: b.Name}, Kind: facts.IssueDuplicateEntry,
				Detail: "the bundle holds this path more than once; both copies are analyzed"})
		}
		p.byName[b.Name] = bj
		p.jobs = append(p.jobs, bj)
		p.workers <- struct{}{}
		p.wg.Add(1)
		go func(text []byte) {
			defer func() { <-p.workers; p.wg.Done() }()
			p.parse(bj, bytes.NewReader(text), int64(len(text)))
		}(b.Text)
	}
	return true
}

// ordinary parses an entry that looked like an issue document but is not
// one (JSON of another shape): data is what was read, r holds the rest
// when more is set.
func (p *run) ordinary(j *job, data []byte, r io.Reader, more bool, readErr error) {
	data = bytes.Clone(data) // the caller's buffer goes back to the pool
	p.workers <- struct{}{}
	p.wg.Add(1)
	if !more {
		var in io.Reader = bytes.NewReader(data)
		size := int64(len(data))
		if readErr != nil {
			in, size = io.MultiReader(in, errReader{readErr}), -1
		}
		go func() {
			defer func() { <-p.workers; p.wg.Done() }()
			p.parse(j, in, size)
		}()
		return
	}
	pr, pw := io.Pipe()
	go func() {
		defer func() { <-p.workers; p.wg.Done() }()
		p.parse(j, pr, -1)
		pr.Close()
	}()
	_, err := pw.Write(data)
	if err == nil {
		_, err = io.Copy(pw, r)
	}
	pw.CloseWithError(err)
}
