package derive

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	catdata "github.com/coroner-dev/coroner/rules/catalog"

	"github.com/coroner-dev/coroner/parser/facts"
)

// FrameMap says what a traceback's frames mean: the phase of the engine the
// code runs in, and the library that owns it (catalog/frames.yaml).
type FrameMap struct {
	Phases    []FramePhase   `yaml:"phases" json:"phases"`
	Libraries []FrameLibrary `yaml:"libraries" json:"libraries"`
	Waits     []FrameWait    `yaml:"waits" json:"waits"`

	byFunc map[string][]int // function -> Phases entries naming it
	any    []int            // Phases entries for every function of their files
}

// FramePhase places a frame in a phase: its function is one of Funcs ("*"
// for any) and its file contains one of Files (any file when empty).
type FramePhase struct {
	Phase Phase    `yaml:"phase" json:"phase"`
	Funcs []string `yaml:"funcs" json:"funcs"`
	Files []string `yaml:"files" json:"files"`
	// Suggests: what a failure of this step most often is, when nothing
	// else says (a warm-up run to find out whether memory suffices).
	Suggests   []Suggestion `yaml:"suggests" json:"suggests"`
	References []string     `yaml:"references" json:"references"`
}

// FrameLibrary names the library whose files contain one of Paths, and the
// causes a failure inside it suggests when nothing else explains it.
type FrameLibrary struct {
	Library    string       `yaml:"library" json:"library"`
	Paths      []string     `yaml:"paths" json:"paths"`
	Suggests   []Suggestion `yaml:"suggests" json:"suggests"`
	References []string     `yaml:"references" json:"references"`
	// Fallback marks a library whose suggestions are only a prior (a
	// model's own code raises for many reasons): they count only when no
	// other finding names a cause (LayerFallback).
	Fallback bool `yaml:"fallback" json:"fallback"`
}

// FrameWait says what a live process is doing when a frame of its stack
// (a py-spy dump) matches: waiting in a collective, waiting for the GPU,
// compiling, loading weights, or idle in its event loop. Funcs and Files
// match Python frames as phases do; Native matches native frames by a
// substring of the function name.
type FrameWait struct {
	Wait       Wait     `yaml:"wait" json:"wait"`
	Funcs      []string `yaml:"funcs" json:"funcs"`
	Files      []string `yaml:"files" json:"files"`
	Native     []string `yaml:"native" json:"native"`
	References []string `yaml:"references" json:"references"`
}

// Wait is what a stack says its process is doing.
type Wait string

// The kinds of waits (catalog/frames.yaml, waits).
const (
	WaitCollective Wait = "collective" // in a collective or a message from a peer
	WaitGPU        Wait = "gpu"        // for a kernel to finish (synchronize, a copy back)
	WaitCompile    Wait = "compile"    // building kernels (Triton, Inductor, ninja, JIT)
	WaitLoad       Wait = "load"       // reading weights
	WaitIdle       Wait = "idle"       // its event loop, with nothing to do
)

func (w Wait) valid() bool {
	switch w {
	case WaitCollective, WaitGPU, WaitCompile, WaitLoad, WaitIdle:
		return true
	}
	return false
}

// StackWait returns what the innermost frame the waits know says about a
// stack (Python frames and native frames, each innermost first), and that
// frame in words.
func (m *FrameMap) StackWait(frames []facts.Frame, native []string) (Wait, string, bool) {
	// A process that waits for its next message between steps passes
	// through a collective primitive on its way (SGLang's ranks receive
	// requests by a broadcast): the loop close to the top of the stack says
	// it is idle, not stuck in a collective.
	for i, f := range frames {
		if i == idleDepth {
			break
		}
		if w, at, ok := m.frameWait(f); ok && w == WaitIdle {
			return w, at, true
		}
	}
	for _, f := range frames {
		if w, at, ok := m.frameWait(f); ok && w != WaitIdle {
			return w, at, true
		}
	}
	for _, n := range native {
		for _, w := range m.Waits {
			if containsAnyOf(n, w.Native) {
				return w.Wait, n, true
			}
		}
	}
	return "", "", false
}

// idleDepth is how close to the innermost frame an idle loop must be: its
// wait for the next message is a few calls deep (a broadcast, a queue get,
// a poll), a step's work many more.
const idleDepth = 8

func (m *FrameMap) frameWait(f facts.Frame) (Wait, string, bool) {
	file := strings.ReplaceAll(f.File, `\`, "/")
	fn := f.Func
	if k := strings.LastIndexByte(fn, '.'); k >= 0 {
		fn = fn[k+1:]
	}
	for _, w := range m.Waits {
		if len(w.Funcs)+len(w.Files) == 0 || len(w.Files) > 0 && !containsAnyOf(file, w.Files) {
			continue
		}
		if len(w.Funcs) == 0 || slices.Contains(w.Funcs, fn) {
			return w.Wait, fmt.Sprintf("%s (%s:%d)", f.Func, path.Base(file), f.Line), true
		}
	}
	return "", "", false
}

// Suggestion is a cause a library's failures suggest, with its prior.
type Suggestion struct {
	Category   Category `yaml:"category" json:"category"`
	Confidence float64  `yaml:"confidence" json:"confidence"`
}

// BuiltinFrames returns the embedded frame map; tests validate it, so an
// error here is a build defect.
func BuiltinFrames() *FrameMap {
	m, err := parseFrames(decodeJSON(catdata.FramesJSON, "catalog/frames.yaml"), "catalog/frames.yaml")
	if err != nil {
		panic(err)
	}
	return m
}

// ParseFrames reads and checks a frame map.
func ParseFrames(data []byte, file string) (*FrameMap, error) {
	return parseFrames(decodeYAML(data, file), file)
}

func parseFrames(decode func(any) error, file string) (*FrameMap, error) {
	m := &FrameMap{}
	if err := decode(m); err != nil {
		return nil, err
	}
	var errs []error
	m.byFunc = map[string][]int{}
	for i, e := range m.Phases {
		if e.Phase.Order() < 0 {
			errs = append(errs, fmt.Errorf("%s: phases[%d]: phase %q is not in the taxonomy", file, i, e.Phase))
		}
		if len(e.Funcs) == 0 {
			errs = append(errs, fmt.Errorf("%s: phases[%d]: no funcs", file, i))
		}
		if len(e.References) == 0 {
			errs = append(errs, fmt.Errorf("%s: phases[%d]: no references", file, i))
		}
		for _, sg := range e.Suggests {
			if !sg.Category.Valid() || sg.Confidence <= 0 || sg.Confidence > 1 {
				errs = append(errs, fmt.Errorf("%s: phases[%d]: suggestion %q at %v: not a category with a confidence in (0, 1]", file, i, sg.Category, sg.Confidence))
			}
		}
		for _, f := range e.Funcs {
			if f == "*" {
				if len(e.Files) == 0 {
					errs = append(errs, fmt.Errorf("%s: phases[%d]: funcs '*' needs files", file, i))
				}
				m.any = append(m.any, i)
				continue
			}
			m.byFunc[f] = append(m.byFunc[f], i)
		}
	}
	for i, l := range m.Libraries {
		if l.Library == "" || len(l.Paths) == 0 || len(l.References) == 0 {
			errs = append(errs, fmt.Errorf("%s: libraries[%d]: needs library, paths and references", file, i))
		}
		for _, sg := range l.Suggests {
			if !sg.Category.Valid() || sg.Confidence <= 0 || sg.Confidence > 1 {
				errs = append(errs, fmt.Errorf("%s: libraries[%d]: suggestion %q at %v: not a category with a confidence in (0, 1]", file, i, sg.Category, sg.Confidence))
			}
		}
	}
	for i, w := range m.Waits {
		if !w.Wait.valid() || len(w.Funcs)+len(w.Files)+len(w.Native) == 0 || len(w.References) == 0 {
			errs = append(errs, fmt.Errorf("%s: waits[%d]: needs a known wait, funcs, files or native, and references", file, i))
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return m, nil
}

func containsAnyOf(s string, subs []string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

// FramePhaseOf returns the phase a frame runs in, if the map knows it. An
// entry that names the function wins over one that takes every function of
// a file.
func (m *FrameMap) FramePhaseOf(f facts.Frame) (Phase, bool) {
	if e := m.stepOf(f); e != nil {
		return e.Phase, true
	}
	return "", false
}

// MethodPhase is the phase of an engine's method named in a message (not a
// frame: no file is known), when every entry naming it in that engine's
// files agrees on one.
func (m *FrameMap) MethodPhase(method string, engine facts.Engine) (Phase, bool) {
	var ph Phase
	for _, i := range m.byFunc[method] {
		e := &m.Phases[i]
		mine := false
		for _, f := range e.Files {
			if strings.HasPrefix(f, string(engine)+"/") {
				mine = true
			}
		}
		if !mine {
			continue
		}
		if ph != "" && ph != e.Phase {
			return "", false
		}
		ph = e.Phase
	}
	return ph, ph != ""
}

// stepOf returns the phase entry a frame matches, or nil.
func (m *FrameMap) stepOf(f facts.Frame) *FramePhase {
	file := strings.ReplaceAll(f.File, `\`, "/")
	fn := f.Func
	if k := strings.LastIndexByte(fn, '.'); k >= 0 {
		fn = fn[k+1:] // "Worker.load_model" in py-spy or 3.11+ qualified names
	}
	for _, i := range m.byFunc[fn] {
		if e := &m.Phases[i]; len(e.Files) == 0 || containsAnyOf(file, e.Files) {
			return e
		}
	}
	for _, i := range m.any {
		if containsAnyOf(file, m.Phases[i].Files) {
			return &m.Phases[i]
		}
	}
	return nil
}

// LibraryOf returns the library that owns a frame's file, "" if none.
func (m *FrameMap) LibraryOf(f facts.Frame) string {
	if l := m.libraryOf(f); l != nil {
		return l.Library
	}
	return ""
}

func (m *FrameMap) libraryOf(f facts.Frame) *FrameLibrary {
	file := strings.ReplaceAll(f.File, `\`, "/")
	for i, l := range m.Libraries {
		if containsAnyOf(file, l.Paths) {
			return &m.Libraries[i]
		}
	}
	return nil
}

// Library returns the library of that name, or nil.
func (m *FrameMap) Library(name string) *FrameLibrary {
	for i := range m.Libraries {
		if m.Libraries[i].Library == name {
			return &m.Libraries[i]
		}
	}
	return nil
}

// TracebackPhase returns the phase the innermost phase-bearing frame of tb
// runs in, and that frame. The source line under a frame is the call that
// led deeper, so the functions it calls are read as one frame further in
// (a paste often stops at `self.init_memory_pool()`).
func (m *FrameMap) TracebackPhase(tb *facts.Traceback) (Phase, facts.Frame, bool) {
	if e, f := m.TracebackStep(tb); e != nil {
		return e.Phase, f, true
	}
	return "", facts.Frame{}, false
}

// TracebackStep returns the phase entry of the innermost phase-bearing frame
// of tb (the engine's step it failed in), and that frame.
func (m *FrameMap) TracebackStep(tb *facts.Traceback) (*FramePhase, facts.Frame) {
	for i := len(tb.Frames) - 1; i >= 0; i-- {
		f := tb.Frames[i]
		calls := calledNames(f.Code)
		for j := len(calls) - 1; j >= 0; j-- {
			g := facts.Frame{File: f.File, Func: calls[j], Line: f.Line, Code: f.Code}
			if e := m.stepOf(g); e != nil {
				return e, g
			}
		}
		if e := m.stepOf(f); e != nil {
			return e, f
		}
	}
	return nil, facts.Frame{}
}

// callRe finds "name(" in a line of Python.
var callRe = regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_]*)\s*\(`)

// calledNames lists the functions a source line calls, in order.
func calledNames(code string) []string {
	if code == "" {
		return nil
	}
	var out []string
	for _, m := range callRe.FindAllStringSubmatch(code, 8) {
		switch m[1] {
		case "if", "for", "while", "return", "and", "or", "not", "in", "print", "len", "int", "str", "super", "isinstance", "getattr":
			continue
		}
		out = append(out, m[1])
	}
	return out
}

// InnermostLibrary returns the library of the innermost frame some library
// owns, and that frame.
func (m *FrameMap) InnermostLibrary(tb *facts.Traceback) (string, facts.Frame, bool) {
	if lib, i := m.InnermostLibraryFrame(tb); lib != nil {
		return lib.Library, tb.Frames[i], true
	}
	return "", facts.Frame{}, false
}

// InnermostLibraryFrame is the library of the innermost frame a library owns,
// and that frame's index. A fallback library (a model's own code, which
// every forward pass runs through) yields to a library further out: the
// capture or the kernel library that called it says more.
func (m *FrameMap) InnermostLibraryFrame(tb *facts.Traceback) (*FrameLibrary, int) {
	var fb *FrameLibrary
	at := -1
	for i := len(tb.Frames) - 1; i >= 0; i-- {
		lib := m.libraryOf(tb.Frames[i])
		switch {
		case lib == nil:
		case !lib.Fallback:
			return lib, i
		case fb == nil:
			fb, at = lib, i
		}
	}
	return fb, at
}
