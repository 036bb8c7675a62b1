// Package redact removes secrets from evidence before it leaves the machine:
// tokens and keys of the common services, Authorization headers, secret
// flags and settings in server arguments, values of *_TOKEN, *_KEY,
// *_SECRET and *PASSWORD* variables, passwords in URLs and private key
// blocks; and, when asked, host names, IP addresses and user names, which it
// replaces by pseudonyms that are the same for the same value across a
// bundle.
//
// Redaction keeps structure: every replacement has the length of what it
// replaces and no line is added or removed, so ps columns stay aligned, line
// numbers stay valid and the analyzer reads a redacted bundle as it reads the
// raw one. The secret patterns are data (patterns.go); the report counts
// what was replaced per kind and never holds a value.
package redact

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"sort"
	"sync"
)

// Mask is the byte a masked secret is made of.
const Mask = '*'

// Options configure a Redactor.
type Options struct {
	// Hosts also replaces host names, IP addresses and user names by
	// pseudonyms (host01, user1, 10.0.0.1 ...), each as long as the name.
	Hosts bool
	// Hostnames and Users are names known without reading the evidence:
	// the collecting machine's host name and the users running it.
	Hostnames []string
	Users     []string
}

// Counts are replacements per kind ("hf-token", "secret-variable",
// "hostname" ...). Values are never kept.
type Counts map[string]int

// Add adds o into c.
func (c Counts) Add(o Counts) {
	for k, v := range o {
		c[k] += v
	}
}

// Total is the number of replacements of every kind.
func (c Counts) Total() int {
	n := 0
	for _, v := range c {
		n += v
	}
	return n
}

// Redactor holds what is shared by the files of one bundle: the options and,
// with Hosts, the names learned and their pseudonyms. It is safe for
// concurrent use; a Stream is not.
type Redactor struct {
	opts Options

	mu     sync.Mutex
	hosts  map[string]bool
	users  map[string]bool
	ips    map[string]bool
	frozen bool
	pseudo map[string]string
	names  []string
	next   map[string]int
}

// New returns a Redactor.
func New(opts Options) *Redactor {
	r := &Redactor{opts: opts, hosts: map[string]bool{}, users: map[string]bool{}, ips: map[string]bool{},
		pseudo: map[string]string{}, next: map[string]int{}}
	for _, h := range opts.Hostnames {
		r.addHost(h)
	}
	for _, u := range opts.Users {
		r.addUser(u)
	}
	return r
}

// Hosts reports whether host names, IPs and users are replaced.
func (r *Redactor) Hosts() bool { return r.opts.Hosts }

// Stream redacts one file, line by line. Private key blocks span lines, so
// each file needs its own.
type Stream struct {
	r      *Redactor
	inKey  bool
	counts Counts
	lower  []byte
	// done marks the bytes of the current line that a pattern already
	// handled (masked, or kept as a token's prefix): a value that two
	// patterns see is masked and counted once.
	done []bool
	// present marks the patterns whose hints the line holds.
	present []bool
}

// NewStream starts the redaction of one file. With Hosts, the first stream
// freezes the learned names: learn every file before redacting any.
func (r *Redactor) NewStream() *Stream {
	if r.opts.Hosts {
		r.freeze()
	}
	return &Stream{r: r, counts: Counts{}}
}

// Counts returns what this stream replaced so far.
func (s *Stream) Counts() Counts { return s.counts }

// String redacts a one-line text (a command, an error message) and adds
// what it replaced to c.
func (r *Redactor) String(text string, c Counts) string {
	s := r.NewStream()
	b := []byte(text)
	s.Line(b)
	if c != nil {
		c.Add(s.counts)
	}
	return string(b)
}

var (
	beginKey = []byte("-----begin ")
	endKey   = []byte("-----end ")
	keyTail  = []byte("private key")
)

// Line redacts one line in place. b may end with its newline; its length
// never changes.
func (s *Stream) Line(b []byte) {
	if len(b) == 0 {
		return
	}
	s.lower = asciiLower(s.lower[:0], b)
	lower := s.lower
	if cap(s.done) < len(b) {
		s.done = make([]bool, len(b), 2*len(b))
	} else {
		s.done = s.done[:len(b)]
		clear(s.done)
	}
	if s.inKey {
		end := len(b)
		if i := bytes.Index(lower, endKey); i >= 0 && bytes.Contains(lower[i:], keyTail) {
			end, s.inKey = i, false
		}
		maskText(b[:end])
		if s.inKey {
			return
		}
	}
	if i := bytes.Index(lower, beginKey); i >= 0 {
		if j := bytes.Index(lower[i:], keyTail); j >= 0 && !bytes.Contains(lower[i:], endKey) {
			// The block's body follows on the next lines; mask what
			// follows the BEGIN marker on this one.
			start := i + j + len(keyTail)
			if k := bytes.Index(b[start:], []byte("-----")); k >= 0 {
				start += k + 5
			}
			maskText(b[start:])
			s.inKey = true
			s.counts["private-key"]++
			return
		}
	}
	n := len(secretPatterns) + len(tokenPatterns)
	if len(s.present) != n {
		s.present = make([]bool, n)
	}
	clear(s.present)
	lowerHints.find(lower, s.present)
	exactHints.find(b, s.present)
	for i := range secretPatterns {
		p := &secretPatterns[i]
		in := lower
		if p.exact {
			in = b
		}
		if !s.present[i] || p.need != 0 && bytes.IndexByte(b, p.need) < 0 {
			continue
		}
		if p.window == 0 {
			s.maskMatches(b, 0, p.re.FindAllSubmatchIndex(b, -1), p)
			continue
		}
		for _, h := range p.hints {
			for off := 0; ; {
				j := bytes.Index(in[off:], []byte(h))
				if j < 0 {
					break
				}
				pos := off + j
				off = pos + len(h)
				ws, we := max(0, pos-p.back), min(len(b), pos+p.window)
				s.maskMatches(b, ws, p.re.FindAllSubmatchIndex(b[ws:we], -1), p)
			}
		}
	}
	for i := range tokenPatterns {
		t := &tokenPatterns[i]
		if !s.present[len(secretPatterns)+i] {
			continue
		}
		for _, m := range t.re.FindAllIndex(b, -1) {
			s.mask(b, m[0], m[1], t.kind, t.keep)
		}
	}
	if s.r.opts.Hosts {
		s.r.replaceNames(b, s.counts)
		s.r.replaceIPs(b, lower, s.counts)
	}
}

// maskMatches masks the groups of matches found at offset base of b.
func (s *Stream) maskMatches(b []byte, base int, matches [][]int, p *secretPattern) {
	groups := p.groups
	if len(groups) == 0 {
		groups = []int{0}
	}
	for _, m := range matches {
		for _, g := range groups {
			if 2*g+1 < len(m) && m[2*g] >= 0 {
				s.maskValue(b, base+m[2*g], base+m[2*g+1], p.kind)
			}
		}
	}
}

// maskValue masks a value a generic pattern found. Placeholders (None,
// $VAR, <token>) are left alone; a value that is a known token is counted
// under the token's kind and keeps its prefix.
func (s *Stream) maskValue(b []byte, start, end int, kind string) {
	v := b[start:end]
	if placeholderRE.Match(v) || alreadyMasked(v) {
		return
	}
	keep := 0
	for i := range tokenPatterns {
		t := &tokenPatterns[i]
		if loc := t.re.FindIndex(v); loc != nil && loc[0] == 0 {
			kind, keep = t.kind, t.keep
			break
		}
	}
	s.mask(b, start, end, kind, keep)
}

// alreadyMasked reports a value that a redaction masked before (hf_****):
// a token's short prefix and masks. Bundling a redacted bundle again
// leaves it as it is.
func alreadyMasked(v []byte) bool {
	rest := bytes.TrimRight(v, string(Mask))
	return len(v)-len(rest) >= 4 && len(rest) <= 11
}

// mask replaces b[start:end] after its first keep bytes, skipping bytes an
// earlier pattern handled, and counts the secret if anything was left to
// mask.
func (s *Stream) mask(b []byte, start, end int, kind string, keep int) {
	masked := false
	for i := start; i < end; i++ {
		if s.done[i] {
			continue
		}
		s.done[i] = true
		if i >= start+keep {
			b[i] = Mask
			masked = true
		}
	}
	if masked {
		s.counts[kind]++
	}
}

// maskText masks every byte of b that is not white space, so that the
// lines of a key block keep their lengths and indentation.
func maskText(b []byte) {
	for i, c := range b {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			b[i] = Mask
		}
	}
}

func hasAny(lower []byte, hints []string) bool {
	for _, h := range hints {
		if bytes.Contains(lower, []byte(h)) {
			return true
		}
	}
	return false
}

func asciiLower(dst, b []byte) []byte {
	for _, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// MaxLine is the longest piece redacted as one line; longer lines are
// redacted in pieces of this size (a secret across a piece boundary is the
// one case that can escape, and needs a line of a megabyte).
const MaxLine = 1 << 20

// NewReader returns a reader of src with s applied to every line.
func NewReader(src io.Reader, s *Stream) io.Reader {
	return &reader{br: bufio.NewReaderSize(src, MaxLine), s: s}
}

type reader struct {
	br      *bufio.Reader
	s       *Stream
	buf     []byte
	pending []byte
	err     error
}

func (r *reader) Read(p []byte) (int, error) {
	for len(r.pending) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		line, err := r.br.ReadSlice('\n')
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			r.err = err
		}
		if len(line) == 0 {
			continue
		}
		r.buf = append(r.buf[:0], line...)
		r.s.Line(r.buf)
		r.pending = r.buf
	}
	n := copy(p, r.pending)
	r.pending = r.pending[n:]
	return n, nil
}

// Kinds lists the kinds a report may count, sorted, for documentation and
// tests.
func Kinds() []string {
	seen := map[string]bool{"private-key": true, "hostname": true, "user": true, "ipv4": true, "ipv6": true}
	for _, p := range secretPatterns {
		seen[p.kind] = true
	}
	for _, t := range tokenPatterns {
		seen[t.kind] = true
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
