package serverlog

import (
	"bytes"
	"fmt"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/textio"
)

// Limits that keep memory bounded whatever the input.
const (
	maxProcs       = 1024 // distinct process tags per file
	maxBars        = 512  // distinct progress bars per file
	maxKeyCache    = 1024 // interned stat keys
	maxSettings    = 4096 // settings per dump
	maxReqEvents   = 100  // access-log lines kept as events (all are counted in a series)
	maxErrReqEvent = 1000 // access-log lines with status >= 400 kept as events
	maxTBLines     = 5000 // lines of one traceback before it is closed
)

// maxEvents is facts.MaxEvents; tests lower it.
var maxEvents = facts.MaxEvents

// Sniff recognizes SGLang and vLLM logs by content anywhere in the head, and
// other server logs (Python tracebacks, NCCL, torch, uvicorn lines) with a
// lower score.
func Sniff(name string, head []byte) (facts.Kind, int) {
	sg, vl, other := sniffContent(head)
	switch {
	case sg > 0 && sg >= vl:
		return facts.KindSGLangLog, sg
	case vl > 0:
		return facts.KindVLLMLog, vl
	case other > 0:
		return facts.KindServerLog, other
	}
	n := strings.ToLower(name)
	switch {
	case strings.Contains(n, "sglang"):
		return facts.KindSGLangLog, 20
	case strings.Contains(n, "vllm"):
		return facts.KindVLLMLog, 20
	case strings.Contains(n, "server") || strings.HasSuffix(n, ".log"):
		return facts.KindServerLog, 10
	}
	return "", 0
}

// Parse reads a server log.
func Parse(in *textio.Input, kind facts.Kind, out *facts.Facts) {
	p := newParser(in, kind, out)
	ahead := aheadAfter >= 0 && runtime.GOMAXPROCS(0) > 1
	for in.Scan() {
		p.physical()
		if ahead && in.BytesRead() >= aheadAfter {
			p.parseAhead(in)
			break
		}
	}
	p.finish()
}

type procState struct {
	pl       *facts.ProcLog
	lastLine int
	lastMsg  []byte
	lastBad  bool
	// tb is an open traceback whose lines repeat this process's prefix.
	tb *tbState
	// lastEv is the last event of the process and the header it came with,
	// so that a vLLM multi-line record's traceback can be tied to it.
	lastEv    *facts.LogEvent
	lastEvHdr []byte
	series    []*facts.Series
	bars      []*barState
	clocks    [nHdr]time.Time
}

type parser struct {
	in   *textio.Input
	out  *facts.Facts
	log  *facts.Log
	kind facts.Kind

	clk clockState

	lineNo int
	bad    bool // the current physical line is not valid UTF-8
	ansi   []byte

	// The current segment. inferred is set when its level was guessed from
	// the text, not printed.
	inferred  bool
	t         time.Time
	hasT      bool
	inherited bool

	lastStamp    time.Time
	hasLastStamp bool

	procs    map[string]*procState // by tag bytes
	byName   map[string]*procState
	main     *procState
	rank0    *procState
	kbuf     []byte
	lastProc lastProc
	overflow bool

	pendingTag *procState // a line that held only a process tag
	bareTB     *tbState
	warnCont   *procState // an open Python warning whose source line may follow

	events eventBuf
	// unmatched keeps the first and last lines nothing recognized, for the
	// signature catalog and user packs.
	unmatched lineBuf
	barList   []*barState // every bar, in order of appearance
	statReader
	// pre is what the read-ahead goroutine made of the current line, nil
	// when the input is read on this goroutine.
	pre *prepared

	sgMarks, vlMarks int

	requests, errRequests int
	ncclSeen              map[string]bool
	// ncclTrace is the first line of each rank's NCCL error trace.
	ncclTrace map[string]*facts.LogEvent
}

func newParser(in *textio.Input, kind facts.Kind, out *facts.Facts) *parser {
	p := &parser{
		in:         in,
		out:        out,
		kind:       kind,
		log:        &facts.Log{Path: in.Path, Engine: facts.EngineUnknown},
		procs:      map[string]*procState{},
		byName:     map[string]*procState{},
		statReader: newStatReader(),
		ncclSeen:   map[string]bool{},
	}
	p.main = p.newProc(facts.Proc{Name: "", Rank: facts.NoRank})
	return p
}

// physical handles one line of the file.
func (p *parser) physical() {
	raw := p.in.Bytes()
	p.lineNo = p.in.Line()
	p.log.Lines = p.lineNo
	p.bad = !p.in.CheckUTF8()
	if pl, ok := p.peeled(raw); ok {
		// The read-ahead found the line not blank, without ESC, colour
		// remnants and '\r': one record, already taken apart.
		p.log.LastSrc = p.in.Src()
		if rest := p.handle(pl); len(rest) > 0 {
			p.segment(rest, 1)
		}
		return
	}
	if len(bytes.TrimSpace(raw)) > 0 {
		p.log.LastSrc = p.in.Src()
	}
	if hasEscape(raw) {
		p.ansi = stripANSI(p.ansi[:0], raw)
		raw = p.ansi
	} else if k := sgrRemnant(raw); k > 0 {
		p.ansi = stripRemnants(p.ansi[:0], raw, k)
		raw = p.ansi
	}
	for {
		i := bytes.IndexByte(raw, '\r')
		seg := raw
		if i >= 0 {
			seg = raw[:i]
		}
		if len(seg) > 0 {
			p.segment(seg, 0)
		}
		if i < 0 {
			break
		}
		raw = raw[i+1:]
	}
}

// hasEscape reports an escape sequence, raw or as syslog wrote it: rsyslog
// and journald's syslog forwarding write an ESC they were given as "#033"
// (octal), so a log that went through syslog has "#033[2m" colours. The
// syslog form is looked for at each '[' only, which a CSI holds: a line has
// one or two (its header), while '#' is in every SGLang stat line several
// times ("#running-req: 1, #token: 8") and a scan at each was most of what
// this function cost.
func hasEscape(b []byte) bool {
	if bytes.IndexByte(b, 0x1b) >= 0 {
		return true
	}
	const tag = len("#033")
	for i := bytes.IndexByte(b, '['); i >= 0; {
		if i >= tag && string(b[i-tag:i]) == "#033" {
			return true
		}
		j := bytes.IndexByte(b[i+1:], '[')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return false
}

// sgrRemnant is the length of a colour code that lost its ESC at the start
// of b, 0 when there is none: GitHub and chat tools drop the ESC byte of a
// pasted log and keep the rest ("[36m(RayWorkerWrapper pid=12)[0m INFO
// ..."), some copy tools write the byte as "ESC" or "^[".
func sgrRemnant(b []byte) int {
	if len(b) < 4 {
		return 0
	}
	i := 0
	switch b[0] {
	case '[':
		if !isDigit(b[1]) {
			return 0
		}
	case 'E':
		if !has(b, "ESC[") {
			return 0
		}
		i = 3
	case '^':
		if !has(b, "^[[") {
			return 0
		}
		i = 2
	default:
		return 0
	}
	// Parameters are numbers of at most three digits (0-255) joined by
	// ';': a log's "[2026-05-27 ..." stops at its fourth digit.
	j, run := i+1, 0
	for j < len(b) && j-i < 10 && (isDigit(b[j]) || b[j] == ';') {
		if run++; b[j] == ';' {
			run = 0
		} else if run > 3 {
			return 0
		}
		j++
	}
	if j == i+1 || j >= len(b) || b[j] != 'm' || (j+1 < len(b) && b[j+1] == ']') {
		// "[5m]" is a bracketed duration, not a colour.
		return 0
	}
	return j + 1
}

// stripRemnants copies b without the colour code of length k at its start,
// and without the one that closes a process tag right after it
// ("(RayWorkerWrapper pid=12)[0m").
func stripRemnants(dst, b []byte, k int) []byte {
	b = b[k:]
	if len(b) > 0 && b[0] == '(' {
		if c := bytes.IndexByte(b[:min(len(b), 160)], ')'); c > 0 {
			if n := sgrRemnant(b[c+1:]); n > 0 {
				dst = append(dst, b[:c+1]...)
				return append(dst, b[c+1+n:]...)
			}
		}
	}
	return append(dst, b...)
}

// stripANSI copies b without its CSI escape sequences.
func stripANSI(dst, b []byte) []byte {
	for i := 0; i < len(b); i++ {
		if b[i] == '#' && i+4 < len(b) && b[i+1] == '0' && b[i+2] == '3' && b[i+3] == '3' && b[i+4] == '[' {
			i += 3 // as if ESC: the CSI follows
		} else if b[i] != 0x1b {
			dst = append(dst, b[i])
			continue
		}
		if i+1 < len(b) && b[i+1] == '[' {
			j := i + 2
			for j < len(b) && (b[j] < 0x40 || b[j] > 0x7e) {
				j++
			}
			i = j
			continue
		}
		// A lone ESC or another escape: drop the ESC and the next
		// character, whole (the fuzzer found a rune cut in two here).
		if i+1 < len(b) && b[i+1] >= utf8.RuneSelf {
			_, n := utf8.DecodeRune(b[i+1:])
			i += n
			continue
		}
		i++
	}
	return dst
}

// segment handles one "\r"-separated piece of a line, which may itself end
// in a progress bar glued to the next record.
// k counts the records of the segment handled before.
func (p *parser) segment(seg []byte, k int) {
	for ; k < 64 && len(seg) > 0; k++ {
		if len(bytes.TrimSpace(seg)) == 0 {
			return
		}
		var l line
		l.reset(seg)
		peel(&l)
		seg = p.handle(&l)
	}
}

// handle processes one record and returns what follows a progress bar on the
// same segment, if anything.
func (p *parser) handle(l *line) []byte {
	p.t, p.hasT = p.clk.resolve(l)
	p.inherited = false
	if !p.hasT && p.hasLastStamp {
		p.t, p.inherited = p.lastStamp, true
	}
	if l.tagOnly {
		ps := p.procFor(l)
		p.count(ps, l, nil)
		p.pendingTag = ps
		return nil
	}
	bare := !l.hasHeader() && l.tag == nil

	// Continuations of an open traceback.
	if p.bareTB != nil {
		if bare {
			if p.tbFeed(p.bareTB, l, nil) {
				return nil
			}
		} else {
			p.tbClose(p.bareTB)
		}
	}
	ps := p.procFor(l)
	if !bare && ps.tb != nil {
		if p.tbFeed(ps.tb, l, ps) {
			return nil
		}
	}

	// Progress bars.
	if bytes.IndexByte(l.body, '%') >= 0 && bytes.IndexByte(l.body, '|') >= 0 {
		if rest, ok := p.bar(l, ps, bare); ok {
			return rest
		}
	}
	if len(bytes.TrimSpace(l.body)) > 0 || l.hasHeader() {
		p.pendingTag = nil
	}

	if bare && gapMarker(l.body) {
		p.gap("a break between excerpts")
	}
	if p.hasT {
		p.checkJump(ps, l)
		p.lastStamp, p.hasLastStamp = p.t, true
	}
	p.marks(l)
	p.count(ps, l, l.body)

	// The indented lines after a Python warning: the rest of a message that
	// spans lines (torch's capability warnings), then the source line that
	// warned. Neither is an event; both stay visible to the catalog, as
	// part of the warning.
	if p.warnCont != nil {
		if (bare || (l.tag != nil && l.kind == hdrNone)) && len(l.body) > 0 && (l.body[0] == ' ' || l.body[0] == '\t') {
			if l.level == facts.LevelNone {
				l.level = facts.LevelWarning
			}
			p.unmatched.add(p, ps, l, l.body)
			return nil
		}
		p.warnCont = nil
	}

	p.inferred = l.level == facts.LevelNone
	body, repeated := stripRayDedup(l.body)
	l.body = body
	if repeated == 0 && statHeader(l) && p.statLine(ps, body) {
		// Most lines of a long log; none is a traceback, a frame, an
		// IPython header or a message of the table, so they skip those
		// checks (and the code they would bring into the CPU's cache).
		// A traceback glued to the end of one still opens there.
		if endsInTracebackHead(body) {
			p.tbStart(l, ps, bare, nil)
		}
		return nil
	}
	if bytes.HasPrefix(body, tbHead) {
		p.tbStart(l, ps, bare, nil)
		return nil
	}
	if ipyHead(body) {
		st := p.tbStart(l, ps, bare, nil)
		st.ipython = true
		st.ev.Msg = p.text(bytes.TrimSpace(body))
		return nil
	}
	if isFrameLine(body) {
		// A traceback whose header is not in the log: a paste that starts
		// mid-stack, or a ring buffer that cut it.
		st := p.tbStart(l, ps, bare, nil)
		tbInfo(st.ev).Headless = true
		st.ev.Msg = p.text(body)
		p.tbFeed(st, l, ps)
		return nil
	}
	ev, taken := p.recognize(l, ps, bare)
	if repeated > 0 && ev != nil {
		ev.Repeated = repeated
	}
	if !taken {
		p.unmatched.add(p, ps, l, body)
	}
	if endsInTracebackHead(body) {
		p.tbStart(l, ps, bare, ev)
	}
	if ev != nil {
		ps.lastEv = ev
		ps.lastEvHdr = append(ps.lastEvHdr[:0], l.hdr...)
	}
	return nil
}

// statHeader reports a line whose header sends it to table, where stat
// lines are read: NCCL's and Gloo's lines and uvicorn's have readers of
// their own that never reach it.
func statHeader(l *line) bool {
	return l.kind != hdrNone && l.kind != hdrNCCL && l.kind != hdrGloo && !l.uvicorn
}

// endsInTracebackHead reports a body that ends in Python's traceback header
// (a record glued to the traceback that follows it).
func endsInTracebackHead(body []byte) bool {
	n := len(body)
	return n > len(tbHead) && (body[n-1] == ':' || body[n-1] == ' ') && bytes.HasSuffix(bytes.TrimRight(body, " "), tbHead)
}

// marks counts the lines that show which engine wrote the log.
func (p *parser) marks(l *line) {
	switch l.kind {
	case hdrSGLang, hdrSGLangOld, hdrGPU:
		p.sgMarks++
	case hdrVLLM:
		if !bytes.HasPrefix(l.body, []byte("Automatically detected platform")) {
			p.vlMarks++
		}
	case hdrNone:
		if l.tag != nil && (bytes.HasPrefix(l.tag, []byte("APIServer")) || bytes.HasPrefix(l.tag, []byte("EngineCore")) ||
			bytes.HasPrefix(l.tag, []byte("Worker_")) || bytes.HasPrefix(l.tag, []byte("VllmWorker"))) {
			p.vlMarks++
		}
	}
}

// engine is the engine as far as the log has shown it.
func (p *parser) engine() facts.Engine {
	switch {
	case p.sgMarks > p.vlMarks:
		return facts.EngineSGLang
	case p.vlMarks > p.sgMarks:
		return facts.EngineVLLM
	}
	switch p.kind {
	case facts.KindSGLangLog:
		return facts.EngineSGLang
	case facts.KindVLLMLog:
		return facts.EngineVLLM
	}
	return facts.EngineUnknown
}

// checkJump reports a clock going backwards by more than jumpThreshold
// within one process and one stamp format (libraries may stamp in another
// zone than the engine).
func (p *parser) checkJump(ps *procState, l *line) {
	k := l.kind
	if k >= nHdr {
		return
	}
	if l.wst.ok && p.clk.zoned {
		k = hdrNone
	}
	prev := ps.clocks[k]
	if !prev.IsZero() && prev.After(p.t.Add(jumpThreshold)) {
		p.in.Issuef(facts.IssueClockJump, "the clock of %s goes back %s, from %s to %s",
			procLabel(ps), prev.Sub(p.t).Round(time.Second), prev.Format("2006-01-02 15:04:05"), p.t.Format("2006-01-02 15:04:05"))
		p.gap("the clock goes back")
	}
	ps.clocks[k] = p.t
}

// gap records a break in the log before the current line.
func (p *parser) gap(why string) {
	if n := len(p.log.Gaps); n >= facts.MaxGaps || (n > 0 && p.log.Gaps[n-1].Line >= p.lineNo-1) {
		return
	}
	g := facts.Gap{Line: p.lineNo, Why: why}
	if p.hasLastStamp {
		g.Before = p.lastStamp
	}
	p.log.Gaps = append(p.log.Gaps, g)
}

// gapMarker reports a line that joins two excerpts of a log: "...", "…",
// "[...]", "<snip>", grep's "--", "# --- fragment 2 ---".
func gapMarker(b []byte) bool {
	t := trimSpace(b)
	if len(t) == 0 || len(t) > 80 {
		return false
	}
	switch string(t) {
	case "...", "....", "…", "[...]", "[…]", "(...)", "<snip>", "<snipped>", "[snip]", "--", "---8<---", "✂":
		return true
	}
	if t[0] == '#' || t[0] == '-' || t[0] == '.' || t[0] == '[' || t[0] == '(' {
		for _, w := range []string{"fragment", "snip", "omitted", "truncated", "skipped", "lines removed"} {
			if contains(t, w) {
				return true
			}
		}
	}
	return false
}

func procLabel(ps *procState) string {
	if ps.pl.Proc.Name == "" {
		return "the main process"
	}
	return ps.pl.Proc.Name
}

// count attributes the current line to a process.
func (p *parser) count(ps *procState, l *line, msg []byte) {
	pl := ps.pl
	if ps.lastLine != p.lineNo {
		pl.Lines++
		ps.lastLine = p.lineNo
	}
	src := facts.Source{File: p.in.Path, Line: p.lineNo}
	if pl.FirstSrc.Line == 0 {
		pl.FirstSrc = src
	}
	pl.LastSrc = src
	if p.hasT && !p.inherited {
		if pl.FirstTime.IsZero() {
			pl.FirstTime = p.t
		}
		pl.LastTime = p.t
	}
	if msg != nil {
		msg = bytes.TrimSpace(msg)
		if len(msg) > 0 {
			msg = cutMsg(msg)
			ps.lastMsg = append(ps.lastMsg[:0], msg...)
			ps.lastBad = p.bad
		}
	}
}

// cutMsg cuts b to facts.MaxMsg bytes on a rune boundary.
func cutMsg(b []byte) []byte {
	if len(b) <= facts.MaxMsg {
		return b
	}
	k := facts.MaxMsg
	for k > 0 && !utf8.RuneStart(b[k]) {
		k--
	}
	return b[:k]
}

// text makes a kept string of b: cut to MaxMsg, invalid UTF-8 replaced.
func (p *parser) text(b []byte) string {
	return validString(cutMsg(bytes.TrimSpace(b)), p.bad)
}

// validString is string(b), with invalid UTF-8 replaced when bad says the
// line it came from had some.
func validString(b []byte, bad bool) string {
	if bad {
		return strings.ToValidUTF8(string(b), "\uFFFD")
	}
	return string(b)
}

// emit records a recognized event for the current line.
func (p *parser) emit(ps *procState, typ facts.EventType, lvl facts.Level, msg []byte, data facts.Payload) *facts.LogEvent {
	if lvl == facts.LevelInfo && p.inferred && warnWords(msg) {
		lvl = facts.LevelWarning
	}
	if typ == facts.EventServerArgs || typ == facts.EventNonDefaultArgs {
		// A launch: the bars drawn from here on are the new run's, even
		// when one has the description and total of an earlier run's bar
		// (a log appended across a restart).
		p.main.bars = p.main.bars[:0]
		for _, q := range p.procs {
			q.bars = q.bars[:0]
		}
	}
	ev := &facts.LogEvent{
		Src:   facts.Source{File: p.in.Path, Line: p.lineNo},
		Proc:  ps.pl.Proc,
		Level: lvl,
		Type:  typ,
		Msg:   p.text(msg),
		Data:  data,
	}
	if p.hasT || p.inherited {
		ev.Time, ev.Inherited = p.t, p.inherited
	}
	if p.bad && data != nil {
		validPayload(data)
	}
	p.events.add(ev)
	return ev
}

// validPayload replaces invalid UTF-8 in a payload's text fields, for a
// file that has some: the report is JSON and must stay valid.
func validPayload(data facts.Payload) {
	v := reflect.ValueOf(data).Elem()
	for i := 0; i < v.NumField(); i++ {
		switch f := v.Field(i); f.Kind() {
		case reflect.String:
			f.SetString(strings.ToValidUTF8(f.String(), "\uFFFD"))
		case reflect.Map:
			for _, k := range f.MapKeys() {
				if s, ok := f.MapIndex(k).Interface().(string); ok {
					f.SetMapIndex(k, reflect.ValueOf(strings.ToValidUTF8(s, "\uFFFD")))
				}
			}
		}
	}
}

// finish closes what is open and fills the log's summary.
func (p *parser) finish() {
	if p.bareTB != nil {
		p.tbClose(p.bareTB)
	}
	for _, ps := range p.procList() {
		if ps.tb != nil {
			p.tbClose(ps.tb)
		}
		if len(ps.lastMsg) > 0 {
			ps.pl.LastMsg = validString(ps.lastMsg, ps.lastBad)
		}
	}
	// The main process exists from the start; drop it if it wrote nothing.
	if p.main.pl.Lines == 0 {
		procs := p.log.Procs[:0]
		for _, pl := range p.log.Procs {
			if pl != p.main.pl {
				procs = append(procs, pl)
			}
		}
		p.log.Procs = procs
	}
	p.finishBars()
	for _, s := range p.log.Series {
		s.Finish()
	}
	p.log.Unmatched, p.log.DroppedUnmatched = p.unmatched.all(p)
	evs, dropped := p.events.all()
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].Src.Line < evs[j].Src.Line })
	p.log.Events = evs // never nil: an empty log has "[]"
	p.log.DroppedEvents = dropped
	p.log.Engine = p.engine()
	for _, e := range p.log.Events {
		if v := e.EngineVersion(); v != "" && p.log.Version == "" {
			p.log.Version = v
		}
	}
	if p.clk.needsFix() {
		p.fixTimes()
	}
	p.log.FirstTime, p.log.LastTime = p.clk.bounds()
	if c, ok := p.clk.clock(); ok {
		p.out.Clocks[p.in.Path] = c
	}
	if p.clk.noYearSeen && p.clk.year > 0 {
		p.out.Assumptions = append(p.out.Assumptions, fmt.Sprintf(
			"%s: some of its timestamps carry no year (vLLM, torch or library stamps); they took the year of the file's dated stamps (%d)",
			p.in.Path, p.clk.firstYear.Year()))
	}
	if p.clk.zoned && p.clk.offsetKnown {
		p.out.Assumptions = append(p.out.Assumptions, fmt.Sprintf(
			"%s: lines without the collector's zoned stamp were placed by their own clock, which runs %s from it",
			p.in.Path, p.clk.offset))
	}
	if p.clk.dateless {
		p.out.Assumptions = append(p.out.Assumptions, fmt.Sprintf(
			"%s: its timestamps carry no date (SGLang's [HH:MM:SS] prefix of 2024); they are placed on a day of their own, so only their times of day and the durations between its lines are meaningful",
			p.in.Path))
	}
	p.out.Logs = append(p.out.Logs, p.log)
}

func (p *parser) procList() []*procState {
	out := make([]*procState, 0, len(p.log.Procs))
	for _, pl := range p.log.Procs {
		out = append(out, p.byName[pl.Proc.Key()])
	}
	return out
}

// fixTimes moves the times stored in the placeholder year into the year of
// the file's own dated stamps.
func (p *parser) fixTimes() {
	c := &p.clk
	for _, e := range p.log.Events {
		e.Time = c.fix(e.Time)
	}
	for _, pl := range p.log.Procs {
		pl.FirstTime = c.fix(pl.FirstTime)
		pl.LastTime = c.fix(pl.LastTime)
	}
	for _, b := range p.log.Bars {
		b.Time = c.fix(b.Time)
	}
	for _, s := range p.log.Series {
		if s.First != nil {
			s.First.Time = c.fix(s.First.Time)
		}
		if s.Last != nil {
			s.Last.Time = c.fix(s.Last.Time)
		}
		for _, b := range s.Buckets {
			b.Start = c.fix(b.Start)
			b.End = c.fix(b.End)
		}
	}
}

// eventBuf keeps the first and the last halves of maxEvents events.
type eventBuf struct {
	head, ring []*facts.LogEvent
	next       int
	dropped    int
}

func (e *eventBuf) add(ev *facts.LogEvent) {
	half := maxEvents / 2
	if len(e.head) < half {
		e.head = append(e.head, ev)
		return
	}
	tail := maxEvents - half
	if len(e.ring) < tail {
		e.ring = append(e.ring, ev)
		return
	}
	e.ring[e.next] = ev
	e.next = (e.next + 1) % tail
	e.dropped++
}

func (e *eventBuf) all() ([]*facts.LogEvent, int) {
	out := make([]*facts.LogEvent, 0, len(e.head)+len(e.ring))
	out = append(out, e.head...)
	out = append(out, e.ring[e.next:]...)
	out = append(out, e.ring[:e.next]...)
	return out, e.dropped
}
