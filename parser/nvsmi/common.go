package nvsmi

import (
	"bytes"
	"regexp"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/textio"
)

// MaxSnapshots bounds the snapshots kept from one source. A looping capture
// (dmon, pmon, `-q -l 5`, `--query-gpu ... -l 1`) of a week holds millions of
// samples; past the bound every other one is dropped and only every 2nd,
// then 4th ... sample is kept, so the survivors still span the whole capture
// evenly. The first and the last sample are always kept.
const MaxSnapshots = 512

// thinner keeps a bounded, evenly spaced selection of snapshots.
//
// The samples it drops are handed out again by get, with their GPU and
// process records, so that a long capture costs no allocation per sample.
type thinner struct {
	kept   []*facts.GPUSnapshot
	last   *facts.GPUSnapshot // the latest sample when it was not kept
	stride int
	seen   int
	free   []*facts.GPUSnapshot
}

func (t *thinner) add(s *facts.GPUSnapshot) {
	if t.stride == 0 {
		t.stride = 1
	}
	if t.last != nil {
		// Superseded by s, kept or not.
		t.recycle(t.last)
		t.last = nil
	}
	if t.seen%t.stride == 0 {
		t.kept = append(t.kept, s)
	} else {
		t.last = s
	}
	t.seen++
	if len(t.kept) > MaxSnapshots {
		n := 0
		for i := 0; i < len(t.kept); i++ {
			if i%2 == 0 {
				t.kept[n] = t.kept[i]
				n++
			} else {
				t.recycle(t.kept[i])
			}
		}
		clear(t.kept[n:])
		t.kept = t.kept[:n]
		t.stride *= 2
	}
}

func (t *thinner) recycle(s *facts.GPUSnapshot) {
	if len(t.free) < 4 {
		t.free = append(t.free, s)
	}
}

// get returns an empty snapshot, a dropped one when there is one.
func (t *thinner) get(src facts.Source, kind facts.Kind) *facts.GPUSnapshot {
	n := len(t.free)
	if n == 0 {
		return &facts.GPUSnapshot{Src: src, Format: kind}
	}
	s := t.free[n-1]
	t.free = t.free[:n-1]
	gpus, procs := s.GPUs[:0], s.Procs[:0]
	*s = facts.GPUSnapshot{Src: src, Format: kind, GPUs: gpus, Procs: procs}
	return s
}

// A snapshot keeps at most MaxGPUs GPUs and MaxGPUProcs compute processes
// (a host has 8 or 16 GPUs; a dump of a million rows is built, not
// captured); the rest are counted in Omitted and said on the file.
const (
	MaxGPUs     = 256
	MaxGPUProcs = 4096
)

// addGPU appends g to s, or counts it past MaxGPUs.
func addGPU(s *facts.GPUSnapshot, g *facts.GPU) {
	if len(s.GPUs) >= MaxGPUs {
		s.OmittedGPUs++
		return
	}
	s.GPUs = append(s.GPUs, g)
}

// addProcs appends ps to s, counting those past MaxGPUProcs.
func addProcs(s *facts.GPUSnapshot, ps ...*facts.GPUProcess) {
	n := min(len(ps), max(MaxGPUProcs-len(s.Procs), 0))
	s.Procs = append(s.Procs, ps[:n]...)
	s.OmittedProcs += len(ps) - n
}

// nextGPU appends an empty GPU to s, reusing the record a recycled snapshot
// left in its slice. Past MaxGPUs the GPU is counted and not kept: the
// caller fills a record that nothing keeps.
func nextGPU(s *facts.GPUSnapshot, src facts.Source) *facts.GPU {
	if len(s.GPUs) >= MaxGPUs {
		s.OmittedGPUs++
		return &facts.GPU{Src: src, Index: -1}
	}
	n := len(s.GPUs)
	if n < cap(s.GPUs) {
		if g := s.GPUs[:n+1][n]; g != nil {
			reasons := g.ClockReasons[:0]
			*g = facts.GPU{Src: src, Index: -1, ClockReasons: reasons}
			s.GPUs = s.GPUs[:n+1]
			return g
		}
	}
	g := &facts.GPU{Src: src, Index: -1}
	s.GPUs = append(s.GPUs, g)
	return g
}

// nextProc appends an empty process to s, the same way.
func nextProc(s *facts.GPUSnapshot, src facts.Source) *facts.GPUProcess {
	if len(s.Procs) >= MaxGPUProcs {
		s.OmittedProcs++
		return &facts.GPUProcess{Src: src, GPU: -1}
	}
	n := len(s.Procs)
	if n < cap(s.Procs) {
		if p := s.Procs[:n+1][n]; p != nil {
			*p = facts.GPUProcess{Src: src, GPU: -1}
			s.Procs = s.Procs[:n+1]
			return p
		}
	}
	p := &facts.GPUProcess{Src: src, GPU: -1}
	s.Procs = append(s.Procs, p)
	return p
}

// flush appends the kept snapshots to out, and says on the file what a
// snapshot counted and did not keep.
func (t *thinner) flush(out *facts.Facts, in *textio.Input) {
	start := len(out.GPUs)
	out.GPUs = append(out.GPUs, t.kept...)
	if t.last != nil {
		out.GPUs = append(out.GPUs, t.last)
	}
	t.kept, t.last = nil, nil
	for _, s := range out.GPUs[start:] {
		if s.OmittedGPUs > 0 {
			in.IssueAt(s.Src.Line, facts.IssueSummarized, "a snapshot of %d GPUs: kept the first %d; the other %d were counted, not kept",
				len(s.GPUs)+s.OmittedGPUs, len(s.GPUs), s.OmittedGPUs)
		}
		if s.OmittedProcs > 0 {
			in.IssueAt(s.Src.Line, facts.IssueSummarized, "a snapshot of %d GPU processes: kept the first %d; the other %d were counted, not kept",
				len(s.Procs)+s.OmittedProcs, len(s.Procs), s.OmittedProcs)
		}
	}
}

// maxIssues bounds the parse issues one source reports one by one; a binary
// blob misdetected as nvidia-smi would otherwise report every line.
const maxIssues = 100

// rep reports parse issues, at most maxIssues one by one and then one
// summary (done).
//
// It also holds the per-file caches that keep the hot loops of long
// captures from allocating: the same names, states and bus ids come back in
// every sample.
type rep struct {
	in       *textio.Input
	n        int
	lastLine int
	strs     map[string]string
	caps     map[string]capResult
}

type capResult struct {
	arch, cc string
	ok       bool
}

const maxCached = 512

// str returns a string value, or "" for N/A and its kin, shared with the
// earlier equal values.
func (r *rep) str(v []byte) string {
	if special(v) != valOK {
		return ""
	}
	return r.intern(bytes.TrimSpace(unbracket(v)))
}

func (r *rep) intern(b []byte) string {
	if s, ok := r.strs[string(b)]; ok {
		return s
	}
	s := string(b)
	if r.strs == nil {
		r.strs = make(map[string]string)
	}
	if len(r.strs) < maxCached {
		r.strs[s] = s
	}
	return s
}

// bus normalizes a bus id, "" when it is none.
func (r *rep) bus(v []byte) string {
	var buf [16]byte
	b, ok := normBusID(buf[:0], v)
	if !ok {
		return ""
	}
	return r.intern(b)
}

// finishGPU is finishGPU with the product table lookups cached.
func (r *rep) finishGPU(g *facts.GPU) {
	if g.CC != "" && g.Arch != "" {
		return
	}
	c, ok := r.caps[g.Name]
	if !ok {
		c.arch, c.cc, c.ok = Capability(g.Name)
		if r.caps == nil {
			r.caps = make(map[string]capResult)
		}
		if len(r.caps) < maxCached {
			r.caps[g.Name] = c
		}
	}
	applyCapability(g, c)
}

func (r *rep) at(line int, kind facts.IssueKind, format string, args ...any) {
	r.n++
	if r.n <= maxIssues {
		r.in.IssueAt(line, kind, format, args...)
		return
	}
	r.lastLine = line
}

// here reports an issue at the current line.
func (r *rep) here(kind facts.IssueKind, format string, args ...any) {
	r.at(r.in.Line(), kind, format, args...)
}

func (r *rep) done() {
	if r.n > maxIssues {
		r.in.IssueAt(r.lastLine, facts.IssueMalformed, "%d more parse issues not listed (the last on this line)", r.n-maxIssues)
	}
}

var busIDRe = regexp.MustCompile(`(?i)\b(?:[0-9a-f]{4,8}:)?[0-9a-f]{2}:[0-9a-f]{2}\.[0-9a-f]\b`)

// errorPrefixes start the lines nvidia-smi prints instead of data when a GPU
// or the driver is sick.
var errorPrefixes = [][]byte{
	[]byte("Unable to determine the device handle"),
	[]byte("No devices were found"),
	[]byte("NVIDIA-SMI has failed"),
	[]byte("Failed to initialize NVML"),
	[]byte("NVML library version"),
	[]byte("Unable to query"),
	[]byte("GPU access blocked by the operating system"),
}

// errorLine recognizes such a line and returns the bus id it names.
func errorLine(line []byte) (busID string, ok bool) {
	t := bytes.TrimSpace(line)
	for _, p := range errorPrefixes {
		if bytes.HasPrefix(t, p) {
			if m := busIDRe.Find(t); m != nil {
				busID = NormalizeBusID(string(m))
			}
			return busID, true
		}
	}
	return "", false
}

// addError records an error line on the snapshot.
func addError(s *facts.GPUSnapshot, src facts.Source, line []byte) {
	id, _ := errorLine(line)
	if len(s.Errors) < 64 {
		s.Errors = append(s.Errors, &facts.GPUError{Src: src, BusID: id, Text: string(bytes.TrimSpace(line))})
	}
}

// trimRight drops trailing blanks (the table pads its timestamp line).
func trimRight(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// lowerInto appends the ASCII lower case of s to dst.
func lowerInto(dst, s []byte) []byte {
	for _, c := range s {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// span is the position of a field in its line, so that a multi-word field
// (a GPU or process name) can be cut from the line with its inner blanks.
type span struct{ s, e int }

// spans splits b at runs of the separator bytes (blanks, and commas when
// comma is set).
func spans(dst []span, b []byte, comma bool) []span {
	start := -1
	for i := 0; i <= len(b); i++ {
		sep := i == len(b)
		if !sep {
			c := b[i]
			sep = c == ' ' || c == '\t' || comma && c == ','
		}
		if sep {
			if start >= 0 {
				dst = append(dst, span{start, i})
				start = -1
			}
		} else if start < 0 {
			start = i
		}
	}
	return dst
}
