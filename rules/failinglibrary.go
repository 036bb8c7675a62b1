package rules

import (
	"fmt"
	"path"

	"github.com/coroner-dev/coroner/parser/facts"
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
	// handing it to a caller's library.
	for i := len(tb.Frames) - 1; i >= 0; i-- {
		lib := idx.Frames.libraryOf(tb.Frames[i])
		if lib == nil {
			continue
		}
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
				Layer:      "library",
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
	for _, m := range idx.SigMatches {
		if !m.AfterShutdown && (m.Event == e || restOf(m, e)) {
			return true
		}
	}
	return false
}
