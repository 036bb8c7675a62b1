package rules

import (
	"fmt"
	"path"
	"strings"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/rules/derive"
)

func init() { Register(failingLibraryRule) }

var failingLibraryRule = &Rule{
	ID:       "failing-library",
	Title:    "the library the failure was raised in",
	Severity: SeverityWarning,
	Needs:    []facts.Kind{facts.KindSGLangLog, facts.KindVLLMLog, facts.KindServerLog},
	Doc: `The third layer of diagnosis, for a failure that no signature and no class
of error explains (a paste cut before its exception line, a message nobody
catalogued): the library that owns the innermost frames of its traceback
suggests the cause. A failure inside flashinfer or an attention backend is
most often the backend not fitting the GPU or the model; inside Triton,
DeepGEMM or torch's Inductor, a kernel that did not compile; in a CUDA graph
runner, the capture; in NCCL's Python wrappers or a custom all-reduce, the
GPUs' peer-to-peer path; in a model loader, the checkpoint not fitting the
configuration; in a quantization method, a scheme the GPU or the checkpoint
does not support (catalog/frames.yaml, "suggests").

A failure whose phase makes the cause plain also counts here: one during
CUDA graph capture or torch.compile that nothing explains is the step's own.

Below that, when the traceback names no library that suggests a cause, its
exception's type alone: a ValueError, NotImplementedError, AssertionError or
KeyError raised at the engine is how Python code rejects what it was given,
most often a setting, a model or a checkpoint the engine does not support
(config). That reading is a fallback: the report drops it when any other
finding names a cause.

These are weak readings, below the signatures and classes: the rule says
nothing when either names a cause of the failure, and what it suggests is
weighed by its measured precision.`,
	Run: runFailingLibrary,
}

func runFailingLibrary(p *Pass) {
	idx, st := p.Index, &p.Index.State
	root := RootFailure(st)
	if root == nil || explainedFailure(idx, root) {
		return
	}
	reported := map[Category]bool{}
	// The phase: a failure of the capture or of torch.compile that nothing
	// explains is the step's own (engines capture with code paths used
	// nowhere else; compilation fails in its own stack).
	if l := logOf(idx, root); l != nil {
		switch pl := idx.PlaceFailure(l, root); pl.Phase {
		case PhaseCUDAGraphCapture:
			reported[CatCUDAGraph] = true
			p.Report(Finding{
				Title:      "CUDA graph capture failed",
				Severity:   SeverityError,
				Category:   CatCUDAGraph,
				Message:    fmt.Sprintf("The first failure (%s) happened while capturing CUDA graphs (%s), and no known signature explains it: capture runs the model's forward pass with graph-specific code paths (attention metadata, padded batches) that serving without graphs does not use.", root.Src, pl.Why),
				Remedy:     "Confirm by starting without graphs (SGLang --disable-cuda-graph, vLLM --enforce-eager): if that works, lower --cuda-graph-max-bs / --max-cudagraph-capture-size or try another attention backend, and report the traceback upstream with the versions.",
				Evidence:   []Evidence{{Src: root.Src, Text: trimText(failureText(root), 200)}},
				Confidence: 0.6,
				Cause:      true,
				Layer:      "phase",
				Signature:  string(PhaseCUDAGraphCapture),
				Why:        "the crash happened inside graph capture",
			})
		case PhaseTorchCompile:
			reported[CatJITCompile] = true
			p.Report(Finding{
				Title:      "torch.compile failed",
				Category:   CatJITCompile,
				Message:    fmt.Sprintf("The first failure (%s) happened during torch.compile (%s), and nothing in the bundle says more: a failure there is the compilation's own (Dynamo, Inductor, Triton, the compiler toolchain).", root.Src, pl.Why),
				Remedy:     "Confirm by disabling compilation (vLLM --enforce-eager or -O0); clear the compile caches and check that torch is the version the engine pins.",
				Evidence:   []Evidence{{Src: root.Src, Text: trimText(failureText(root), 200)}},
				Confidence: 0.45,
				Cause:      true,
				Layer:      "phase",
				Signature:  string(PhaseTorchCompile),
				Why:        "the failure happened while compiling, and no message explains it",
			})
		}
	}
	tb := root.Traceback
	if tb == nil {
		return
	}
	n := len(p.findings)
	defer func() {
		if len(p.findings) == n && len(reported) == 0 {
			reportExceptionType(p, root)
		}
	}()
	// The step it failed in: some steps exist to find out one thing (a
	// warm-up that runs the largest batch to see whether memory suffices).
	if step, f := idx.Frames.TracebackStep(tb); step != nil {
		for _, sg := range step.Suggests {
			if reported[sg.Category] {
				continue
			}
			reported[sg.Category] = true
			p.Report(Finding{
				Title:      fmt.Sprintf("a failure in the engine's %s step (%s in %s)", step.Phase, f.Func, path.Base(f.File)),
				Category:   sg.Category,
				Message:    fmt.Sprintf("The first failure (%s) was raised in %s (%s:%d), the engine's %s step, and nothing in the bundle says more about it: failures there are most often %s.", root.Src, f.Func, path.Base(f.File), f.Line, step.Phase, sg.Category),
				Remedy:     "Find the exception line of this traceback (the full log, not the excerpt): it decides the cause.",
				Evidence:   []Evidence{{Src: root.Src, Text: fmt.Sprintf("raised in %s (%s:%d)", f.Func, path.Base(f.File), f.Line)}},
				Confidence: sg.Confidence,
				Cause:      true,
				Layer:      "step",
				Signature:  f.Func,
				Why:        fmt.Sprintf("the failure was raised in the %s step, and no message explains it", f.Func),
			})
		}
	}
	// The innermost library is the code that raised; the libraries further
	// out only called it. One that suggests nothing (the rest of
	// torch.distributed, Ray) leaves the failure unexplained, rather than
	// handing it to a caller's library; a fallback one (a model's own
	// code) yields to a library further out (derive.FrameMap.InnermostLibraryFrame).
	if lib, i := idx.Frames.InnermostLibraryFrame(tb); lib != nil {
		if len(lib.Suggests) == 0 {
			return
		}
		f := tb.Frames[i]
		ev := Evidence{Src: root.Src, Text: fmt.Sprintf("raised in %s (%s:%d), %s's code", f.Func, path.Base(f.File), f.Line, lib.Library)}
		for _, sg := range lib.Suggests {
			if reported[sg.Category] {
				continue
			}
			p.Report(Finding{
				Title:      fmt.Sprintf("a failure inside %s", lib.Library),
				Category:   sg.Category,
				Message:    fmt.Sprintf("The first failure (%s) was raised inside %s (%s:%d), and nothing in the bundle says more about it: failures there are most often %s.", root.Src, lib.Library, path.Base(f.File), f.Line, sg.Category),
				Remedy:     "Find the exception line of this traceback (the full log, not the excerpt): it decides the cause.",
				Evidence:   []Evidence{ev},
				Confidence: sg.Confidence,
				Cause:      true,
				Layer:      libraryLayer(lib),
				Signature:  lib.Library,
				Why:        fmt.Sprintf("the failure was raised in %s's code, and no message explains it", lib.Library),
			})
		}
		if tb.ExcType == "" {
			p.Missing("the exception line of the traceback at "+root.Src.String(), "what the failure inside "+lib.Library+" said")
		}
		return
	}
}

// explainedFailure reports a signature or a class that says what the
// failure, or the rest of its message, was.
func explainedFailure(idx *Index, e *facts.LogEvent) bool {
	exc := 0
	if e.Traceback != nil {
		exc = e.Traceback.ExcLine
	}
	for _, m := range idx.SigMatches {
		if m.AfterShutdown {
			continue
		}
		// The same record (vLLM's "EngineCore failed to start" and its
		// traceback are two events of one line), or its exception line.
		same := m.Event == e || m.Event != nil && m.Event.Src == e.Src || exc > 0 && m.Src.File == e.Src.File && m.Src.Line == exc
		if same || derive.RestOf(m, e) {
			return true
		}
	}
	return false
}

// exceptionTypes is what a Python exception's type alone says, for a
// failure nothing else explains: the built-in types an engine raises when
// it rejects what it was given (Python's documentation: ValueError for
// "an argument that has the right type but an inappropriate value",
// NotImplementedError for what the code does not support, KeyError for a
// key a mapping lacks, as a model's config the engine does not know;
// engines assert their settings' combinations; a NameError, below). Read only when no
// signature, class, step or library names a cause; its confidence is the
// measured one (calibration.json), this the prior.
var exceptionTypes = map[string]struct {
	cat  Category
	conf float64
	what string
}{
	"ValueError":          {CatConfig, 0.3, "a value the engine does not accept: most often a setting, or a model or checkpoint it does not support"},
	"NotImplementedError": {CatConfig, 0.3, "something the engine does not implement for this setting, model or GPU"},
	"AssertionError":      {CatConfig, 0.25, "an assertion of the engine's code: most often a combination of settings it does not support"},
	"KeyError":            {CatConfig, 0.25, "a key the engine looked up and did not find: most often a model configuration or checkpoint it does not know"},
	// Engines import optional kernels inside try/except and call them
	// later: a name that is not defined at the call is an import that
	// failed, a package missing or of another version.
	"NameError": {CatDependencyMismatch, 0.3, "a name the engine's code expected to have imported: an optional kernel package missing or of another version"},
}

// reportExceptionType reports what the root failure's exception type
// suggests, when it is one of exceptionTypes.
func reportExceptionType(p *Pass, root *facts.LogEvent) {
	tb := root.Traceback
	if tb == nil || tb.ExcType == "" {
		return
	}
	t := tb.ExcType
	if k := strings.LastIndexByte(t, '.'); k >= 0 {
		t = t[k+1:]
	}
	x, ok := exceptionTypes[t]
	if !ok {
		return
	}
	p.Report(Finding{
		Title:      fmt.Sprintf("the engine raised %s: %s", t, x.what),
		Category:   x.cat,
		Message:    fmt.Sprintf("The first failure (%s) is a %s, and nothing in the bundle says more about it: %s.", root.Src, t, x.what),
		Remedy:     "Read the exception's message for the setting or the model property it names, and check it against the engine's documentation for this version (its supported models, quantizations and flags).",
		Evidence:   []Evidence{{Src: facts.Source{File: root.Src.File, Line: max(tb.ExcLine, root.Src.Line)}, Text: trimText(tb.ExcType+": "+tb.ExcMsg, 200)}},
		Confidence: x.conf,
		Cause:      true,
		Layer:      LayerFallback,
		Signature:  t,
		Why:        fmt.Sprintf("the failure is a %s and nothing else explains it", t),
	})
}

// libraryLayer is the layer a library's suggestions count in.
func libraryLayer(lib *FrameLibrary) string {
	if lib.Fallback {
		return LayerFallback
	}
	return LayerLibrary
}
