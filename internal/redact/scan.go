package redact

import "bytes"

// The scanner reads a line once, left to right, and finds every secret by
// structure: names (runs of letters, digits and _ . -) followed by a
// separator and a value, flags followed by their argument, URLs, header
// values, key blocks, and token shapes at word starts. Each byte is looked
// at a bounded number of times: a run is classified once, a value is
// masked once and skipped, and look-aheads have fixed limits. That keeps
// the redaction linear in its input whatever the input holds (issue 18:
// regular expressions run in windows around every hint cost minutes on a
// few megabytes built around the hints).

// nameByte marks the bytes of a name: a setting, a variable, a flag, a
// header, a URL scheme or a query parameter.
var nameByte = setOf("a-z", "A-Z", "0-9", "_.-")

// Kinds of what is replaced. Token shapes add theirs (tokens.go).
const (
	kindCredential = "credential"       // a value under a secret name: settings, variables, flags
	kindHeader     = "header"           // Authorization, Cookie, X-API-Key, a bearer token
	kindUserinfo   = "url-userinfo"     // the password (or token) in scheme://user:pass@host
	kindQuery      = "query-credential" // ?token=, &sig=, ?api_key=
	kindKeyBlock   = "key-block"        // the body of a -----BEGIN ... PRIVATE KEY----- block
	kindWebhook    = "webhook-url"      // the secret path of a Slack or Discord webhook
)

// maxContinuation bounds how many lines an open value may continue on
// (a quoted or bracketed value, a YAML block, a key block): an unclosed
// quote in a log must not mask the rest of the file.
const maxContinuation = 1000

// valueCtx is what the scanner knows about a value when it starts.
type valueCtx struct {
	st   strength
	kind string
	// header values (Authorization, Cookie) run to the end of their
	// quotes or line; the Authorization scheme stays readable.
	header, scheme bool
	// quote is the quote the name sits in ("HF_TOKEN=x"), which also
	// ends the value; escaped when it is written \".
	quote   byte
	escaped bool
	// lineRest: the value runs to the end of the line (an env dump, a
	// YAML or INI setting); yaml also stops it at a comment.
	lineRest, yaml bool
	query          bool // a URL query parameter: & # ; end it
	semicolon      bool // in a k=v; list (a connection string): ; ends it
	depth          int  // brackets open before the name: , ) ] } end it
	lineLevel      bool // the name starts its line: the value may continue
	indent         int  // the name line's indentation, for a YAML block
}

// scan redacts body[i:]; lineStart is false for the second and later
// pieces of a line longer than MaxLine.
func (s *Stream) scan(body []byte, i int, lineStart bool) {
	depth := 0
	for i < len(body) {
		c := body[i]
		if !nameByte[c] {
			switch c {
			case '(', '[', '{':
				depth++
			case ')', ']', '}':
				if depth > 0 {
					depth--
				}
			}
			i++
			continue
		}
		j := i + 1
		for j < len(body) && nameByte[body[j]] {
			j++
		}
		i = s.run(body, i, j, depth, lineStart)
	}
}

// run handles the name-like run body[i:j] and returns where scanning
// goes on.
func (s *Stream) run(b []byte, i, j, depth int, lineStart bool) int {
	// Key blocks: -----BEGIN RSA PRIVATE KEY-----.
	if b[i] == '-' && bytes.HasPrefix(b[i:], beginKey) {
		if next, ok := s.keyBlock(b, i); ok {
			return next
		}
	}
	// URLs: the run is the scheme.
	if j+2 < len(b) && b[j] == ':' && b[j+1] == '/' && b[j+2] == '/' && isLower(b[i]|0x20) {
		return s.url(b, i, j)
	}
	if next, ok := s.named(b, i, j, depth, lineStart); ok {
		return next
	}
	s.tokens(b, i, j)
	return j
}

// tokens masks the token shapes that start at a word start inside the
// run b[i:j].
func (s *Stream) tokens(b []byte, i, j int) {
	for k := i; k < j; k++ {
		if k > i && isWordByte(b[k-1]) {
			continue
		}
		m, ok, from := tokenAt(b, k, s.jwtFrom)
		s.jwtFrom = from
		if !ok {
			continue
		}
		s.mask(b, k+m.shape.keep, m.end, m.shape.kind)
		k = m.end - 1
	}
}

// named handles a run that may be a name with a value: a setting, a
// variable, a flag, a header, a query parameter, a bearer token, curl's
// -u. ok is false when the run is none of these.
func (s *Stream) named(b []byte, i, j, depth int, lineStart bool) (int, bool) {
	name := b[i:j]
	k := j
	// A quoted name: "api_key": ..., 'api_key': ..., \"api_key\": ...,
	// environ["HF_TOKEN"] = ...
	var quote byte
	escaped := false
	switch {
	case i > 0 && (b[i-1] == '"' || b[i-1] == '\'') && k < len(b) && b[k] == b[i-1]:
		k++
		if k < len(b) && b[k] == ']' && i > 1 && b[i-2] == '[' {
			k++
		}
	case i > 1 && b[i-1] == '"' && b[i-2] == '\\' && k+1 < len(b) && b[k] == '\\' && b[k+1] == '"':
		k += 2
	case i > 1 && b[i-1] == '"' && b[i-2] == '\\':
		quote, escaped = '"', true
	case i > 0 && (b[i-1] == '"' || b[i-1] == '\''):
		quote = b[i-1]
	}
	quotedName := k > j
	sp := k
	for sp < len(b) && (b[sp] == ' ' || b[sp] == '\t') {
		sp++
	}
	sepLen := separator(b, sp)
	flag := name[0] == '-'
	if sepLen == 0 && !flag {
		if next, ok := s.bearer(b, i, j); ok {
			return next, true
		}
		if sp > k && s.spaceForm(b, i, j, sp, lineStart) {
			return s.spaceValue(b, i, j, sp, lineStart)
		}
		return 0, false
	}
	if flag {
		if next, ok := s.userFlag(b, i, j, k, quote, escaped); ok {
			return next, true
		}
	}
	inQuery := i > 0 && (b[i-1] == '?' || b[i-1] == '&')
	var pb, lb [32]byte
	prev, last, nw := lastWords(name, &pb, &lb)
	st := judge(name, prev, last, nw, inQuery)
	if sepLen > 0 && s.pendingName > 0 && eqFold(name, "value") {
		// {"name": "HF_TOKEN", "value": "..."}: the secret's name was
		// the previous key's value.
		st = strong
		s.pendingName = 0
	}
	if st == notSecret {
		if sepLen > 0 && isNameKey(name) {
			s.checkPendingName(b, sp+sepLen)
		}
		return 0, false
	}
	ctx := valueCtx{st: st, kind: kindCredential, quote: quote, escaped: escaped, query: inQuery, depth: depth}
	if string(last) == "authorization" || string(last) == "cookie" || string(last) == "cookies" {
		ctx.kind, ctx.header = kindHeader, true
		ctx.scheme = string(last) == "authorization"
	} else if sepLen > 0 && b[sp] == ':' && bytes.IndexByte(name, '-') > 0 && bytes.IndexByte(name, '_') < 0 && name[0] != '-' {
		ctx.kind = kindHeader // X-API-Key: ..., api-key: ...
	}
	if inQuery {
		ctx.kind = kindQuery
	}
	if p := i - 1; p >= 0 && !quotedName {
		for p >= 0 && b[p] == ' ' {
			p--
		}
		ctx.semicolon = p >= 0 && b[p] == ';'
	}
	v := sp + sepLen
	if flag && sepLen == 0 {
		// --api-key VALUE: the next word, unless it is another flag; a
		// backslash ending the line puts the value on the next one.
		if quotedName {
			// ['--api-key', 'VALUE']: a list of arguments.
			if sp < len(b) && b[sp] == ',' {
				v = sp + 1
			} else {
				return 0, false
			}
		} else if sp == k {
			return 0, false
		}
		for v < len(b) && (b[v] == ' ' || b[v] == '\t') {
			v++
		}
		if v >= len(b) || b[v] == '-' {
			return 0, false
		}
		if b[v] == '\\' && v+1 == len(b) {
			s.flagNext = ctx
			return len(b), true
		}
		ctx.lineRest = false
		return s.value(b, v, &ctx), true
	}
	ctx.lineLevel, ctx.indent = s.lineLevel(b, i, quote, lineStart)
	ctx.yaml = b[sp] == ':' && ctx.lineLevel
	for v < len(b) && (b[v] == ' ' || b[v] == '\t') {
		v++
	}
	// In an env dump a value runs to its line's end (DB_PASSWORD=a b c);
	// HF_TOKEN=x python3 serve.py --port 1 is a command, whose arguments
	// the analyzer reads.
	ctx.lineRest = ctx.lineLevel && (b[sp] == ':' || sp > k || s.envLike && !commandAfter(b, v))
	return s.value(b, v, &ctx), true
}

// commandAfter reports a command after the value that starts at b[v]: a
// flag (" -x", " --x") after its first white space.
func commandAfter(b []byte, v int) bool {
	sp := bytes.IndexByte(b[v:], ' ')
	if sp < 0 {
		return false
	}
	rest := b[v+sp:]
	for i := 0; i+2 < len(rest); i++ {
		if rest[i] == ' ' && rest[i+1] == '-' && (isLower(rest[i+2]|0x20) || rest[i+2] == '-') {
			return true
		}
	}
	return false
}

// separator returns the length of the assignment at b[p]: = := => : (not
// == or :: or ://), or 0.
func separator(b []byte, p int) int {
	if p >= len(b) {
		return 0
	}
	next := byte(0)
	if p+1 < len(b) {
		next = b[p+1]
	}
	switch b[p] {
	case '=':
		switch next {
		case '=':
			return 0
		case '>':
			return 2
		}
		return 1
	case ':':
		switch next {
		case ':', '/':
			return 0
		case '=':
			return 2
		}
		return 1
	}
	return 0
}

// lineLevel reports a name that starts its line, after indentation and
// the words that introduce an assignment (export, declare -x, ENV, a YAML
// list's dash), and the line's indentation.
func (s *Stream) lineLevel(b []byte, i int, quote byte, lineStart bool) (bool, int) {
	if !lineStart {
		return false, 0
	}
	indent := s.indent
	if i < indent || i-indent > 24 {
		return false, indent // the words before a line-level name are short
	}
	pre := b[indent:i]
	if quote != 0 && len(pre) > 0 && pre[len(pre)-1] == quote {
		pre = pre[:len(pre)-1]
		if len(pre) > 0 && pre[len(pre)-1] == '\\' {
			pre = pre[:len(pre)-1]
		}
	} else if len(pre) > 0 && (pre[len(pre)-1] == '"' || pre[len(pre)-1] == '\'') {
		pre = pre[:len(pre)-1] // a quoted key: "password": ...
	}
	pre = bytes.TrimRight(pre, " \t")
	// {"api_keys": [ opens a JSON object on the name's line.
	pre = bytes.TrimLeft(pre, "{[( \t")
	switch string(pre) {
	case "", "export", "declare -x", "declare -rx", "typeset -x", "readonly", "local", "set", "-", "ENV", "ARG",
		"Environment=", "setenv", "env":
		return true, indent
	}
	return false, indent
}

// value masks the value that starts at b[v] and returns where scanning
// goes on.
func (s *Stream) value(b []byte, v int, ctx *valueCtx) int {
	if v >= len(b) {
		// No value on this line: with YAML, the value is the block
		// indented below (password:\n  hunter2, api_keys:\n  - a).
		if ctx.yaml {
			s.openBlock(ctx)
		}
		return v
	}
	switch c := b[v]; {
	case c == '"' || c == '\'' || c == '`':
		return s.quoted(b, v, quoteDelim(b[v:]), ctx)
	case c == '\\' && v+1 < len(b) && b[v+1] == '"':
		return s.quoted(b, v, `\"`, ctx)
	case (c == '[' || c == '{') && !ctx.header:
		return s.bracketed(b, v, ctx)
	case (c == '|' || c == '>') && ctx.yaml && blockIndicator(b[v:]):
		s.openBlock(ctx)
		return len(b)
	}
	if ctx.st == weak && v < s.weakUntil {
		// Inside a value a weak name's judged no secret: each byte is
		// judged once (key=key=key=... stays linear).
		return v
	}
	end := bareEnd(b, v, ctx)
	if !ctx.lineRest && end > v+1 && (b[end-1] == ',' || b[end-1] == ';') {
		// A list's separator after the value: #pending-token: 0, ...
		end--
	}
	if s.maskValue(b, v, end, ctx) {
		s.lastValue, s.lastValueEnd = *ctx, end
		return end
	}
	// A value that is no secret is text like any other: a token or a
	// setting inside it is still found (cache_key=ts,api_key=x).
	if ctx.st == weak {
		s.weakUntil = end
	}
	return v
}

// bareEnd finds the end of an unquoted value.
func bareEnd(b []byte, v int, ctx *valueCtx) int {
	for k := v; k < len(b); k++ {
		c := b[k]
		switch {
		case c == 0:
			return k
		case ctx.quote != 0 && c == ctx.quote && (!ctx.escaped || k > 0 && b[k-1] == '\\'):
			if ctx.escaped {
				return k - 1
			}
			return k
		case c == '\\' && k+1 < len(b) && !ctx.escaped && ctx.quote == 0 && !ctx.lineRest:
			k++ // a shell escape: a\ b is one word
		case (c == ' ' || c == '\t') && !ctx.lineRest && !ctx.header:
			return k
		case ctx.query && (c == '&' || c == '#' || c == ';' || c == '"' || c == '\'' || c == '<' || c == '>' || c == ')' || c == ']' || c == '`' || c == ' ' || c == '\t'):
			return k
		case ctx.semicolon && c == ';':
			return k
		case ctx.depth > 0 && !ctx.lineRest && (c == ',' || c == ')' || c == ']' || c == '}'):
			return k
		case ctx.yaml && c == '#' && k > v && (b[k-1] == ' ' || b[k-1] == '\t'):
			return k - 1
		}
	}
	return len(b)
}

// maskValue masks b[v:end] as a value of ctx, trimmed of white space,
// unless the name's strength spares it; a known token keeps its prefix
// and is counted under its kind. It reports whether it masked.
func (s *Stream) maskValue(b []byte, v, end int, ctx *valueCtx) bool {
	for end > v && (b[end-1] == ' ' || b[end-1] == '\t') {
		end--
	}
	if ctx.scheme {
		v = skipScheme(b, v, end)
	}
	if v >= end {
		return false
	}
	val := b[v:end]
	if bytes.HasPrefix(val, beginKey) {
		if _, ok := s.keyBlock(b, v); ok {
			return true
		}
	}
	if !hides(ctx.st, val) {
		return false
	}
	kind, keep := ctx.kind, 0
	if m, ok, _ := tokenAt(val, 0, 0); ok {
		kind, keep = m.shape.kind, m.shape.keep
	}
	s.mask(b, v+keep, end, kind)
	return true
}

// skipScheme skips an Authorization value's scheme (Bearer, Basic ...),
// which says nothing secret and tells a reader what was there.
func skipScheme(b []byte, v, end int) int {
	k := v
	for k < end && (isLower(b[k]) || isUpper(b[k]) || isDigit(b[k]) || b[k] == '-') {
		k++
	}
	if k == v || k >= end || b[k] != ' ' || k-v > 20 {
		return v
	}
	switch string(asciiLowerSmall(b[v:k])) {
	case "bearer", "basic", "token", "digest", "negotiate", "ntlm", "aws4-hmac-sha256", "apikey", "key", "sharedkey",
		"ssws", "oauth", "hmac", "jwt", "dpop", "splunk", "api-key":
		for k < end && b[k] == ' ' {
			k++
		}
		return k
	}
	return v
}

// quoted masks a quoted value opening at b[v] with delim. A quote that
// does not close on a line that starts with the name continues on the
// next lines (a YAML or shell string over several lines).
func (s *Stream) quoted(b []byte, v int, delim string, ctx *valueCtx) int {
	in := v + len(delim)
	close := findClose(b, in, delim)
	if close >= 0 {
		if s.maskValue(b, in, close, ctx) {
			return close + len(delim)
		}
		return in // not a secret: scan what it holds
	}
	// Unclosed: mask the rest of the line, and the lines the quote goes
	// on over when the name starts its line.
	if !s.maskValue(b, in, len(b), ctx) && ctx.st == weak {
		return in
	}
	if ctx.lineLevel && ctx.st != weak {
		s.cont = continuation{kind: contQuote, delim: delim, left: maxContinuation}
	}
	return len(b)
}

// quoteDelim is the quote that opens q: one quote, or a tripled one as
// Python writes its long strings (constants: a value's quote must cost no
// allocation).
func quoteDelim(q []byte) string {
	triple := len(q) >= 3 && q[1] == q[0] && q[2] == q[0]
	switch {
	case q[0] == '"' && triple:
		return `"""`
	case q[0] == '\'' && triple:
		return `'''`
	case q[0] == '"':
		return `"`
	case q[0] == '\'':
		return `'`
	}
	return "`"
}

// findClose finds delim in b from i, honoring backslash escapes.
func findClose(b []byte, i int, delim string) int {
	for k := i; k < len(b); k++ {
		switch {
		case delim != `\"` && b[k] == '\\':
			k++
		case b[k] == delim[0] && bytes.HasPrefix(b[k:], []byte(delim)):
			return k
		}
	}
	return -1
}

// bracketed masks the scalars of a list or map value ('api_key':
// ['x'], "api_keys": ["a", "b"]) and keeps its brackets, commas and
// quotes, so that a parser still reads the structure. One left open on a
// line that starts with the name continues on the next lines
// (pretty-printed JSON).
func (s *Stream) bracketed(b []byte, v int, ctx *valueCtx) int {
	depth := 0
	end := s.maskScalars(b, v, &depth, ctx.st)
	if depth > 0 && ctx.lineLevel {
		s.cont = continuation{kind: contBracket, depth: depth, st: ctx.st, left: maxContinuation}
	}
	if s.masked {
		s.counts[ctx.kind]++
		s.masked = false
	}
	return end
}

// maskScalars masks the scalars from b[i] while tracking bracket depth,
// and returns where the outermost bracket closed (or the line's end).
func (s *Stream) maskScalars(b []byte, i int, depth *int, st strength) int {
	for k := i; k < len(b); k++ {
		switch c := b[k]; {
		case c == '[' || c == '{' || c == '(':
			*depth++
		case c == ']' || c == '}' || c == ')':
			*depth--
			if *depth <= 0 {
				*depth = 0
				return k + 1
			}
		case c == '"' || c == '\'':
			close := findClose(b, k+1, string(c))
			if close < 0 {
				close = len(b)
			}
			s.maskScalar(b, k+1, close, st)
			k = close
		case c == ',' || c == ':' || c == ' ' || c == '\t':
		default:
			e := k
			for e < len(b) && !structByte[b[e]] {
				e++
			}
			s.maskScalar(b, k, e, st)
			k = e - 1
		}
	}
	return len(b)
}

// structByte are the bytes of a list's or map's structure.
var structByte = setOf("[]{}(),:\"' \t")

// maskScalar masks one scalar of a structured value. A known token is
// counted as itself; other scalars are counted once for the whole value,
// by the caller.
func (s *Stream) maskScalar(b []byte, i, j int, st strength) {
	if i >= j {
		return
	}
	if hides(st, b[i:j]) {
		if m, ok, _ := tokenAt(b[i:j], 0, 0); ok {
			// A known token keeps its prefix and counts as itself.
			s.mask(b, i+m.shape.keep, j, m.shape.kind)
			return
		}
		maskBytes(b[i:j])
		s.masked = true
		return
	}
	s.tokens(b, i, j) // cache_keys: ['ts', 'hf_...']
}

// blockIndicator reports a YAML block scalar's header: | or > with
// optional chomping and indentation indicators, then nothing or a
// comment.
func blockIndicator(b []byte) bool {
	k := 1
	for k < len(b) && (b[k] == '-' || b[k] == '+' || isDigit(b[k])) {
		k++
	}
	rest := bytes.TrimLeft(b[k:], " \t")
	return len(rest) == 0 || rest[0] == '#'
}

// openBlock starts masking the lines indented below a YAML key.
func (s *Stream) openBlock(ctx *valueCtx) {
	s.cont = continuation{kind: contBlock, indent: ctx.indent, st: ctx.st, left: maxContinuation, kindName: ctx.kind}
}

// bearer masks the token after the word Bearer anywhere ("Bearer
// eyJ...", {'X': 'Bearer abc123'}): at least 8 bytes of a token's
// alphabet that look like one (a digit, or both cases), which keeps "the
// bearer of bad news" and "Bearer authentication" as they are.
func (s *Stream) bearer(b []byte, i, j int) (int, bool) {
	if !eqFold(b[i:j], "bearer") {
		return 0, false
	}
	v := j
	for v < len(b) && b[v] == ' ' {
		v++
	}
	if v == j {
		return 0, false
	}
	e := v
	for e < len(b) && bearerByte[b[e]] {
		e++
	}
	for e < len(b) && b[e] == '=' {
		e++
	}
	tok := b[v:e]
	if len(tok) < 8 || isPlaceholder(tok) {
		return 0, false
	}
	var digit, lower, upper bool
	for _, c := range tok {
		digit = digit || isDigit(c)
		lower = lower || isLower(c)
		upper = upper || isUpper(c)
	}
	if !digit && !(lower && upper) && len(tok) < 24 {
		return 0, false
	}
	kind := kindHeader
	if m, ok, _ := tokenAt(tok, 0, 0); ok {
		kind = m.shape.kind
	}
	s.mask(b, v, e, kind)
	return e, true
}

var bearerByte = setOf("a-z", "A-Z", "0-9", "._~+/-")

// userFlag masks the password of curl -u user:pass, --user user:pass,
// --proxy-user and -U. A value without a colon is a user name (sudo -u
// alice), one whose password is a number a uid:gid (docker -u 1000:1000).
func (s *Stream) userFlag(b []byte, i, j, k int, quote byte, escaped bool) (int, bool) {
	switch string(b[i:j]) {
	case "-u", "-U", "--user", "--proxy-user":
	default:
		return 0, false
	}
	v := k
	if v < len(b) && b[v] == '=' && b[i+1] == '-' {
		v++
	} else {
		for v < len(b) && (b[v] == ' ' || b[v] == '\t') {
			v++
		}
		if v == k {
			return 0, false
		}
	}
	ctx := valueCtx{st: strong, kind: kindCredential, quote: quote, escaped: escaped}
	start, end := v, 0
	if v < len(b) && (b[v] == '"' || b[v] == '\'') {
		start = v + 1
		end = findClose(b, start, string(b[v]))
		if end < 0 {
			end = len(b)
		}
	} else {
		end = bareEnd(b, v, &ctx)
	}
	colon := bytes.IndexByte(b[start:end], ':')
	if colon <= 0 || start+colon+1 >= end || isNumberOrBool(b[start+colon+1:end]) {
		return 0, false
	}
	s.maskValue(b, start+colon+1, end, &ctx)
	return end, true
}

// spaceForm reports assignments written with a space: setenv NAME VALUE
// (csh), ENV NAME VALUE (a Dockerfile), and .netrc's password VALUE.
func (s *Stream) spaceForm(b []byte, i, j, sp int, lineStart bool) bool {
	if !lineStart || sp >= len(b) {
		return false
	}
	// Most words of a log are followed by a space: two cheap tests first.
	if n := j - i; (n == 8 || n == 6) && (eqFold(b[i:j], "password") || eqFold(b[i:j], "passwd")) {
		line := bytes.TrimLeft(b, " \t")
		for _, w := range []string{"machine ", "default ", "login ", "password ", "passwd "} {
			if bytes.HasPrefix(line, []byte(w)) {
				return true
			}
		}
		return false
	}
	if i > 32 {
		return false // setenv and ENV name their variable as the line's second word
	}
	lead := bytes.TrimLeft(b[:i], " \t")
	return (string(lead) == "setenv " || string(lead) == "ENV ") && classify(b[i:j], false) != notSecret
}

// spaceValue masks the value of a space-form assignment: the rest of the
// line for setenv and ENV, one word for .netrc.
func (s *Stream) spaceValue(b []byte, i, j, sp int, lineStart bool) (int, bool) {
	ctx := valueCtx{st: classify(b[i:j], false), kind: kindCredential, lineLevel: true}
	if ctx.st == notSecret {
		ctx.st = strong
	}
	lead := bytes.TrimLeft(b[:i], " \t")
	ctx.lineRest = string(lead) == "setenv " || string(lead) == "ENV "
	return s.value(b, sp, &ctx), true
}

// isNameKey reports the keys whose value names a variable whose value
// follows under "value" (Kubernetes' env: - name: HF_TOKEN / value: ...).
func isNameKey(name []byte) bool {
	return eqFold(name, "name") || eqFold(name, "key") || eqFold(name, "env") || eqFold(name, "variable")
}

// checkPendingName looks at a name key's value: a secret name makes the
// next "value" key, on this line or the next two, a secret.
func (s *Stream) checkPendingName(b []byte, v int) {
	for v < len(b) && (b[v] == ' ' || b[v] == '\t') {
		v++
	}
	if v < len(b) && (b[v] == '"' || b[v] == '\'') {
		v++
	}
	e := v
	for e < len(b) && nameByte[b[e]] {
		e++
	}
	if e > v && classify(b[v:e], false) >= strongText {
		s.pendingName = 3
	}
}

// eqFold reports b equal to the lower-case word w, ignoring ASCII case.
func eqFold(b []byte, w string) bool {
	if len(b) != len(w) {
		return false
	}
	for i := range b {
		c := b[i]
		if isUpper(c) {
			c += 'a' - 'A'
		}
		if c != w[i] {
			return false
		}
	}
	return true
}

// asciiLowerSmall lower-cases a short byte string into a new slice.
func asciiLowerSmall(b []byte) []byte {
	return asciiLower(make([]byte, 0, len(b)), b)
}
