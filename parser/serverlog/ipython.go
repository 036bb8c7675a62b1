package serverlog

import (
	"bytes"
	"strconv"

	"github.com/coroner-dev/coroner/parser/facts"
)

// IPython (and so Jupyter) prints an uncaught exception its own way, and
// vLLM's offline LLM is often run in a notebook:
//
//	---------------------------------------------------------------------------
//	OutOfMemoryError                          Traceback (most recent call last)
//	Cell In[3], line 1
//	----> 1 llm = LLM(model="meta-llama/Llama-2-13b-chat-hf", tensor_parallel_size=4)
//
//	File ~/venv/lib/python3.10/site-packages/vllm/entrypoints/llm.py:93, in LLM.__init__(self, model, ...)
//	     92 engine_args = EngineArgs(model=model, ...)
//	---> 93 self.llm_engine = LLMEngine.from_engine_args(engine_args)
//
//	OutOfMemoryError: CUDA out of memory. Tried to allocate ...
//
// IPython 7 and older name a frame "PATH in FUNC(ARGS)" and a cell
// "<ipython-input-3-...> in <module>"; IPython 8 "File PATH:LINE, in
// FUNC(ARGS)" and "Cell In[3], line 1" (8.0-8.5: "Input In [3], in <cell
// line: 1>()"). The exception line is Python's own.

var ipyHeadTail = []byte("Traceback (most recent call last)")

// ipyHead reports IPython's first line: the exception's type, padding, and
// "Traceback (most recent call last)" without Python's colon.
func ipyHead(b []byte) bool {
	n := len(b)
	for n > 0 && (b[n-1] == ' ' || b[n-1] == '\t') {
		n--
	}
	// Most lines end in something else: one byte rules them out.
	if n <= len(ipyHeadTail) || b[n-1] != ')' || !bytes.HasSuffix(b[:n], ipyHeadTail) {
		return false
	}
	b = b[:n]
	head := b[:len(b)-len(ipyHeadTail)]
	typ := bytes.TrimRight(head, " ")
	return len(typ) > 0 && len(head)-len(typ) >= 2 && bytes.IndexByte(typ, ' ') < 0 && looksLikeException(append(typ[:len(typ):len(typ)], ':'))
}

// ipyLine reads a line of an IPython traceback that Python's form does not
// have: a frame, a cell, a numbered source line. It returns false for the
// others (blank lines, the exception), which read as in Python's form.
func (p *parser) ipyLine(st *tbState, body, trim []byte) bool {
	switch {
	case len(trim) == 0:
		return false
	case bytes.HasPrefix(trim, []byte("File ")) && !bytes.HasPrefix(trim, tbFile):
		// File PATH:LINE, in FUNC(ARGS)
		k := bytes.Index(trim, []byte(", in "))
		if k < 0 {
			return false
		}
		loc := trim[len("File "):k]
		f := facts.Frame{File: p.text(loc)}
		if c := bytes.LastIndexByte(loc, ':'); c > 0 {
			if n, err := strconv.Atoi(string(loc[c+1:])); err == nil {
				f.File, f.Line = p.text(loc[:c]), n
			}
		}
		f.Func = ipyFunc(trim[k+len(", in "):])
		st.addFrame(f)
		return true
	case bytes.HasPrefix(trim, []byte("Cell In[")), bytes.HasPrefix(trim, []byte("Input In [")), bytes.HasPrefix(trim, []byte("<ipython-input-")):
		f := facts.Frame{File: "<cell>", Func: "<module>"}
		if k := bytes.Index(trim, []byte(", line ")); k > 0 {
			f.Line, _ = strconv.Atoi(string(leadingDigits(trim[k+len(", line "):])))
		}
		st.addFrame(f)
		return true
	case body[0] != ' ' && body[0] != '\t' && ipy7Frame(trim):
		k := bytes.Index(trim, []byte(" in "))
		st.addFrame(facts.Frame{File: p.text(trim[:k]), Func: ipyFunc(trim[k+len(" in "):])})
		return true
	}
	// "---> 93 code" marks the line that called the next frame or raised;
	// "     92 code" lines are context around it.
	t := bytes.TrimLeft(trim, "-")
	arrow := len(t) < len(trim) && bytes.HasPrefix(t, []byte(">"))
	if arrow {
		t = bytes.TrimLeft(t[1:], " ")
	}
	n := leadingDigits(t)
	if len(n) == 0 || (len(n) < len(t) && t[len(n)] != ' ') {
		return bytes.HasPrefix(trim, []byte("(...)")) || bytes.HasPrefix(trim, []byte("[... skipping"))
	}
	if arrow && st.nf > 0 {
		f := st.lastFrame()
		if f.Line == 0 {
			f.Line, _ = strconv.Atoi(string(n))
		}
		if code := bytes.TrimSpace(t[len(n):]); f.Code == "" && len(code) > 0 {
			f.Code = p.text(cutText(code, facts.MaxCode))
		}
	}
	return true
}

// ipy7Frame reports IPython 7's "/path/file.py in func(args)".
func ipy7Frame(b []byte) bool {
	k := bytes.Index(b, []byte(".py in "))
	return k > 0 && (b[0] == '/' || b[0] == '~' || (len(b) > 2 && b[1] == ':')) && bytes.IndexByte(b[:k], ' ') < 0
}

// ipyFunc is the function of "LLM.__init__(self, model, ...)": the name
// before the arguments, without its class, as Python's form prints it.
func ipyFunc(b []byte) string {
	if k := bytes.IndexByte(b, '('); k >= 0 {
		b = b[:k]
	}
	b = bytes.TrimSpace(b)
	if k := bytes.LastIndexByte(b, '.'); k >= 0 && k+1 < len(b) {
		b = b[k+1:]
	}
	return string(b)
}
