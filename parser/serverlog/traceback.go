package serverlog

import (
	"bytes"
	"strconv"

	"github.com/coroner-dev/coroner/parser/facts"
)

var (
	tbHead       = []byte("Traceback (most recent call last):")
	tbDuring     = []byte("During handling of the above exception, another exception occurred:")
	tbDirect     = []byte("The above exception was the direct cause of the following exception:")
	tbFile       = []byte("File \"")
	tbLineMarker = []byte("\", line ")
)

const (
	tbFrames = iota // reading frames, waiting for the exception line
	tbAfter         // after an exception line: a chain may follow
	tbChain         // after "During handling ...": the next part follows
)

// tbState is a Python traceback being read. Its event is added when it
// starts, so that events stay in line order, and filled as lines come.
type tbState struct {
	ev    *facts.LogEvent
	tb    *facts.Traceback
	intro *facts.LogEvent // the line that announced it ("Scheduler hit an exception:")
	ps    *procState
	phase int
	// bare tracebacks continue on unprefixed lines; the others on lines of
	// the same process with the same kind of header (vLLM repeats it).
	bare bool
	// ipython is set for IPython's (Jupyter's) form of a traceback.
	ipython bool
	kind    hdrKind
	// startHdr is the header of the line that opened it.
	startHdr []byte
	// the first frames, and the last ones in a ring
	outer  [facts.MaxOuterFrames]facts.Frame
	frames [facts.MaxFrames - facts.MaxOuterFrames]facts.Frame
	nf     int
	// first exception of a chain
	firstType, firstMsg string
	excLine             int
	// afterLast is the line of the exception or of the last line noted in
	// Traceback.After: a gap (a blank line, which never reaches the
	// traceback) ends them.
	afterLast int
	lines     int
	last      int
}

// isFrameLine reports a traceback frame line, `  File "x.py", line 12, in f`.
// faulthandler's thread dumps print `File "x.py", line 12 in f` (no comma):
// the stacks of every thread at a fatal signal, not a traceback.
func isFrameLine(b []byte) bool {
	t := trimIndent(b)
	if len(t) <= len(tbFile)+8 || t[0] != 'F' || !has(t, `File "`) {
		return false
	}
	k := bytes.Index(t, tbLineMarker)
	return k > 0 && bytes.Contains(t[k:], []byte(", in "))
}

// tbStart opens a traceback on the current line.
func (p *parser) tbStart(l *line, ps *procState, bare bool, intro *facts.LogEvent) *tbState {
	if intro == nil && ps.lastEv != nil && ps.lastEv.Src.Line == p.lineNo-1 && (l.kind == hdrVLLM || l.kind == hdrGlog || l.kind == hdrC10d) &&
		bytes.Equal(ps.lastEvHdr, l.hdr) && ps.lastEv.Level.Severe() {
		// vLLM's logger.exception: "EngineCore failed to start." then the
		// traceback, each line repeating the header.
		intro = ps.lastEv
	}
	st := &tbState{ps: ps, intro: intro, kind: l.kind, last: p.lineNo, lines: 1}
	st.startHdr = append([]byte(nil), l.hdr...)
	st.tb = &facts.Traceback{}
	st.ev = p.emit(ps, facts.EventTraceback, facts.LevelError, tbHead, nil)
	st.ev.Traceback = st.tb
	if intro != nil {
		st.ev.Src.Line = intro.Src.Line
	}
	// SGLang writes a traceback as one multi-line record: only its first line
	// has the prefix. So do Python's uncaught exceptions.
	switch l.kind {
	case hdrNone:
		st.bare = l.tag == nil
	case hdrSGLang, hdrSGLangOld, hdrGPU, hdrUvicorn, hdrRayCpp:
		st.bare = true
	}
	if st.bare {
		if p.bareTB != nil {
			p.tbClose(p.bareTB)
		}
		p.bareTB = st
	} else {
		if ps.tb != nil {
			p.tbClose(ps.tb)
		}
		ps.tb = st
	}
	return st
}

// tbFeed offers a line to an open traceback. It returns false when the line
// is not part of it; the traceback is then closed, except when a bare one
// notes the line in Traceback.After.
func (p *parser) tbFeed(st *tbState, l *line, ps *procState) bool {
	if !st.bare && (l.kind != st.kind || !bytes.Equal(l.hdr, st.startHdr)) {
		// Another record of the process: the traceback's lines all repeat
		// the header of the record that printed it.
		p.tbClose(st)
		return false
	}
	if st.lines >= maxTBLines {
		p.tbClose(st)
		return false
	}
	body := l.body
	trim := bytes.TrimSpace(body)
	switch st.phase {
	case tbFrames:
		if st.ipython && p.ipyLine(st, body, trim) {
			break
		}
		switch {
		case bytes.HasPrefix(trim, tbFile):
			p.tbFrame(st, trim)
		case len(trim) == 0:
		case body[0] == ' ' || body[0] == '\t':
			// source and caret lines: the source line is the call that led
			// to the next frame (or that raised, under the last one).
			p.tbCode(st, trim)
		case bytes.HasPrefix(trim, tbHead):
			// A new traceback before this one named its exception.
			p.tbClose(st)
			return false
		default:
			p.tbException(st, l, trim)
		}
	case tbAfter:
		switch {
		case len(trim) == 0:
		case bytes.Equal(trim, tbDuring) || bytes.Equal(trim, tbDirect):
			st.phase = tbChain
		case bytes.HasPrefix(trim, tbHead):
			// Printed again, not chained: a traceback of its own.
			p.tbClose(st)
			return false
		case !st.bare:
			// A multi-line exception message of the same record.
			p.tbMsgLine(st, trim)
		case p.lineNo == st.afterLast+1 && len(st.tb.After) < facts.MaxAfter && !isBarLine(body):
			// Perhaps the rest of the message: kept beside it, and the
			// line is still read as a line of its own (the traceback stays
			// open but does not claim it).
			st.tb.After = append(st.tb.After, facts.TracebackLine{Line: p.lineNo, Text: p.text(trim)})
			st.afterLast = p.lineNo
			return false
		default:
			p.tbClose(st)
			return false
		}
	case tbChain:
		switch {
		case len(trim) == 0:
		case bytes.HasPrefix(trim, tbHead):
			st.tb.Chained++
			st.phase = tbFrames
			st.nf = 0
		default:
			p.tbClose(st)
			return false
		}
	}
	st.lines++
	st.last = p.lineNo
	if ps == nil {
		ps = st.ps
	}
	p.count(ps, l, nil)
	return true
}

func (p *parser) tbMsgLine(st *tbState, trim []byte) {
	if len(st.tb.ExcMsg) < facts.MaxMsg {
		st.tb.ExcMsg = string(cutMsg([]byte(st.tb.ExcMsg + "\n" + p.text(trim))))
	}
}

// isBarLine reports whether b holds a tqdm state, which a traceback's
// message never does.
func isBarLine(b []byte) bool {
	_, ok := parseBar(b)
	return ok
}

func (p *parser) tbFirst(st *tbState) {
	if st.firstType == "" && st.tb.ExcType != "" {
		st.firstType, st.firstMsg = st.tb.ExcType, st.tb.ExcMsg
	}
}

// tbFrame reads `File "x.py", line 12, in f`.
func (p *parser) tbFrame(st *tbState, b []byte) {
	b = b[len(tbFile):]
	q := bytes.Index(b, tbLineMarker)
	if q < 0 {
		return
	}
	f := facts.Frame{File: p.text(b[:q])}
	rest := b[q+len(tbLineMarker):]
	f.Line, _ = strconv.Atoi(string(leadingDigits(rest)))
	if k := bytes.Index(rest, []byte(", in ")); k >= 0 {
		f.Func = p.text(rest[k+5:])
	}
	st.addFrame(f)
}

// tbCode keeps the source line under the last frame read.
func (p *parser) tbCode(st *tbState, b []byte) {
	if st.nf == 0 || isCaretLine(b) {
		return
	}
	f := st.lastFrame()
	if f.Code == "" {
		f.Code = p.text(cutText(b, facts.MaxCode))
	}
}

// isCaretLine reports Python 3.11's "~~~^^^^" markers under a source line.
func isCaretLine(b []byte) bool {
	for _, c := range b {
		if c != '^' && c != '~' && c != ' ' {
			return false
		}
	}
	return true
}

// lastFrame is the frame read last.
func (st *tbState) lastFrame() *facts.Frame {
	i := st.nf - 1
	if i < facts.MaxOuterFrames {
		return &st.outer[i]
	}
	return &st.frames[(i-facts.MaxOuterFrames)%len(st.frames)]
}

// tbException reads the exception line "pkg.Type: message" that ends a part.
func (p *parser) tbException(st *tbState, l *line, b []byte) {
	p.tbFirst(st)
	typ, msg := splitException(b)
	st.tb.ExcType = p.text(typ)
	st.tb.ExcMsg = p.text(msg)
	st.keepFrames()
	st.phase = tbAfter
	st.afterLast = p.lineNo
	st.tb.After = st.tb.After[:0]
	st.excLine = p.lineNo
	st.tb.ExcLine = p.lineNo
	st.ev.Msg = p.text(b)
	if !p.hasT && st.ev.Time.IsZero() && p.hasLastStamp {
		st.ev.Time, st.ev.Inherited = p.lastStamp, true
	}
}

// keepFrames sets the traceback's frames to those read, outermost first:
// the first ones and the last ones when there were too many.
func (st *tbState) keepFrames() {
	st.tb.Frames = append(st.tb.Frames[:0], st.outer[:min(st.nf, facts.MaxOuterFrames)]...)
	inner := st.nf - facts.MaxOuterFrames
	if inner <= 0 {
		st.tb.Elided = 0
		return
	}
	n := min(inner, len(st.frames))
	st.tb.Elided = inner - n
	for i := inner - n; i < inner; i++ {
		st.tb.Frames = append(st.tb.Frames, st.frames[i%len(st.frames)])
	}
}

// splitException splits "a.b.Error: msg"; a line without ": " is all type
// ("KeyboardInterrupt").
func splitException(b []byte) (typ, msg []byte) {
	k := bytes.Index(b, []byte(": "))
	if k < 0 {
		if len(b) > 0 && b[len(b)-1] == ':' {
			return b[:len(b)-1], nil
		}
		return b, nil
	}
	head := b[:k]
	if bytes.IndexByte(head, ' ') >= 0 {
		// Not an identifier: a message printed where the type would be.
		return nil, b
	}
	return head, b[k+2:]
}

// tbClose ends a traceback: its event gets the last exception, the first of
// a chain, and the events its exception implies (OOM, engine death ...).
func (p *parser) tbClose(st *tbState) {
	if p.bareTB == st {
		p.bareTB = nil
	}
	if st.ps.tb == st {
		st.ps.tb = nil
	}
	ev := st.ev
	ev.EndLine = st.last
	if st.tb.Chained > 0 && st.firstType != "" {
		info := tbInfo(ev)
		info.FirstExcType, info.FirstExcMsg = st.firstType, st.firstMsg
	}
	if st.tb.ExcType == "" && st.tb.ExcMsg == "" {
		tbInfo(ev).Incomplete = true
		st.keepFrames()
	}
	if st.intro != nil {
		st.intro.Traceback = st.tb
		st.intro.EndLine = st.last
	}
	if st.excLine > 0 {
		p.exceptionEvents(st)
	}
}

// exceptionEvents adds the events an exception implies, cited at its line.
func (p *parser) exceptionEvents(st *tbState) {
	typ, msg := st.tb.ExcType, st.tb.ExcMsg
	line := []byte(typ + ": " + msg)
	saveLine, saveT, saveHas, saveInh := p.lineNo, p.t, p.hasT, p.inherited
	p.lineNo = st.excLine
	p.t, p.inherited = st.ev.Time, st.ev.Inherited
	p.hasT = !st.ev.Time.IsZero() && !st.ev.Inherited
	p.classifyException(st.ps, []byte(typ), []byte(msg), line)
	p.lineNo, p.t, p.hasT, p.inherited = saveLine, saveT, saveHas, saveInh
}

// leadingDigits is the run of digits b starts with.
func leadingDigits(b []byte) []byte {
	n := 0
	for n < len(b) && isDigit(b[n]) {
		n++
	}
	return b[:n]
}

// addFrame appends a frame, keeping the first ones and the last ones.
func (st *tbState) addFrame(f facts.Frame) {
	if st.nf < facts.MaxOuterFrames {
		st.outer[st.nf] = f
	} else {
		st.frames[(st.nf-facts.MaxOuterFrames)%len(st.frames)] = f
	}
	st.nf++
}

// tbInfo returns a traceback event's payload, made on first use: most
// tracebacks have nothing to say beyond their frames.
func tbInfo(ev *facts.LogEvent) *facts.TracebackInfo {
	if info, ok := ev.Data.(*facts.TracebackInfo); ok {
		return info
	}
	info := &facts.TracebackInfo{}
	ev.Data = info
	return info
}
