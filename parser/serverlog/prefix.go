package serverlog

import (
	"bytes"

	"github.com/coroner-dev/coroner/parser/facts"
)

// hdrKind is the format of the header that precedes a message.
type hdrKind uint8

const (
	hdrNone      hdrKind = iota
	hdrSGLang            // [2025-03-08 12:29:04 TP0] (also .mmm, DP/PP/ATTN_CP/MOE_DP/TP/EP tags)
	hdrSGLangOld         // [12:29:04 TP0] (Aug-Oct 2024)
	hdrVLLM              // INFO 05-12 02:45:30 [core.py:58] (and the older form without "[")
	hdrUvicorn           // INFO:     Started server process [1]
	hdrGlog              // W0911 10:24:10.440000 1 torch/utils/cpp_extension.py:2425]
	hdrC10d              // [rank0]:[E1130 04:26:02.131264684 ProcessGroupNCCL.cpp:689]
	hdrPyLog             // 2025-05-05 17:53:41,152 - INFO - flashinfer.jit: (Python logging of libraries)
	hdrRay               // 2025-05-26 18:53:52,518	INFO worker.py:1888 --
	hdrRayCpp            // [2025-05-26 18:58:10,599 E 629624 629624] logging.cc:496:
	hdrNCCL              // host:pid:tid [rank] NCCL INFO
	hdrGloo              // [Gloo] Rank 0 is connected ...
	hdrGPU               // [gpu=0] Load weight begin. (SGLang <= v0.2.13)
	hdrTracing           // Rust tracing behind an RFC 3339 stamp: "ERROR text_generation_launcher: " (TGI)
	hdrTRT               // [04/28/2024-15:57:10] [TRT-LLM] [RANK 1] [E] (TensorRT-LLM)
	nHdr
)

// line is one segment of a physical line taken apart. Slices point into the
// segment; nothing here is allocated.
type line struct {
	seg  []byte
	body []byte
	kind hdrKind
	// st is the header's stamp, wst the stamp of an outer wrapper (docker -t,
	// kubectl --timestamps, journald, Buildkite).
	st, wst stamp
	level   facts.Level
	// hdr is the header as printed, the identity of a vLLM multi-line record
	// whose continuation lines repeat it.
	hdr []byte
	// tag is the innermost process tag's text ("EngineCore_DP0 pid=2",
	// "RayWorkerWrapper pid=345, ip=10.42.11.243"); ranks the SGLang rank
	// tags ("DP1 TP3").
	tag   []byte
	ranks []byte
	// torchRank is N of a "[rankN]:" prefix, -1 when absent, and rankTag
	// its text ("rank0"). A line of torch's own loggers under it keeps the
	// rank as a field; any other (a traceback, a print) is the rank's
	// process.
	torchRank int
	rankTag   []byte
	// nccl header parts.
	ncclHost []byte
	ncclPID  int
	ncclRank int
	tagOnly  bool
	// uvicorn is set for uvicorn's "INFO:     " lines, bare or inside an
	// SGLang prefix.
	uvicorn bool
}

func (l *line) reset(seg []byte) {
	*l = line{seg: seg, body: seg, torchRank: -1, ncclRank: -1}
}

func (l *line) hasHeader() bool { return l.kind != hdrNone }

// levelWord reads a level name at b[0].
func levelWord(b []byte) (facts.Level, int) {
	if len(b) < 4 {
		return facts.LevelNone, 0
	}
	switch b[0] {
	case 'I':
		if bytes.HasPrefix(b, []byte("INFO")) {
			return facts.LevelInfo, 4
		}
	case 'W':
		if bytes.HasPrefix(b, []byte("WARNING")) {
			return facts.LevelWarning, 7
		}
		if bytes.HasPrefix(b, []byte("WARN")) {
			return facts.LevelWarning, 4
		}
	case 'E':
		if bytes.HasPrefix(b, []byte("ERROR")) {
			return facts.LevelError, 5
		}
	case 'D':
		if bytes.HasPrefix(b, []byte("DEBUG")) {
			return facts.LevelDebug, 5
		}
	case 'C':
		if bytes.HasPrefix(b, []byte("CRITICAL")) {
			return facts.LevelCritical, 8
		}
	case 'F':
		if bytes.HasPrefix(b, []byte("FATAL")) {
			return facts.LevelCritical, 5
		}
	case 'T':
		if bytes.HasPrefix(b, []byte("TRACE")) {
			return facts.LevelDebug, 5
		}
	}
	return facts.LevelNone, 0
}

func glogLevel(c byte) facts.Level {
	switch c {
	case 'I':
		return facts.LevelInfo
	case 'W':
		return facts.LevelWarning
	case 'E':
		return facts.LevelError
	case 'F':
		return facts.LevelCritical
	}
	return facts.LevelNone
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// skipOneSpace drops the space that separates a header from its message.
func skipOneSpace(b []byte) []byte {
	if len(b) > 0 && b[0] == ' ' {
		return b[1:]
	}
	return b
}

func skipSpaces(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
		i++
	}
	return i
}

// peel takes the wrappers, process tags and header off a segment.
func peel(l *line) {
	b := l.seg
	b = peelWrappers(l, b)
	// A paste that lost the tag's "(": "RayWorkerWrapper pid=1861983) INFO".
	if len(b) > 8 && b[0] >= 'A' && b[0] <= 'Z' {
		if tag, n := openlessTag(b); n > 0 {
			l.tag = tag
			b = b[n:]
		}
	}
	// Process tags: "(APIServer pid=1) ", nested Ray tags, innermost wins.
	for len(b) > 0 && b[0] == '(' {
		tag, n := procTag(b)
		if n == 0 {
			break
		}
		l.tag = tag
		b = b[n:]
	}
	if l.tag != nil && len(bytes.TrimSpace(b)) == 0 {
		l.tagOnly = true
		l.body = b[:0]
		return
	}
	l.body = b
	peelHeader(l, b)
	if l.kind == hdrNone && l.tag == nil && l.rankTag != nil {
		l.tag = l.rankTag
	}
}

// peelWrappers removes what a container runtime, a log collector, a CI
// runner or a paste put in front of the engine's own line: docker, kubectl
// and journald stamps, Buildkite and GitHub Actions gutters, docker compose
// service names, markdown quote markers, and the rank prefixes of torchrun
// (`--tee`: "[default0]:") and PyTorch ("[rank0]:").
func peelWrappers(l *line, b []byte) []byte {
	for k := 0; k < 6 && len(b) > 0; k++ {
		c := b[0]
		switch {
		case isDigit(c) && len(b) > 20 && b[10] == 'T':
			// docker logs -t, kubectl logs --timestamps, journald short-iso,
			// GitHub Actions.
			st, n := parseRFC3339(b)
			if n == 0 || n >= len(b) || b[n] != ' ' {
				return b
			}
			l.wst = st
			// tracing pads the level: "2023-10-16T06:54:28.106837Z  INFO ".
			b = peelJournaldIdent(b[skipSpaces(b, n):])
			continue
		case c == '[' && len(b) > 22 && b[11] == 'T':
			// Buildkite: "[2025-08-12T08:42:31Z] ".
			st, n := parseRFC3339(b[1:])
			if n == 0 || n+2 >= len(b) || b[n+1] != ']' || b[n+2] != ' ' {
				return b
			}
			l.wst = st
			b = b[n+3:]
			continue
		case c >= 'C' && c <= 'W' && len(b) > 26 && severityStamp(b) > 0:
			// A log collector's severity and RFC 3339 stamp (Google
			// Cloud Logging, Vertex AI): "ERROR 2025-04-05T00:01:19.5Z ".
			// The severity is the stream's (stderr reads ERROR), not the
			// line's, so only the stamp is kept.
			n := severityStamp(b)
			l.wst, _ = parseRFC3339(b[n:])
			b = b[skipSpaces(b, n+rfc3339Len(b[n:])):]
			continue
		case c == '[' && len(b) > 4 && b[1] >= 'a' && b[1] <= 'z':
			// "[rank0]:", "[default3]:", "[trainer0|0]:".
			n, rank := rankPrefix(b)
			if n == 0 {
				return b
			}
			l.torchRank = rank
			l.rankTag = b[1 : n-2]
			b = b[n:]
			continue
		case c >= 'A' && c <= 'S' && len(b) > 16 && b[3] == ' ':
			// journald default: "Aug 19 18:34:30 host unit[pid]: ".
			st, n := parseSyslogStamp(b)
			if n == 0 || n >= len(b) || b[n] != ' ' {
				return b
			}
			rest := peelJournaldIdent(b[n+1:])
			if len(rest) == len(b)-n-1 {
				return b
			}
			l.wst = st
			b = rest
			continue
		case c == '>' && (len(b) == 1 || b[1] == ' ' || b[1] == '>'):
			// A markdown quote: "> " (nested "> > " or ">>").
			b = skipOneSpace(b[1:])
			continue
		case c == ' ' || c == '|':
			// A CI gutter: "  | " (Buildkite's log view, copied).
			i := skipSpaces(b, 0)
			if i > 4 || i >= len(b) || b[i] != '|' || (i+1 < len(b) && b[i+1] != ' ') {
				return b
			}
			b = b[min(i+2, len(b)):]
			continue
		}
		// docker compose: "vllm-1  | ".
		if n := composePrefix(b); n > 0 {
			b = b[n:]
			continue
		}
		return b
	}
	return b
}

// severityStamp returns where the stamp of "LEVEL <RFC 3339 stamp> " starts,
// or 0.
func severityStamp(b []byte) int {
	_, n := levelWord(b)
	if n == 0 || n+21 >= len(b) || b[n] != ' ' || !isDigit(b[n+1]) || b[n+11] != 'T' {
		return 0
	}
	if k := rfc3339Len(b[n+1:]); k == 0 || n+1+k >= len(b) || b[n+1+k] != ' ' {
		return 0
	}
	return n + 1
}

// rfc3339Len is the length of the RFC 3339 stamp at b[0], or 0.
func rfc3339Len(b []byte) int {
	_, n := parseRFC3339(b)
	return n
}

// Unwrap returns the line without what a container runtime, a log
// collector or a paste put before it (peelWrappers): for readers of other
// formats found in the same captures (an environment report pasted from a
// container's log).
func Unwrap(b []byte) []byte {
	var l line
	return peelWrappers(&l, b)
}

// rankPrefix reads "[name<digits>]:" or "[name<digits>|<digits>]:" at b[0]
// (name in lower case letters: rank, default, trainer, worker) and returns
// its length with the space after it, and the first number.
func rankPrefix(b []byte) (int, int) {
	i := 1
	for i < len(b) && i < 24 && b[i] >= 'a' && b[i] <= 'z' {
		i++
	}
	d := i
	rank := 0
	for i < len(b) && isDigit(b[i]) && i-d < 6 {
		rank = rank*10 + int(b[i]-'0')
		i++
	}
	if i == d || i >= len(b) {
		return 0, 0
	}
	if b[i] == '|' {
		i++
		e := i
		for i < len(b) && isDigit(b[i]) && i-e < 6 {
			i++
		}
		if i == e || i >= len(b) {
			return 0, 0
		}
	}
	if i+1 >= len(b) || b[i] != ']' || b[i+1] != ':' {
		return 0, 0
	}
	n := i + 2
	return n, rank
}

// peelJournaldIdent removes "host ident[pid]: " after a journald stamp. A
// level word is no host: Rust's tracing prints "ERROR target: " there.
func peelJournaldIdent(b []byte) []byte {
	sp := bytes.IndexByte(b, ' ')
	if sp <= 0 || sp > 64 {
		return b
	}
	if _, n := levelWord(b); n == sp {
		return b
	}
	rest := b[sp+1:]
	end := bytes.IndexByte(rest, ' ')
	if end <= 1 || end > 96 {
		return b
	}
	id := rest[:end]
	if id[len(id)-1] != ':' {
		return b
	}
	if id[len(id)-2] != ']' {
		for _, c := range id[:len(id)-1] {
			if !(c == '-' || c == '_' || c == '.' || c == '@' || isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'z')) {
				return b
			}
		}
	}
	return rest[end+1:]
}

// composePrefix returns the length of a docker compose service prefix.
func composePrefix(b []byte) int {
	i := 0
	for i < len(b) && i < 64 {
		c := b[i]
		if c == '-' || c == '_' || c == '.' || isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'z') {
			i++
			continue
		}
		break
	}
	if i == 0 || i >= len(b) || b[i] != ' ' {
		return 0
	}
	j := skipSpaces(b, i)
	if j+1 < len(b) && b[j] == '|' && b[j+1] == ' ' {
		return j + 2
	}
	if j+1 == len(b) && b[j] == '|' {
		return j + 1
	}
	return 0
}

// openlessTag reads a process tag whose "(" a paste cut off, at the very
// start of the line: "Name pid=N[, ip=X]) ".
func openlessTag(b []byte) ([]byte, int) {
	sp := bytes.IndexByte(b, ' ')
	if sp < 2 || sp > 40 || !bytes.HasPrefix(b[sp:], []byte(" pid=")) {
		return nil, 0
	}
	end := bytes.IndexByte(b, ')')
	if end < sp || end > 128 {
		return nil, 0
	}
	// procTag's checks, on the bytes with the "(" put back: a small copy,
	// only for lines that start like this.
	withParen := make([]byte, 0, end+3)
	withParen = append(withParen, '(')
	withParen = append(withParen, b[:min(len(b), end+2)]...)
	t, m := procTag(withParen)
	if m == 0 {
		return nil, 0
	}
	return b[:len(t)], m - 1
}

// procTag reads "(Name[ qual] pid=N[, ip=X]) " at b[0] and returns the text
// inside the parentheses and the length consumed.
func procTag(b []byte) ([]byte, int) {
	end := bytes.IndexByte(b, ')')
	if end < 6 || end > 128 {
		return nil, 0
	}
	in := b[1:end]
	p := bytes.Index(in, []byte("pid="))
	if p < 0 || (p > 0 && in[p-1] != ' ') {
		return nil, 0
	}
	for _, c := range in[:p] {
		if !(c == '_' || c == ' ' || c == '=' || isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'z')) {
			return nil, 0
		}
	}
	j := p + 4
	if j >= len(in) || !isDigit(in[j]) {
		return nil, 0
	}
	for j < len(in) && isDigit(in[j]) {
		j++
	}
	if j < len(in) && !bytes.HasPrefix(in[j:], []byte(", ip=")) {
		return nil, 0
	}
	n := end + 1
	if n < len(b) && b[n] == ' ' {
		n++
	}
	return in, n
}

// peelHeader recognizes the header of the engine or library that wrote the
// line and sets the body to what follows it.
func peelHeader(l *line, b []byte) {
	if len(b) == 0 {
		return
	}
	switch c := b[0]; {
	case c == '[':
		bracketHeader(l, b)
	case c >= 'A' && c <= 'Z':
		upperHeader(l, b)
	case isDigit(c):
		digitHeader(l, b)
	default:
		ncclHeader(l, b)
	}
}

func bracketHeader(l *line, b []byte) {
	if len(b) < 3 {
		return
	}
	c := b[1]
	switch {
	case isDigit(c):
		if len(b) > 20 && b[5] == '-' {
			sglangHeader(l, b)
			return
		}
		if len(b) > 9 && b[3] == ':' {
			sglangOldHeader(l, b)
		}
		if l.kind == hdrNone && len(b) > 21 && b[3] == '/' && trtHeader(l, b) {
			return
		}
		if l.kind == hdrNone {
			// "[1] enqueue.cc:1500 NCCL WARN ..."
			ncclBareHeader(l, b)
		}
	case c == 'T' && bytes.HasPrefix(b, []byte("[TensorRT-LLM][")):
		// TensorRT-LLM's C++ logger: "[TensorRT-LLM][ERROR] msg".
		e := bytes.IndexByte(b[15:], ']')
		if e < 1 || e > 10 {
			return
		}
		lv, n := levelWord(b[15 : 15+e])
		if n == 0 {
			return
		}
		l.kind = hdrTRT
		l.level = lv
		l.hdr = b[:15+e+1]
		l.body = skipOneSpace(b[15+e+1:])
	case c == 'G' && bytes.HasPrefix(b, []byte("[Gloo] ")):
		l.kind = hdrGloo
		l.body = b[7:]
	case c == 'g' && bytes.HasPrefix(b, []byte("[gpu=")):
		end := bytes.IndexByte(b, ']')
		if end < 6 || end > 12 {
			return
		}
		if _, ok := digits(b, 5, end-5); !ok {
			return
		}
		l.kind = hdrGPU
		l.ranks = b[1:end]
		l.body = b[min(end+2, len(b)):]
	case c >= 'A' && c <= 'Z' && len(b) > 6 && isDigit(b[2]):
		c10dHeader(l, b)
	}
}

// sglangHeader reads "[YYYY-MM-DD HH:MM:SS(.mmm)?( TAG)*] ".
func sglangHeader(l *line, b []byte) {
	st, i := parseDateTime(b[1:], ' ')
	if !st.ok {
		return
	}
	i++ // index in b
	if b[20] == ',' {
		rayCppHeader(l, b, st, i)
		return
	}
	tagStart := i
	for i < len(b) && b[i] == ' ' {
		j := i + 1
		k := j
		for k < len(b) && (b[k] == '_' || (b[k] >= 'A' && b[k] <= 'Z') || (b[k] >= 'a' && b[k] <= 'z')) {
			k++
		}
		d := k
		for d < len(b) && isDigit(b[d]) {
			d++
		}
		if k == j || (d == k && !bytes.Equal(b[j:k], []byte("encode_server"))) {
			return
		}
		i = d
	}
	if i >= len(b) || b[i] != ']' {
		return
	}
	l.kind, l.st = hdrSGLang, st
	setSGLang(l, b, tagStart, i)
}

// setSGLang records the rest of an SGLang prefix b[:end+1] whose rank tags,
// if any, start after b[tagStart].
func setSGLang(l *line, b []byte, tagStart, end int) {
	if end > tagStart {
		l.ranks = b[tagStart+1 : end]
	}
	l.hdr = b[:end+1]
	l.body = skipOneSpace(b[end+1:])
	innerLevel(l)
}

// innerLevel reads what can follow an SGLang prefix: uvicorn's "INFO:     "
// or the 2026 "WARNING model_config.py:1178: " of the main process.
func innerLevel(l *line) {
	b := l.body
	lv, n := levelWord(b)
	if n == 0 || n >= len(b) {
		return
	}
	if b[n] == ':' && n+1 < len(b) && b[n+1] == ' ' {
		l.level = lv
		l.body = b[skipSpaces(b, n+1):]
		l.uvicorn = true
		return
	}
	if b[n] != ' ' {
		return
	}
	// "LEVEL file.py:123: msg"
	rest := b[n+1:]
	sp := bytes.IndexByte(rest, ' ')
	if sp < 4 || rest[sp-1] != ':' {
		return
	}
	tok := rest[:sp-1]
	colon := bytes.LastIndexByte(tok, ':')
	if colon <= 0 {
		return
	}
	if _, ok := digits(tok, colon+1, len(tok)-colon-1); !ok || colon+1 == len(tok) {
		return
	}
	l.level = lv
	l.body = rest[sp+1:]
}

// sglangOldHeader reads "[HH:MM:SS( TP0)*] ".
func sglangOldHeader(l *line, b []byte) {
	var st stamp
	if !parseClock(b, 1, &st) {
		return
	}
	i := 9
	tagStart := i
	for i < len(b) && b[i] == ' ' {
		j := i + 1
		k := j
		for k < len(b) && b[k] >= 'A' && b[k] <= 'Z' {
			k++
		}
		d := k
		for d < len(b) && isDigit(b[d]) {
			d++
		}
		if k == j || d == k {
			return
		}
		i = d
	}
	st.month, st.day = 1, 1
	if i >= len(b) || b[i] != ']' || !st.valid() {
		return
	}
	st.ok = true
	l.kind, l.st = hdrSGLangOld, st
	setSGLang(l, b, tagStart, i)
}

// rayCppHeader reads "[2025-05-26 18:58:10,599 E 629624 629624] logging.cc:496: ".
func rayCppHeader(l *line, b []byte, st stamp, i int) {
	end := bytes.IndexByte(b, ']')
	if end < 0 || end > 64 {
		return
	}
	in := b[i:end]
	in = bytes.TrimLeft(in, " ")
	l.kind = hdrRayCpp
	l.st = st
	if len(in) > 0 {
		l.level = glogLevel(in[0])
	}
	l.hdr = b[:end+1]
	body := b[end+1:]
	body = bytes.TrimLeft(body, " ")
	// "logging.cc:496: "
	if sp := bytes.IndexByte(body, ' '); sp > 2 && body[sp-1] == ':' && bytes.IndexByte(body[:sp-1], ':') > 0 {
		body = body[sp+1:]
	}
	l.body = body
}

// c10dHeader reads "[E1130 04:26:02.131264684 ProcessGroupNCCL.cpp:689] ".
func c10dHeader(l *line, b []byte) bool {
	if len(b) < 16 || glogLevel(b[1]) == facts.LevelNone {
		return false
	}
	st, i := parseGlogStamp(b, 2)
	if !st.ok || i >= len(b) || b[i] != ' ' {
		return false
	}
	end := bytes.IndexByte(b[i:], ']')
	if end < 0 || end > 128 {
		return false
	}
	end += i
	l.kind = hdrC10d
	l.st = st
	l.level = glogLevel(b[1])
	l.hdr = b[:end+1]
	l.body = skipOneSpace(b[end+1:])
	return true
}

// glogHeader reads "W0911 10:24:10.440000 1 torch/utils/cpp_extension.py:2425] ".
func glogHeader(l *line, b []byte) bool {
	if len(b) < 24 || glogLevel(b[0]) == facts.LevelNone || !isDigit(b[1]) {
		return false
	}
	st, i := parseGlogStamp(b, 1)
	if !st.ok || i >= len(b) || b[i] != ' ' {
		return false
	}
	i = skipSpaces(b, i)
	j := i
	for j < len(b) && isDigit(b[j]) {
		j++
	}
	if j == i || j >= len(b) || b[j] != ' ' {
		return false
	}
	end := bytes.IndexByte(b[j:], ']')
	if end < 0 || end > 200 {
		return false
	}
	end += j
	l.kind = hdrGlog
	l.st = st
	l.level = glogLevel(b[0])
	l.hdr = b[:end+1]
	body := skipOneSpace(b[end+1:])
	// inductor's "[0/0] " compile id
	if len(body) > 4 && body[0] == '[' && isDigit(body[1]) {
		if e := bytes.IndexByte(body, ']'); e > 0 && e < 16 && bytes.IndexByte(body[:e], '/') > 0 {
			body = skipOneSpace(body[e+1:])
		}
	}
	l.body = body
	return true
}

func upperHeader(l *line, b []byte) {
	lv, n := levelWord(b)
	if n > 0 && n < len(b) {
		switch b[n] {
		case ' ':
			if vllmHeader(l, b, lv, n) {
				return
			}
			if l.wst.ok && tracingHeader(l, b, lv, n) {
				return
			}
		case ':':
			if n+1 < len(b) && b[n+1] == ' ' {
				l.kind = hdrUvicorn
				l.level = lv
				l.uvicorn = true
				l.body = b[skipSpaces(b, n+1):]
				return
			}
		}
	}
	if glogHeader(l, b) {
		return
	}
	ncclHeader(l, b)
}

// tracingHeader reads what Rust's tracing prints after its RFC 3339 stamp
// (TGI's launcher and router): " LEVEL span: target: message", where each
// of the span and target names is lower case letters, digits, '_', '-' or
// "::" and ends in ": ".
func tracingHeader(l *line, b []byte, lv facts.Level, n int) bool {
	i := skipSpaces(b, n)
	end := i
	for k := 0; k < 2; k++ {
		j := end
		for j < len(b) && (b[j] == '_' || b[j] == '-' || (b[j] >= 'a' && b[j] <= 'z') || isDigit(b[j]) ||
			(b[j] == ':' && j+1 < len(b) && b[j+1] == ':')) {
			if b[j] == ':' {
				j++
			}
			j++
		}
		if j == end || j+1 >= len(b) || b[j] != ':' || b[j+1] != ' ' {
			break
		}
		end = j + 2
	}
	if end == i {
		return false
	}
	// With file and line on: "router/src/main.rs:247: ".
	if sp := bytes.IndexByte(b[end:], ' '); sp > 5 && sp < 128 {
		tok := b[end : end+sp]
		if tok[len(tok)-1] == ':' {
			tok = tok[:len(tok)-1]
			if c := bytes.LastIndexByte(tok, ':'); c > 3 && bytes.HasSuffix(tok[:c], []byte(".rs")) {
				if _, ok := digits(tok, c+1, len(tok)-c-1); ok {
					end += sp + 1
				}
			}
		}
	}
	l.kind = hdrTracing
	l.level = lv
	l.hdr = b[:end]
	l.body = b[end:]
	return true
}

// trtHeader reads TensorRT-LLM's "[04/28/2024-15:57:10] [TRT-LLM] [RANK 1]
// [E] " (the logger of TensorRT itself says "[TRT]").
func trtHeader(l *line, b []byte) bool {
	if len(b) < 24 || b[3] != '/' || b[6] != '/' || b[11] != '-' || b[20] != ']' {
		return false
	}
	var st stamp
	var ok1, ok2, ok3 bool
	st.month, ok1 = digits(b, 1, 2)
	st.day, ok2 = digits(b, 4, 2)
	st.year, ok3 = digits(b, 7, 4)
	if !ok1 || !ok2 || !ok3 || !parseClock(b, 12, &st) || !st.valid() {
		return false
	}
	st.ok = true
	i := 21
	lv := facts.LevelNone
	for k := 0; k < 4 && i+3 < len(b) && b[i] == ' ' && b[i+1] == '['; k++ {
		e := bytes.IndexByte(b[i+1:], ']')
		if e < 2 || e > 24 {
			break
		}
		tag := b[i+2 : i+1+e]
		if len(tag) == 1 {
			switch tag[0] {
			case 'V', 'D':
				lv = facts.LevelDebug
			case 'I':
				lv = facts.LevelInfo
			case 'W':
				lv = facts.LevelWarning
			case 'E':
				lv = facts.LevelError
			case 'F':
				lv = facts.LevelCritical
			}
		}
		i += 2 + e
	}
	l.kind = hdrTRT
	l.st = st
	l.level = lv
	l.hdr = b[:i]
	l.body = skipOneSpace(b[i:])
	return true
}

// vllmHeader reads "LEVEL MM-DD HH:MM:SS [file.py:123] " (the "[" since Feb
// 2025; debug logs put a shortened path inside), and "LEVEL [file.py:123] "
// of a logging config without the time (VLLM_LOGGING_CONFIG_PATH, a
// wrapper's own formatter).
func vllmHeader(l *line, b []byte, lv facts.Level, n int) bool {
	st, i := parseMonthDay(b, n+1)
	switch {
	case st.ok && i < len(b) && b[i] == ' ':
		i++
		if i < len(b) && b[i] == '[' {
			i++
		}
	case n+2 < len(b) && b[n+1] == '[':
		st, i = stamp{}, n+2
	default:
		return false
	}
	end := bytes.IndexByte(b[i:], ']')
	if end <= 2 || end > 200 {
		return false
	}
	end += i
	fileline := b[i:end]
	colon := bytes.LastIndexByte(fileline, ':')
	if colon <= 0 || colon == len(fileline)-1 || bytes.IndexByte(fileline, ' ') >= 0 {
		return false
	}
	if _, ok := digits(fileline, colon+1, len(fileline)-colon-1); !ok {
		return false
	}
	l.kind = hdrVLLM
	l.st = st
	l.level = lv
	l.hdr = b[:end+1]
	l.body = skipOneSpace(b[end+1:])
	return true
}

func digitHeader(l *line, b []byte) {
	if len(b) > 24 && b[4] == '-' && b[10] == ' ' {
		st, i := parseDateTime(b, ' ')
		if !st.ok || i >= len(b) {
			return
		}
		rest := b[i:]
		switch {
		case bytes.HasPrefix(rest, []byte(" - ")):
			// Python logging as flashinfer configures it:
			// "2025-05-05 17:53:41,152 - INFO - flashinfer.jit: ..."
			lv, n := levelWord(rest[3:])
			if n == 0 || !bytes.HasPrefix(rest[3+n:], []byte(" - ")) {
				return
			}
			body := rest[3+n+3:]
			// "autotuner.py:256 - flashinfer.jit: ..."
			if k := bytes.Index(body, []byte(" - ")); k > 0 && k < 64 && bytes.IndexByte(body[:k], ' ') < 0 && bytes.IndexByte(body[:k], ':') > 0 {
				body = body[k+3:]
			}
			l.kind, l.st, l.level, l.body = hdrPyLog, st, lv, body
			l.hdr = b[:i+3+n+3]
		case len(rest) > 1 && rest[0] == '\t':
			// Ray: "2025-05-26 18:53:52,518	INFO worker.py:1888 -- msg"
			lv, n := levelWord(rest[1:])
			if n == 0 {
				return
			}
			body := rest[1+n:]
			if k := bytes.Index(body, []byte(" -- ")); k >= 0 && k < 80 {
				body = body[k+4:]
			}
			l.kind, l.st, l.level, l.body = hdrRay, st, lv, body
			l.hdr = b[:i]
		}
		return
	}
	ncclHeader(l, b)
}

// ncclHeader reads NCCL's debug prefix "host:pid:tid [rank] NCCL INFO ", or
// what is left of it in a paste or when NCCL_DEBUG_FILE or a wrapper dropped
// the host part: "[1] NCCL INFO ", "[1] enqueue.cc:1500 NCCL WARN ",
// "graph/xml.h:77 NCCL WARN ", "NCCL INFO init.cc:840 -> 3".
func ncclHeader(l *line, b []byte) {
	if !ncclHostHeader(l, b) {
		ncclBareHeader(l, b)
	}
}

// ncclBareHeader reads the NCCL prefixes without host, pid and thread.
func ncclBareHeader(l *line, b []byte) {
	k := bytes.Index(b[:min(len(b), 300)], []byte("NCCL "))
	if k < 0 {
		return
	}
	pre := b[:k]
	rank := -1
	if len(pre) > 0 && pre[0] == '[' {
		e := bytes.IndexByte(pre, ']')
		if e < 2 || e > 7 {
			return
		}
		r, ok := digits(pre, 1, e-1)
		if !ok {
			return
		}
		rank = r
		pre = pre[e+1:]
	}
	pre = bytes.TrimLeft(pre, " ")
	if len(pre) > 0 {
		// The source line that printed it: "enqueue.cc:1500 ".
		if pre[len(pre)-1] != ' ' {
			return
		}
		tok := pre[:len(pre)-1]
		c := bytes.LastIndexByte(tok, ':')
		if c <= 0 || c == len(tok)-1 || bytes.IndexByte(tok, ' ') >= 0 {
			return
		}
		if _, ok := digits(tok, c+1, len(tok)-c-1); !ok {
			return
		}
	}
	rest := b[k+5:]
	lv, n := levelWord(rest)
	if n == 0 || n >= len(rest) || rest[n] != ' ' {
		return
	}
	l.kind = hdrNCCL
	l.level = lv
	l.ncclRank = rank
	l.hdr = b[:k+5+n]
	l.body = rest[skipSpaces(rest, n):]
}

// ncclHostHeader reads "host:pid:tid [rank] NCCL INFO ".
func ncclHostHeader(l *line, b []byte) bool {
	c1 := bytes.IndexByte(b, ':')
	if c1 <= 0 || c1 > 128 || bytes.IndexByte(b[:c1], ' ') >= 0 {
		return false
	}
	i := c1 + 1
	p := i
	for i < len(b) && isDigit(b[i]) {
		i++
	}
	if i == p || i >= len(b) || b[i] != ':' {
		return false
	}
	pid, _ := digits(b, p, i-p)
	i++
	t := i
	for i < len(b) && isDigit(b[i]) {
		i++
	}
	if i == t || i+2 >= len(b) || b[i] != ' ' || b[i+1] != '[' {
		return false
	}
	i += 2
	r := i
	for i < len(b) && isDigit(b[i]) {
		i++
	}
	if i == r || i >= len(b) || b[i] != ']' {
		return false
	}
	rank, _ := digits(b, r, i-r)
	rest := b[i+1:]
	if !bytes.HasPrefix(rest, []byte(" NCCL ")) {
		// NCCL's WARN lines name the source line that printed them:
		// "[1] transport/p2p.cc:275 NCCL WARN ...".
		rest = skipNCCLSourceLine(rest)
		if !bytes.HasPrefix(rest, []byte(" NCCL ")) {
			return false
		}
	}
	rest = rest[6:]
	lv, n := levelWord(rest)
	if n == 0 {
		return false
	}
	l.kind = hdrNCCL
	l.level = lv
	l.ncclHost = b[:c1]
	l.ncclPID = pid
	l.ncclRank = rank
	l.hdr = b[:i+1]
	l.body = rest[skipSpaces(rest, n):]
	return true
}

// skipNCCLSourceLine skips " file.cc:123" at the start of b, or returns b.
func skipNCCLSourceLine(b []byte) []byte {
	if len(b) < 2 || b[0] != ' ' {
		return b
	}
	sp := bytes.IndexByte(b[1:], ' ')
	if sp < 3 || sp > 256 {
		return b
	}
	tok := b[1 : 1+sp]
	c := bytes.LastIndexByte(tok, ':')
	if c <= 0 || c == len(tok)-1 {
		return b
	}
	for _, d := range tok[c+1:] {
		if !isDigit(d) {
			return b
		}
	}
	return b[1+sp:]
}

// stripRayDedup removes Ray's " [repeated 3x across cluster]" suffix (and the
// note that may follow it) and returns the repeat count.
func stripRayDedup(b []byte) ([]byte, int) {
	if len(b) < 30 {
		return b, 0
	}
	last := b[len(b)-1]
	if last != ']' && last != ')' {
		return b, 0
	}
	k := bytes.LastIndex(b, []byte(" [repeated "))
	if k < 0 {
		return b, 0
	}
	rest := b[k+11:]
	n := 0
	i := 0
	for i < len(rest) && isDigit(rest[i]) {
		n = n*10 + int(rest[i]-'0')
		i++
	}
	if i == 0 || !bytes.HasPrefix(rest[i:], []byte("x across cluster]")) {
		return b, 0
	}
	return b[:k], n
}
