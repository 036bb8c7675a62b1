// Package redact removes secrets from evidence before it leaves the machine.
// It finds them by the kind of value, each by structure or by shape:
//
//   - credential: the value of a setting, variable or flag whose name ends
//     in a secret word (words.go: api_key, admin_api_key, db_password,
//     MYSQL_PWD, --api-key), in k=v, k: v, JSON, YAML, Python reprs, shell
//     exports, .netrc and Kubernetes name/value lists, masked whole with any
//     quoting and over continuation lines; under a name that only may hold
//     one (cache_key), a value that looks like a key (entropy);
//   - header: Authorization, Cookie, X-API-Key and kin, a Bearer token,
//     curl -u's password;
//   - url-userinfo, query-credential, webhook-url: URLs, read by hand;
//   - key-block: the body of a PEM private key;
//   - token shapes (tokens.go): Hugging Face, OpenAI, GitHub, AWS, JWT ...;
//   - with Hosts, host names, IP addresses, user names and e-mail addresses,
//     replaced by pseudonyms that are the same for the same value across a
//     bundle.
//
// Each line is read once, left to right (scan.go): the cost is linear in
// the input whatever it holds. Redaction keeps structure: every replacement
// has the length of what it replaces and no line is added or removed, so ps
// columns stay aligned, line numbers stay valid and the analyzer reads a
// redacted bundle as it reads the raw one. The report counts what was
// replaced per kind and never holds a value. The secret-word policy is the
// project's one list: the parsers and the run comparison ask it too
// (IsSecretName, SecretValue, Conceal).
package redact

import (
	"bytes"
	"io"
	"sort"
	"strings"
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
	trie   *trie
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

// Stream redacts one file, line by line. Values continue over lines (key
// blocks, YAML blocks, quoted and bracketed values, a flag's argument after
// a backslash), so each file needs its own.
type Stream struct {
	r      *Redactor
	counts Counts
	// cont is a value that continues on the next line.
	cont continuation
	// flagNext holds a secret flag whose line ended with a backslash: its
	// argument starts the next line.
	flagNext valueCtx
	// pendingName counts down the lines in which a "value" key holds the
	// secret that a "name" key named (Kubernetes' env lists).
	pendingName int
	// envLike: every line so far is NAME=VALUE, as in an env dump, where
	// a value runs to the end of its line.
	envLike bool
	// midLine: the last piece ended without a newline (a line longer
	// than MaxLine is redacted in pieces).
	midLine bool
	// jwtFrom is the offset, in the current line, before which no JWT
	// can start (tokenAt).
	jwtFrom int
	// masked is set by maskScalar, for a structured value's one count.
	masked bool
	// lastValue and lastValueEnd are the last bare value's context and
	// end, for a value that a piece's end cuts.
	lastValue    valueCtx
	lastValueEnd int
	// weakUntil ends, in the current line, the last value a weak name
	// held that was judged no secret.
	weakUntil int
	// indent is the current line's indentation, measured once.
	indent int
	lower  []byte // storage for a line lower-cased (--redact-hosts)
}

type contKind int

const (
	contNone contKind = iota
	contKey
	contQuote
	contBracket
	contBlock
	contBare
)

// continuation is a value left open at the end of a line.
type continuation struct {
	kind  contKind
	delim string // contQuote: the closing quote
	depth int    // contBracket: brackets still open
	// contBlock: the key's indentation; lines indented deeper are the
	// value.
	indent int
	st     strength
	// kindName counts a YAML block once it masks something.
	kindName string
	bare     valueCtx // contBare: the value cut at a piece's end
	left     int      // lines it may still take
}

// NewStream starts the redaction of one file. With Hosts, the first stream
// freezes the learned names: learn every file before redacting any.
func (r *Redactor) NewStream() *Stream {
	if r.opts.Hosts {
		r.freeze()
	}
	return &Stream{r: r, counts: Counts{}, envLike: true}
}

// Counts returns what this stream replaced so far.
func (s *Stream) Counts() Counts { return s.counts }

// String redacts a one-line text (a command, an error message, a path)
// and adds what it replaced to c.
func (r *Redactor) String(text string, c Counts) string {
	s := r.NewStream()
	b := []byte(text)
	s.Line(b)
	if c != nil {
		c.Add(s.counts)
	}
	return string(b)
}

// Path redacts a file or member name, or a path the manifest records,
// one element at a time: a value ends where its element does, so that
// secrets/HF_TOKEN=hf_x/run.log keeps its folders and file name apart.
func (r *Redactor) Path(name string, c Counts) string {
	if !strings.ContainsAny(name, "/\\") {
		return r.String(name, c)
	}
	b := []byte(name)
	start := 0
	for i := 0; i <= len(b); i++ {
		if i < len(b) && b[i] != '/' && b[i] != '\\' {
			continue
		}
		if i > start {
			s := r.NewStream()
			s.Line(b[start:i])
			if c != nil {
				c.Add(s.counts)
			}
		}
		start = i + 1
	}
	return string(b)
}

// Line redacts one line in place. b may end with its newline; its length
// never changes, and no newline is written or removed.
func (s *Stream) Line(b []byte) {
	if len(b) == 0 {
		return
	}
	body := b
	for len(body) > 0 && (body[len(body)-1] == '\n' || body[len(body)-1] == '\r') {
		body = body[:len(body)-1]
	}
	lineStart := !s.midLine
	s.midLine = b[len(b)-1] != '\n'
	s.jwtFrom, s.lastValueEnd, s.weakUntil = 0, -1, 0
	if lineStart {
		s.indent = 0
		for s.indent < len(body) && (body[s.indent] == ' ' || body[s.indent] == '\t') {
			s.indent++
		}
		s.envLike = s.envLike && envLine(body)
		if s.pendingName > 0 {
			s.pendingName--
		}
	}
	i := s.continued(body, lineStart)
	s.scan(body, i, lineStart)
	if s.cont.kind == contNone && s.midLine && len(body) == len(b) {
		s.cutValue(body)
	}
	if s.r.opts.Hosts {
		s.r.replaceNames(body, s.counts)
		// An empty buffer: replaceIPs lower-cases the line into it only
		// when the line may hold an address.
		if cap(s.lower) < len(body) {
			s.lower = make([]byte, 0, 2*len(body))
		}
		s.r.replaceIPs(body, s.lower[:0], s.counts)
		s.r.replaceEmails(body, s.counts)
	}
}

// cutValue notes a bare value that a piece's end cut: the next piece
// goes on masking it.
func (s *Stream) cutValue(body []byte) {
	if s.lastValueEnd == len(body) && s.lastValue.st != notSecret {
		s.cont = continuation{kind: contBare, bare: s.lastValue, left: 1}
	}
}

// continued applies what the previous line left open to the start of this
// one and returns where scanning starts.
func (s *Stream) continued(body []byte, lineStart bool) int {
	if lineStart && s.flagNext.st != notSecret {
		ctx := s.flagNext
		s.flagNext = valueCtx{}
		v := 0
		for v < len(body) && (body[v] == ' ' || body[v] == '\t') {
			v++
		}
		if v < len(body) && body[v] != '-' {
			return s.value(body, v, &ctx)
		}
		return 0
	}
	c := &s.cont
	if c.kind == contNone {
		return 0
	}
	c.left--
	if c.left < 0 {
		*c = continuation{}
		return 0
	}
	switch c.kind {
	case contKey:
		if k := bytes.Index(body, endKey); k >= 0 {
			maskText(body[:k])
			*c = continuation{}
			return k
		}
		if !keyBodyLine(body) {
			*c = continuation{}
			return 0
		}
		maskText(body)
		return len(body)
	case contQuote:
		if k := findClose(body, 0, c.delim); k >= 0 {
			maskText(body[:k])
			end := k + len(c.delim)
			*c = continuation{}
			return end
		}
		maskText(body)
		return len(body)
	case contBracket:
		depth := c.depth
		end := s.maskScalars(body, 0, &depth, c.st)
		s.masked = false
		if depth == 0 {
			*c = continuation{}
			return end
		}
		c.depth = depth
		return len(body)
	case contBare:
		ctx := c.bare
		*c = continuation{}
		end := bareEnd(body, 0, &ctx)
		maskBytes(body[:end])
		return end
	case contBlock:
		if !lineStart {
			return 0
		}
		ind := 0
		for ind < len(body) && (body[ind] == ' ' || body[ind] == '\t') {
			ind++
		}
		if ind == len(body) {
			return len(body) // a blank line inside the block
		}
		content := body[ind:]
		dash := len(content) > 1 && content[0] == '-' && content[1] == ' '
		if ind <= c.indent && !(dash && ind == c.indent) {
			*c = continuation{}
			return 0
		}
		if dash {
			content = bytes.TrimLeft(content[1:], " ")
		}
		if s.blockLine(content, c.st) && c.kindName != "" {
			s.counts[c.kindName]++
			c.kindName = ""
		}
		return len(body)
	}
	return 0
}

// blockLine masks one line of a YAML block or of a value on the lines
// below its key: a quoted or bracketed scalar keeps its quotes and
// brackets (pretty-printed JSON: "token":\n  "xyz"}), anything else is
// masked but for its white space. It reports whether it masked.
func (s *Stream) blockLine(content []byte, st strength) bool {
	trimmed := bytes.TrimRight(content, " \t")
	if len(trimmed) == 0 {
		return false
	}
	switch q := trimmed[0]; q {
	case '"', '\'':
		k := findClose(trimmed, 1, string(q))
		if k < 0 {
			k = len(trimmed)
		}
		if hides(st, trimmed[1:k]) {
			return maskText(trimmed[1:k])
		}
		return false
	case '[', '{':
		depth := 0
		s.maskScalars(trimmed, 0, &depth, st)
		m := s.masked
		s.masked = false
		return m
	}
	if hides(st, trimmed) {
		return maskText(trimmed)
	}
	return false
}

// envLine reports NAME=VALUE lines, blank lines and comments: the lines
// of an env dump.
func envLine(b []byte) bool {
	b = bytes.TrimLeft(b, " \t")
	if len(b) == 0 || b[0] == '#' {
		return true
	}
	for _, p := range []string{"export ", "declare -x "} {
		b = bytes.TrimPrefix(b, []byte(p))
	}
	k := 0
	for k < len(b) && (isLower(b[k]) || isUpper(b[k]) || b[k] == '_' || k > 0 && isDigit(b[k])) {
		k++
	}
	return k > 0 && k < len(b) && b[k] == '='
}

var (
	beginKey = []byte("-----BEGIN ")
	endKey   = []byte("-----END ")
	keyTail  = []byte("PRIVATE KEY")
)

// keyBlock masks the body of a private key block whose BEGIN marker is
// at b[i]: up to its END marker on this line (a key written with \n in
// JSON), or the rest of the line and the lines that follow.
func (s *Stream) keyBlock(b []byte, i int) (int, bool) {
	head := b[i+len(beginKey) : min(len(b), i+len(beginKey)+64)]
	close := bytes.Index(head, []byte("-----"))
	if close < 0 || !bytes.Contains(bytes.ToUpper(head[:close]), keyTail) {
		return 0, false
	}
	bodyStart := i + len(beginKey) + close + 5
	if k := bytes.Index(b[bodyStart:], endKey); k >= 0 {
		end := bodyStart + k
		if maskText(b[bodyStart:end]) {
			s.counts[kindKeyBlock]++
		}
		next := end + len(endKey)
		if m := bytes.Index(b[next:min(len(b), next+64)], []byte("-----")); m >= 0 {
			next += m + 5
		}
		return next, true
	}
	maskText(b[bodyStart:])
	s.counts[kindKeyBlock]++
	s.cont = continuation{kind: contKey, left: maxContinuation}
	return len(b), true
}

// keyBodyLine reports a line of a key block's body: base64, or a header
// such as Proc-Type: or DEK-Info:, with any indentation.
func keyBodyLine(b []byte) bool {
	b = bytes.Trim(b, " \t")
	if len(b) == 0 {
		return true
	}
	if k := bytes.IndexByte(b, ':'); k > 0 && nameRun(b[:k]) {
		return true
	}
	for _, c := range b {
		if !base64Byte[c] {
			return false
		}
	}
	return true
}

var base64Byte = setOf("a-z", "A-Z", "0-9", "+/=_-")

func nameRun(b []byte) bool {
	for _, c := range b {
		if !nameByte[c] {
			return false
		}
	}
	return true
}

// mask replaces b[start:end] by mask bytes and counts one secret of kind
// if anything was left to mask.
func (s *Stream) mask(b []byte, start, end int, kind string) {
	if start < end && maskBytes(b[start:end]) {
		s.counts[kind]++
	}
}

// maskBytes replaces every byte of b but line ends by the mask byte and
// reports whether one changed.
func maskBytes(b []byte) bool {
	changed := false
	for i, c := range b {
		if c != '\n' && c != '\r' && c != Mask {
			b[i] = Mask
			changed = true
		}
	}
	return changed
}

// maskText masks every byte of b that is not white space, so that the
// lines of a block keep their lengths and indentation.
func maskText(b []byte) bool {
	changed := false
	for i, c := range b {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != Mask {
			b[i] = Mask
			changed = true
		}
	}
	return changed
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

// MaxLine is the longest piece redacted as one line; a longer line is
// redacted in pieces of at most this size, cut after white space where the
// last 64 KiB of a piece hold some, so that a name and its value stay in
// one piece. A value cut by a piece's end goes on being masked in the next.
const MaxLine = 1 << 20

// cutWindow is how far back from MaxLine a piece looks for white space.
const cutWindow = 64 << 10

// NewReader returns a reader of src with s applied to every line.
func NewReader(src io.Reader, s *Stream) io.Reader {
	return &reader{lines: lines{src: src}, s: s}
}

// reader yields src line by line, each redacted; out is the redacted
// piece being handed out.
type reader struct {
	lines
	s       *Stream
	out     []byte
	pending []byte
}

func (r *reader) Read(p []byte) (int, error) {
	for len(r.pending) == 0 {
		line, err := r.next()
		if err != nil {
			return 0, err
		}
		r.out = append(r.out[:0], line...)
		r.s.Line(r.out)
		r.pending = r.out
	}
	n := copy(p, r.pending)
	r.pending = r.pending[n:]
	return n, nil
}

// lines splits a stream into lines, and a line longer than MaxLine into
// pieces. Its buffer grows with the longest line, up to MaxLine and a
// read: a small file costs a small buffer.
type lines struct {
	src io.Reader
	buf []byte // buf[off:] is read and not yet handed out
	off int
	// seen is how much of buf[off:] is known to hold no newline.
	seen int
	err  error
}

// next returns the next line or piece, valid until the next call, or the
// source's error (io.EOF at its end) once everything was handed out.
func (l *lines) next() ([]byte, error) {
	for {
		data := l.buf[l.off:]
		if i := bytes.IndexByte(data[l.seen:min(len(data), MaxLine)], '\n'); i >= 0 {
			return l.take(l.seen + i + 1), nil
		}
		l.seen = min(len(data), MaxLine)
		switch {
		case len(data) >= MaxLine:
			cut := MaxLine
			if k := bytes.LastIndexAny(data[MaxLine-cutWindow:MaxLine], " \t"); k >= 0 {
				cut = MaxLine - cutWindow + k + 1
			}
			return l.take(cut), nil
		case l.err != nil && len(data) > 0:
			return l.take(len(data)), nil
		case l.err != nil:
			return nil, l.err
		}
		l.fill()
	}
}

func (l *lines) take(n int) []byte {
	b := l.buf[l.off : l.off+n]
	l.off += n
	l.seen = 0
	return b
}

// fill reads more of src into buf, after moving what is left to its
// start and growing it when it is full.
func (l *lines) fill() {
	if l.off > 0 {
		n := copy(l.buf, l.buf[l.off:])
		l.buf, l.off = l.buf[:n], 0
	}
	if cap(l.buf)-len(l.buf) < 4<<10 {
		nb := make([]byte, len(l.buf), min(max(2*cap(l.buf), 32<<10), MaxLine+256<<10))
		copy(nb, l.buf)
		l.buf = nb
	}
	n, err := l.src.Read(l.buf[len(l.buf):cap(l.buf)])
	l.buf = l.buf[:len(l.buf)+n]
	if err != nil {
		l.err = err
	}
}

// Kinds lists the kinds a report may count, sorted, for documentation and
// tests.
func Kinds() []string {
	seen := map[string]bool{kindCredential: true, kindHeader: true, kindUserinfo: true, kindQuery: true,
		kindKeyBlock: true, kindWebhook: true, "hostname": true, "user": true, "ipv4": true, "ipv6": true, "email": true}
	for _, t := range tokenShapes {
		seen[t.kind] = true
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
