// Package envpolicy says which environment variables matter, and to what:
// the report's environment section, coroner diff, the test of whether a
// dump is evidence of a run, collect, the environment report collect runs,
// and the sniffing of environment dumps. It is the one table of variable
// names and prefixes of the project; which variables hold secrets is
// internal/redact's policy (IsSecretName, Conceal), the other half.
//
// Each row of the table names the uses its variables serve, so that where
// two uses disagree (diff compares TORCHINDUCTOR_ variables, the report does
// not list them) it shows on one line, and aligning them is one edit.
package envpolicy

import "strings"

// Use is what a variable matters to. Uses combine: Report | Diff.
type Use uint8

// The uses, each with the package that asks.
const (
	// Report: the report's environment section lists the variable
	// (reports): it shapes how the GPU stack, NCCL or an engine behaves.
	Report Use = 1 << iota
	// Diff: coroner diff compares it between two runs (internal/compare).
	Diff
	// Evidence: a dump that sets it is evidence of a run, where a file of
	// NAME=value lines of other names is a config file (parser).
	Evidence
	// Collect: collect keeps it from the server's environment
	// (internal/collect); secret values among them are redacted when the
	// bundle is written.
	Collect
	// Probe: the environment report that collect runs gets it
	// (internal/collect): what it needs to find the server's packages and
	// libraries and the settings it prints, never a variable that loads
	// code by itself (LD_PRELOAD, PYTHONSTARTUP, PYTHONHOME, BASH_ENV).
	Probe
	// Sniff: a line that sets it makes a file look like a process's
	// environment (parser/envinfo).
	Sniff
	// Keep: a dump of more variables than parser/envinfo keeps as they
	// come still keeps it: what the report lists and the rules read.
	Keep

	lastUse = Keep
)

// rule is a row of the table: a prefix of names, or a whole name.
type rule struct {
	pattern string
	whole   bool // pattern is a whole name, not a prefix
	uses    Use
}

func prefix(p string, u Use) rule { return rule{pattern: p, uses: u} }
func name(n string, u Use) rule   { return rule{pattern: n, whole: true, uses: u} }

// table is the policy. A variable matters to a use when any row with that
// use covers it, so rows may overlap (TORCH covers TORCH_).
var table = []rule{
	// The GPU stack, NCCL and the engines.
	prefix("NCCL_", Report|Diff|Evidence|Collect|Probe|Sniff|Keep),
	prefix("CUDA_", Report|Diff|Evidence|Collect|Probe|Sniff|Keep),
	prefix("VLLM_", Report|Diff|Evidence|Collect|Probe|Sniff|Keep),
	prefix("SGLANG_", Report|Diff|Evidence|Collect|Probe|Sniff|Keep),
	prefix("SGL_", Report|Evidence|Collect|Probe|Keep),
	prefix("PYTORCH_", Report|Diff|Evidence|Collect|Probe|Sniff|Keep),
	prefix("TORCH_", Report|Diff|Evidence|Collect|Probe|Sniff|Keep),
	prefix("TORCHINDUCTOR_", Diff|Collect|Sniff),
	prefix("TORCH", Collect|Sniff), // TORCHDYNAMO_, TORCHELASTIC_ ...
	prefix("FLASHINFER_", Report|Evidence|Collect|Probe|Keep),
	prefix("TRITON_", Report|Evidence|Collect|Probe|Keep),
	prefix("NVSHMEM_", Report|Evidence|Collect|Keep),
	prefix("NVIDIA_", Report|Evidence|Collect|Sniff|Keep),
	prefix("HF_", Evidence|Collect|Sniff|Keep),
	prefix("LD_LIBRARY_PATH", Evidence|Collect|Keep),
	name("LD_PRELOAD", Keep), // also under Collect's LD_

	// What else collect keeps: models and tokenizers, distributed
	// launchers, thread pools, other accelerators' stacks, kernels'
	// libraries, the Python environment.
	prefix("HUGGING", Collect),
	prefix("TRANSFORMERS_", Collect),
	prefix("TOKENIZERS_", Collect),
	prefix("GLOO_", Collect),
	prefix("MASTER_", Collect),
	prefix("RAY_", Collect),
	prefix("UCX_", Collect),
	prefix("OMP_", Collect|Keep),
	prefix("MKL_", Collect),
	prefix("NVTE_", Collect),
	prefix("HIP_", Collect),
	prefix("ROCM_", Collect),
	prefix("HSA_", Collect),
	prefix("XLA_", Collect),
	prefix("DG_", Collect),
	prefix("DEEPGEMM_", Collect),
	prefix("CUTLASS_", Collect),
	prefix("LD_", Collect),
	prefix("PYTHON", Collect),
	prefix("VIRTUAL_ENV", Collect),
	prefix("CONDA_", Collect),
	name("RANK", Collect),
	name("LOCAL_RANK", Collect),
	name("WORLD_SIZE", Collect),
	name("LOCAL_WORLD_SIZE", Collect),
	name("MAX_JOBS", Collect),
	name("CC", Collect),
	name("CXX", Collect),
	name("TZ", Collect),

	// The shell's own, and what the environment report needs to find
	// the server's Python and libraries.
	name("PATH", Collect|Probe|Sniff|Keep),
	name("HOME", Collect|Probe|Sniff),
	name("USER", Collect|Probe|Sniff),
	name("HOSTNAME", Collect|Sniff),
	name("PWD", Sniff),
	name("SHELL", Sniff),
	name("LOGNAME", Probe),
	name("LANG", Probe),
	name("LD_LIBRARY_PATH", Probe|Sniff),
	name("PYTHONPATH", Probe|Keep),
	name("VIRTUAL_ENV", Probe),
	name("CONDA_PREFIX", Probe),
	name("CONDA_DEFAULT_ENV", Probe),
	name("HF_HOME", Probe),
}

// byUse is the table split per use, for lookups as fast as the lists it
// replaced.
var byUse = func() map[Use]*set {
	m := map[Use]*set{}
	for u := Report; u <= lastUse; u <<= 1 {
		s := &set{names: map[string]bool{}}
		for _, r := range table {
			switch {
			case r.uses&u == 0:
			case r.whole:
				s.names[r.pattern] = true
			default:
				s.prefixes = append(s.prefixes, r.pattern)
			}
		}
		m[u] = s
	}
	return m
}()

type set struct {
	prefixes []string
	names    map[string]bool
}

func (s *set) has(name string) bool {
	if s.names[name] {
		return true
	}
	for _, p := range s.prefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// Matters reports whether the variable name matters to every use in u
// (one use, usually).
func Matters(name string, u Use) bool {
	if u == 0 {
		return false
	}
	for b := Report; b <= lastUse; b <<= 1 {
		if u&b != 0 && !byUse[b].has(name) {
			return false
		}
	}
	return true
}

// SetsSniffed reports whether an assignment line (NAME=value, what
// follows an export or declare) sets a variable that makes its file look
// like an environment dump. A line without "=" counts for prefixes alone:
// a value that went on past its line may still start with a name.
func SetsSniffed(line string) bool {
	s := byUse[Sniff]
	name, _, assigns := strings.Cut(line, "=")
	if assigns && s.names[name] {
		return true
	}
	for _, p := range s.prefixes {
		if strings.HasPrefix(line, p) {
			return true
		}
	}
	return false
}
