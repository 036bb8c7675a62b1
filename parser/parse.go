// Package parser turns a bundle into facts: it walks the bundle, detects the
// kind of every file by content, hands each to the parser of its kind, and
// merges what they found in bundle order. Then it places every timestamp in
// one time line (see times.go).
package parser

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"time"

	"github.com/coroner-dev/coroner/parser/bundle"
	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/textio"
)

// Options configure a parse.
type Options struct {
	Bundle bundle.Options
	// MaxLine is the longest line kept whole (textio.DefaultMaxLine if 0).
	MaxLine int
	// Year and Zone override what the evidence says about time (0 and nil:
	// take it from the evidence).
	Year int
	Zone *time.Location
	// Progress, if set, is called after each file with the bytes read so far.
	Progress func(files int, bytes int64)
	// Stdin is read for the path "-" (os.Stdin when nil).
	Stdin io.Reader
}

// Parse reads the bundles at paths and returns their facts. When several
// paths are given, each one's entries are prefixed with its base name so that
// two server.log files stay apart. The error is only for a bundle that
// cannot be opened at all; everything else is a parse issue in the facts.
func Parse(paths []string, opts Options) (*facts.Facts, error) {
	p := &run{opts: opts, out: &facts.Facts{Clocks: map[string]facts.Clock{}}}
	seen := map[string]int{}
	for _, bp := range paths {
		prefix := ""
		if len(paths) > 1 {
			prefix = path.Base(strings.TrimRight(bp, "/"))
			if bp == "-" {
				prefix = "stdin"
			}
			seen[prefix]++
			if n := seen[prefix]; n > 1 {
				prefix = fmt.Sprintf("%s.%d", prefix, n)
			}
		}
		bo := opts.Bundle
		bo.Issue = p.issue
		p.prefix = prefix
		var err error
		if bp == "-" && opts.Stdin != nil {
			err = bundle.WalkReader("stdin", opts.Stdin, bo, p.entry)
		} else {
			err = bundle.Walk(bp, bo, p.entry)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", bp, err)
		}
		// Issues about paths that never became entries (the archive itself,
		// a skipped device file, a nested archive's own name) get a source
		// of their own so that the report shows them.
		for _, is := range p.pending {
			p.out.AddIssue(is.Src, is.Kind, "%s", is.Detail)
		}
		p.pending = nil
	}
	normalizeTimes(p.out, p.mtimes, opts)
	return p.out, nil
}

type run struct {
	opts   Options
	out    *facts.Facts
	prefix string
	files  int
	bytes  int64
	// mtimes are archive modification times per source, the weakest time evidence.
	mtimes map[string]time.Time
	// pending holds issues reported before their source was added.
	pending []facts.Issue
}

func (p *run) name(e string) string {
	if p.prefix == "" {
		return e
	}
	return p.prefix + "/" + e
}

// issue records an issue from the walk. The walk reports under entry paths
// without the multi-bundle prefix.
func (p *run) issue(is facts.Issue) {
	is.Src.File = p.name(is.Src.File)
	if s := p.out.Source(is.Src.File); s != nil {
		s.Issues = append(s.Issues, is)
		return
	}
	p.pending = append(p.pending, is)
}

func (p *run) entry(e *bundle.Entry, r io.Reader) error {
	name := p.name(e.Path)
	src := &facts.SourceInfo{Path: name, Kind: facts.KindUnknown, Container: e.Container}
	if dup := p.out.Source(name); dup != nil {
		src.Issues = append(src.Issues, facts.Issue{Src: facts.Source{File: name}, Kind: facts.IssueDuplicateEntry,
			Detail: "the bundle holds this path more than once; both copies are analyzed"})
	}
	p.out.Sources = append(p.out.Sources, src)
	// Issues the walk reported before this entry existed belong to it.
	keep := p.pending[:0]
	for _, is := range p.pending {
		if is.Src.File == name {
			src.Issues = append(src.Issues, is)
		} else {
			keep = append(keep, is)
		}
	}
	p.pending = keep
	if !e.ModTime.IsZero() && e.Container != "dir" && e.Container != "file" {
		if p.mtimes == nil {
			p.mtimes = map[string]time.Time{}
		}
		p.mtimes[name] = e.ModTime
	}
	if e.Link != "" || r == nil {
		return nil
	}

	br := bufio.NewReaderSize(r, HeadSize)
	head, _ := br.Peek(HeadSize)
	addIssue := func(is facts.Issue) { src.Issues = append(src.Issues, is) }
	in := textio.NewInput(name, br, p.opts.MaxLine, addIssue)

	part := &facts.Facts{Clocks: map[string]facts.Clock{}}
	if bin, why := isBinary(head); bin {
		addIssue(facts.Issue{Src: facts.Source{File: name}, Kind: facts.IssueBinary,
			Detail: "binary content (" + why + "): listed, not parsed"})
		for in.Scan() {
		}
	} else {
		src.Kind = Detect(baseName(name), head)
		if f := formatOf(src.Kind); f != nil {
			parseSafely(f, in, src.Kind, part, addIssue)
		}
		// Read what the parser left so that bytes and lines count the whole file.
		for in.Scan() {
		}
		if n, first := in.NULs(); n > 0 {
			addIssue(facts.Issue{Src: facts.Source{File: name, Line: first}, Kind: facts.IssueNUL,
				Detail: fmt.Sprintf("%d NUL bytes, the first on this line; they were read as text", n)})
		}
		if n, first := in.BadUTF8(); n > 0 {
			addIssue(facts.Issue{Src: facts.Source{File: name, Line: first}, Kind: facts.IssueInvalidUTF8,
				Detail: fmt.Sprintf("%d lines of invalid UTF-8, the first here; kept with replacement characters", n)})
		}
	}
	if err := in.Err(); err != nil && !errors.Is(err, bundle.ErrStream) {
		addIssue(facts.Issue{Src: facts.Source{File: name, Line: in.Line()}, Kind: facts.IssueUnreadable,
			Detail: fmt.Sprintf("read failed after %d bytes: %v; kept what was read", in.BytesRead(), err)})
	}
	src.Bytes = in.BytesRead()
	src.Lines = in.Line()
	merge(p.out, part)
	p.files++
	p.bytes += src.Bytes
	if p.opts.Progress != nil {
		p.opts.Progress(p.files, p.bytes)
	}
	return nil
}

func formatOf(k facts.Kind) *format {
	for i := range formats {
		for _, kk := range formats[i].kinds {
			if kk == k {
				return &formats[i]
			}
		}
	}
	return nil
}

// parseSafely runs a parser and turns a panic into a parse issue: a parser
// bug must cost one file, never the report.
func parseSafely(f *format, in *textio.Input, k facts.Kind, out *facts.Facts, issue func(facts.Issue)) {
	defer func() {
		if r := recover(); r != nil {
			issue(facts.Issue{Src: in.Src(), Kind: facts.IssueMalformed,
				Detail: fmt.Sprintf("the %s parser failed here (%v); facts before this line were kept", f.name, r)})
		}
	}()
	f.parse(in, k, out)
}

// merge appends a source's facts to the bundle's.
func merge(dst, src *facts.Facts) {
	for k, v := range src.Clocks {
		dst.Clocks[k] = v
	}
	dst.Logs = append(dst.Logs, src.Logs...)
	dst.Settings = append(dst.Settings, src.Settings...)
	dst.Procs = append(dst.Procs, src.Procs...)
	dst.GPUs = append(dst.GPUs, src.GPUs...)
	dst.Topo = append(dst.Topo, src.Topo...)
	dst.GPUList = append(dst.GPUList, src.GPUList...)
	dst.Kernel = append(dst.Kernel, src.Kernel...)
	dst.Memory = append(dst.Memory, src.Memory...)
	dst.Disks = append(dst.Disks, src.Disks...)
	dst.Env = append(dst.Env, src.Env...)
	dst.Envs = append(dst.Envs, src.Envs...)
	dst.Cmds = append(dst.Cmds, src.Cmds...)
	dst.Probes = append(dst.Probes, src.Probes...)
	dst.Stacks = append(dst.Stacks, src.Stacks...)
	dst.Runs = append(dst.Runs, src.Runs...)
	dst.Capture = append(dst.Capture, src.Capture...)
	dst.Cgroups = append(dst.Cgroups, src.Cgroups...)
	dst.System = append(dst.System, src.System...)
	dst.Assumptions = append(dst.Assumptions, src.Assumptions...)
	// Issues a parser raised through out.AddIssue land on its own source list.
	for _, s := range src.Sources {
		if d := dst.Source(s.Path); d != nil {
			d.Issues = append(d.Issues, s.Issues...)
		}
	}
}
