// Package parser turns a bundle into facts: it walks the bundle, detects the
// kind of every file by content, hands each to the parser of its kind, and
// merges what they found in bundle order. Then it places every timestamp in
// one time line (see times.go).
package parser

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"runtime"
	"sync"
	"sync/atomic"
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
	// Progress, if set, counts the work as it goes.
	Progress *Progress
	// Stdin is read for the path "-" (os.Stdin when nil).
	Stdin io.Reader
	// FileTimes takes the file system's modification times of files (an
	// archive's record of them is always taken) as evidence of the year of
	// stamps that carry none. The command line sets it; tests of reports
	// leave it, since a checkout's times are not the evidence's.
	FileTimes bool
	// Watch, if set, sees every line of every server log and picks the
	// ones to keep in Log.Watched (the lines user packs' signatures may
	// match, beyond the records the parser keeps).
	Watch facts.LineWatch
}

// Progress counts a parse's work while it runs; any goroutine may read it.
type Progress struct {
	// Stored counts the bytes read from the bundle's files as stored
	// (compressed, for a compressed file), comparable with their sizes.
	Stored atomic.Int64
	// Files counts the files parsed; Bytes their bytes, decompressed.
	Files, Bytes atomic.Int64
}

// Parse reads the bundles at paths and returns their facts. When several
// paths are given, each one's entries go under its path relative to the
// folder all of them share (InputNames), so that two server.log files in
// different folders keep their folders; a bundle that is a single file is
// that file, in its folder ("a/server.log"). Rotated pieces of one log
// (server.log.1, server.log-20240101) are marked as such
// (facts.SourceInfo.Rotation) and their logs ordered oldest first. The error is only for a bundle that
// cannot be opened at all; everything else is a parse issue in the facts.
//
// Files are parsed in parallel by a bounded pool of workers while the walk
// goes on decompressing the next entries; each worker fills facts of its own
// and they are merged in bundle order, so the result does not depend on
// which worker finished first.
func Parse(paths []string, opts Options) (*facts.Facts, error) {
	p := newRun(opts)
	names := InputNames(paths)
	for i, bp := range paths {
		bo := opts.Bundle
		bo.Issue = p.issue
		if opts.Progress != nil {
			bo.Stored = &opts.Progress.Stored
		}
		p.input = input{name: names[i], base: inputBase(bp)}
		var err error
		if bp == "-" && opts.Stdin != nil {
			err = bundle.WalkReader("stdin", opts.Stdin, bo, p.entry)
		} else {
			err = bundle.Walk(bp, bo, p.entry)
		}
		p.named()
		if err != nil {
			p.wg.Wait()
			return nil, fmt.Errorf("%s: %w", bp, err)
		}
	}
	p.finish()
	normalizeTimes(p.out, p.mtimes, opts)
	rotations(p.out)
	return p.out, nil
}

// InputNames names the bundles of one analysis the way Parse names their
// entries: with several, each bundle's entries go under its path relative
// to the folder all of them share (bundle.InputNames).
func InputNames(paths []string) []string { return bundle.InputNames(paths) }

// inputBase is the name a walk of bp gives the bundle itself, which its
// own issues cite.
func inputBase(bp string) string {
	if bp == "-" {
		return "stdin"
	}
	if abs, err := filepath.Abs(bp); err == nil {
		return filepath.Base(abs)
	}
	return filepath.Base(bp)
}

// smallEntry is the size up to which an entry is read into memory and
// parsed by a worker while the walk moves on; larger ones stream through a
// pipe. Memory stays bounded by workers x smallEntry.
const smallEntry = 4 << 20

type run struct {
	opts  Options
	out   *facts.Facts
	input input
	// pending are the walk's issues of the input being walked, named once
	// the walk has said whether the input is a single file.
	pending []facts.Issue

	jobs    []*job
	byName  map[string]*job
	workers chan struct{}
	wg      sync.WaitGroup

	mu         sync.Mutex
	walkIssues []facts.Issue // from the walk, attached at the end
	// mtimes are the modification times of the sources (recorded by their
	// archive, or their files'), for the year of stamps that carry none.
	mtimes map[string]fileTime
}

// job is one entry's parse: its source and the facts its worker found.
type job struct {
	src  *facts.SourceInfo
	part *facts.Facts
	// hint, if set, is the name kind detection sees instead of the
	// path's (a block of an issue: what the issue calls it).
	hint string
}

func newRun(opts Options) *run {
	n := runtime.GOMAXPROCS(0)
	return &run{
		opts:    opts,
		out:     &facts.Facts{Clocks: map[string]facts.Clock{}},
		byName:  map[string]*job{},
		workers: make(chan struct{}, n),
	}
}

// input is the bundle being walked: its name in the analysis ("" when it
// is the only one), the name its walk gives it, and whether it turned out
// to be a single file.
type input struct {
	name, base string
	single     bool
}

// issue records an issue from the walk (which runs on the caller's
// goroutine, while workers may still fill the same source).
func (p *run) issue(is facts.Issue) {
	p.pending = append(p.pending, is)
}

// named names the issues of the input just walked and keeps them.
func (p *run) named() {
	in := p.input
	for _, is := range p.pending {
		if in.name != "" && is.Src.File == in.base {
			is.Src.File = in.name
		} else {
			is.Src.File = bundle.Under(in.name, is.Src.File, in.single)
		}
		p.mu.Lock()
		p.walkIssues = append(p.walkIssues, is)
		p.mu.Unlock()
	}
	p.pending = p.pending[:0]
}

func (p *run) entry(e *bundle.Entry, r io.Reader) error {
	p.input.single = e.SingleFile()
	name := e.Under(p.input.name)
	j := &job{src: &facts.SourceInfo{Path: name, Kind: facts.KindUnknown, Container: e.Container},
		part: &facts.Facts{Clocks: map[string]facts.Clock{}}}
	if _, dup := p.byName[name]; dup {
		j.src.Issues = append(j.src.Issues, facts.Issue{Src: facts.Source{File: name}, Kind: facts.IssueDuplicateEntry,
			Detail: "the bundle holds this path more than once; both copies are analyzed"})
	}
	p.byName[name] = j
	p.jobs = append(p.jobs, j)
	// A file system's time says when the file was last written (or
	// copied): weaker than an archive's record, still evidence of a year.
	if fs := e.Container == "dir" || e.Container == "file"; !e.ModTime.IsZero() && (!fs || p.opts.FileTimes) {
		if p.mtimes == nil {
			p.mtimes = map[string]fileTime{}
		}
		p.mtimes[name] = fileTime{At: e.ModTime, FS: fs}
	}
	if e.Link != "" || r == nil {
		return nil
	}
	// Read a small entry whole so a worker can parse it while the walk goes
	// on; stream a large one through a pipe.
	var buf []byte
	var pooled *[]byte
	if e.Size >= 0 && e.Size < smallEntry {
		buf = make([]byte, e.Size+1) // +1 sees the end even if the size lied
	} else {
		pooled = bufPool.Get().(*[]byte)
		buf = *pooled
	}
	release := func() {
		if pooled != nil {
			bufPool.Put(pooled)
		}
	}
	n, err := io.ReadFull(r, buf)
	if p.document(j, buf[:n], r, err) {
		release()
		return nil
	}
	var in io.Reader
	stream := false
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		in = bytes.NewReader(buf[:n])
	case err != nil:
		in = io.MultiReader(bytes.NewReader(buf[:n]), errReader{err})
	default:
		stream = true
	}
	p.workers <- struct{}{}
	p.wg.Add(1)
	if !stream {
		size := int64(n)
		go func() {
			defer func() { release(); <-p.workers; p.wg.Done() }()
			p.parse(j, in, size)
		}()
		return nil
	}
	pr, pw := io.Pipe()
	go func() {
		defer func() { <-p.workers; p.wg.Done() }()
		p.parse(j, pr, -1)
		pr.Close()
	}()
	_, err = pw.Write(buf[:n])
	release() // the pipe has handed the bytes over
	if err == nil {
		_, err = io.Copy(pw, r)
	}
	pw.CloseWithError(err)
	return nil
}

// bufPool holds the buffers of entries whose size is unknown or large, by
// pointer: a slice put into a Pool as it is would be boxed, one allocation
// per entry (staticcheck SA6002).
var bufPool = sync.Pool{New: func() any { b := make([]byte, smallEntry+1); return &b }}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// parse runs on a worker: detect, parse, count. size is the input's length
// when it is in memory, -1 when it streams.
func (p *run) parse(j *job, r io.Reader, size int64) {
	src, name := j.src, j.src.Path
	var head []byte
	var in *textio.Input
	addIssue := func(is facts.Issue) { src.Issues = append(src.Issues, is) }
	if br, ok := r.(*bytes.Reader); ok && size >= 0 {
		// In memory: the head is the first bytes, no second buffer needed.
		head = make([]byte, min(int64(HeadSize), size))
		_, _ = br.ReadAt(head, 0)
		in = textio.NewInputSized(name, br, p.opts.MaxLine, size, addIssue)
	} else {
		br := bufio.NewReaderSize(r, HeadSize)
		head, _ = br.Peek(HeadSize)
		in = textio.NewInput(name, br, p.opts.MaxLine, addIssue)
	}
	if bin, why := isBinary(head); bin {
		addIssue(facts.Issue{Src: facts.Source{File: name}, Kind: facts.IssueBinary,
			Detail: "binary content (" + why + "): listed, not parsed"})
		for in.Scan() {
		}
	} else {
		hint := baseName(name)
		if j.hint != "" {
			hint = j.hint
		}
		src.Kind = Detect(hint, head)
		var wl *watched
		if p.opts.Watch != nil && isServerLog(src.Kind) {
			wl = &watched{w: p.opts.Watch, path: name}
			in.Watch(wl.line)
		}
		if f := formatOf(src.Kind); f != nil {
			parseSafely(f, in, src.Kind, j.part, addIssue)
		}
		// Read what the parser left so that bytes and lines count the whole file.
		for in.Scan() {
		}
		if wl != nil {
			wl.attach(j.part)
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
	if pr := p.opts.Progress; pr != nil {
		pr.Files.Add(1)
		pr.Bytes.Add(src.Bytes)
	}
	if holdsNothing(j.part) {
		// Most files of a big folder hold nothing: their empty facts,
		// 500 bytes each, would be kept until the merge (50 MB for
		// 100,000 files).
		j.part = nil
	}
}

// holdsNothing reports whether a source's facts are empty: no slice or map
// of them has an element. It looks at every field, so that a field added
// to Facts is never dropped.
func holdsNothing(f *facts.Facts) bool {
	v := reflect.ValueOf(f).Elem()
	for i := range v.NumField() {
		switch fv := v.Field(i); fv.Kind() {
		case reflect.Slice, reflect.Map:
			if fv.Len() > 0 {
				return false
			}
		default:
			if !fv.IsZero() {
				return false
			}
		}
	}
	return true
}

// finish waits for the workers and merges their facts in bundle order.
func (p *run) finish() {
	p.wg.Wait()
	for _, j := range p.jobs {
		p.out.Sources = append(p.out.Sources, j.src)
	}
	// Issues the walk raised: on their entry (the first of that name, as the
	// walk names entries before it knows of duplicates), or on a source of
	// their own when the path never became an entry (the archive itself, a
	// skipped device file, a nested archive's own name).
	first := map[string]*facts.SourceInfo{}
	for _, j := range p.jobs {
		if _, ok := first[j.src.Path]; !ok {
			first[j.src.Path] = j.src
		}
	}
	for _, is := range p.walkIssues {
		if s := first[is.Src.File]; s != nil {
			s.Issues = append(s.Issues, is)
			continue
		}
		s := &facts.SourceInfo{Path: is.Src.File, Kind: facts.KindUnknown, Issues: []facts.Issue{is}}
		first[is.Src.File] = s
		p.out.Sources = append(p.out.Sources, s)
	}
	for _, j := range p.jobs {
		merge(p.out, j.part, j.src)
	}
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
func merge(dst, src *facts.Facts, info *facts.SourceInfo) {
	if src == nil {
		return
	}
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
	dst.Nodes = append(dst.Nodes, src.Nodes...)
	dst.Capture = append(dst.Capture, src.Capture...)
	dst.Cgroups = append(dst.Cgroups, src.Cgroups...)
	dst.System = append(dst.System, src.System...)
	dst.Assumptions = append(dst.Assumptions, src.Assumptions...)
	// Issues a parser raised through out.AddIssue land on its own source.
	for _, s := range src.Sources {
		info.Issues = append(info.Issues, s.Issues...)
	}
}
