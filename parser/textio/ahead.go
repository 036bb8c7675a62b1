package textio

// Ahead reads an input on a goroutine of its own, a few batches of lines
// ahead of the caller, and runs prep on every line there.
//
// A parser's work on a line often splits into a part that depends on the
// line alone (taking a header apart, reading numbers) and a part that depends
// on what came before (which process, which phase, which year). prep does
// the first part on another core while the caller does the second on the
// lines before: on a large log that is most of a second core put to use,
// and the result cannot differ from reading on one goroutine, because prep
// sees nothing but the line.
//
// While an Ahead is open, the Input's Scan, Bytes, Text, Line, Src,
// Truncated and CheckUTF8 speak of the caller's current line, and the issue
// of a cut line is raised when the caller reaches it, as if the caller read
// the input itself. Every line's UTF-8 is checked (and counted) as it is
// read: open an Ahead only for a parser that calls CheckUTF8 on every line.
// The line bytes and the slot stay valid until the next Scan.
type Ahead[T any] struct {
	in   *Input
	prep func(line []byte, slot *T, ahead bool)

	full chan *batch[T] // read and prepared, in order; closed at the end
	free chan *batch[T]
	stop chan struct{}
	done chan struct{}
	made int // batches allocated, by the reading goroutine

	cur *batch[T]
	i   int
}

// Batches are about batchBytes of lines, at most batchLines lines; at most
// aheadBatches exist, so the reading goroutine holds at most that many
// batches (plus one line of up to the line limit) ahead of the caller.
const (
	batchBytes   = 256 << 10
	batchLines   = 2048
	aheadBatches = 4
)

type batch[T any] struct {
	buf   []byte
	lines []aheadLine
	slots []T
	// panicked holds what prep panicked with at the batch's last line.
	panicked any
	failed   bool
}

type aheadLine struct {
	start, end int
	n          int
	cut        bool
	cutLen     int64
	bad        bool
}

// aheadSource is what an Input needs of an open Ahead, whatever its T.
type aheadSource interface {
	next() bool
	line() *aheadLine
	bytes() []byte
}

// ReadAhead starts reading in on another goroutine. The caller must Close
// the Ahead (a deferred Close also stops the reader if the caller panics).
//
// prep's last argument tells whether the reader is ahead: whether the
// caller has a batch waiting. When it is not, the reader is what the caller
// waits for, and prep may leave work that the caller can do as well to the
// caller, so that the two goroutines share the work evenly.
func ReadAhead[T any](in *Input, prep func(line []byte, slot *T, ahead bool)) *Ahead[T] {
	a := &Ahead[T]{
		in:   in,
		prep: prep,
		full: make(chan *batch[T], aheadBatches-1),
		free: make(chan *batch[T], aheadBatches),
		stop: make(chan struct{}),
		done: make(chan struct{}),
		i:    -1,
	}
	in.ahead = a
	in.pin = 0
	go a.read()
	return a
}

// read runs on the reading goroutine: it alone touches the Scanner until
// done is closed.
func (a *Ahead[T]) read() {
	defer close(a.done)
	defer close(a.full)
	sc := a.in.Scanner
	for {
		select {
		case <-a.stop:
			return
		default:
		}
		b := a.batch()
		if b == nil {
			return
		}
		eof := false
		for len(b.lines) < batchLines && len(b.buf) < batchBytes {
			if !sc.Scan() {
				eof = true
				break
			}
			start := len(b.buf)
			b.buf = append(b.buf, sc.Bytes()...)
			cut, cutLen := sc.Truncated()
			b.lines = append(b.lines, aheadLine{start: start, end: len(b.buf), n: sc.Line(), cut: cut, cutLen: cutLen, bad: !sc.CheckUTF8()})
		}
		if len(b.lines) > 0 {
			// The buffer no longer grows: lines may point into it.
			if cap(b.slots) < len(b.lines) {
				b.slots = append(b.slots[:cap(b.slots)], make([]T, len(b.lines)-cap(b.slots))...)
			}
			b.slots = b.slots[:len(b.lines)]
			if !a.prepAll(b) {
				eof = true
			}
			select {
			case a.full <- b:
			case <-a.stop:
				return
			}
		}
		if eof {
			return
		}
	}
}

// prepAll runs prep on a batch's lines. A panic (a bug of prep on odd
// input) ends the batch at the line that caused it, for the caller to
// re-raise when it gets there.
func (a *Ahead[T]) prepAll(b *batch[T]) (ok bool) {
	i := 0
	defer func() {
		if r := recover(); r != nil {
			b.lines, b.slots = b.lines[:i+1], b.slots[:i+1]
			b.panicked, b.failed = r, true
			ok = false
		}
	}()
	ahead := len(a.full) > 0
	for ; i < len(b.lines); i++ {
		l := &b.lines[i]
		a.prep(b.buf[l.start:l.end:l.end], &b.slots[i], ahead)
	}
	return true
}

// batch returns an empty batch, waiting for the caller to hand one back
// when all exist; nil once Close was called.
func (a *Ahead[T]) batch() *batch[T] {
	var b *batch[T]
	if a.made < aheadBatches {
		select {
		case b = <-a.free:
		default:
			a.made++
			b = &batch[T]{buf: make([]byte, 0, batchBytes+batchBytes/4)}
		}
	} else {
		select {
		case b = <-a.free:
		case <-a.stop:
			return nil
		}
	}
	b.buf, b.lines = b.buf[:0], b.lines[:0]
	return b
}

func (a *Ahead[T]) next() bool {
	a.i++
	for a.cur == nil || a.i >= len(a.cur.lines) {
		if a.cur != nil {
			a.free <- a.cur // never blocks: there are at most aheadBatches
			a.cur = nil
		}
		b, ok := <-a.full
		if !ok {
			<-a.done
			return false
		}
		a.cur, a.i = b, 0
	}
	if a.cur.failed && a.i == len(a.cur.lines)-1 {
		panic(a.cur.panicked)
	}
	return true
}

// line is the current line, nil before the first Scan.
func (a *Ahead[T]) line() *aheadLine {
	if a.cur == nil || a.i < 0 || a.i >= len(a.cur.lines) {
		return nil
	}
	return &a.cur.lines[a.i]
}

func (a *Ahead[T]) bytes() []byte {
	l := a.line()
	if l == nil {
		return nil
	}
	return a.cur.buf[l.start:l.end:l.end]
}

// Prepared returns what prep made of the current line.
func (a *Ahead[T]) Prepared() *T {
	if a.cur == nil || a.i < 0 || a.i >= len(a.cur.slots) {
		return nil
	}
	return &a.cur.slots[a.i]
}

// Close stops the reading goroutine and gives the Input back to the
// caller's goroutine. Lines read ahead and not scanned are dropped (the
// Input's counts still include them); the current line stays the one that
// Line reports until the next Scan, so that a parse issue raised after a
// panic cites it.
func (a *Ahead[T]) Close() {
	if a.in.ahead != aheadSource(a) {
		return
	}
	pin := 0
	if a.cur != nil && a.i >= 0 && a.i < len(a.cur.lines) {
		pin = a.cur.lines[a.i].n
	}
	close(a.stop)
	for range a.full { // unblock a reader waiting to send
	}
	<-a.done
	a.in.ahead = nil
	a.in.pin = pin
	a.cur = nil
}
