package derive

// The closed vocabulary (the README lists it). The string values are a contract: the
// JSON report and the fixture expectations speak them.

// Outcome is the state of the run.
type Outcome string

// Outcomes.
const (
	OutcomeReady      Outcome = "ready"
	OutcomeInProgress Outcome = "in-progress"
	OutcomeHung       Outcome = "hung"
	OutcomeCrashed    Outcome = "crashed"
	OutcomeSlow       Outcome = "slow"
	OutcomeUnknown    Outcome = "unknown"
)

// outcomePriority decides between the outcomes findings claim: a crash
// explains more than a hang, a hang more than slowness.
var outcomePriority = map[Outcome]int{
	OutcomeCrashed: 5, OutcomeHung: 4, OutcomeSlow: 3, OutcomeInProgress: 2, OutcomeReady: 1, OutcomeUnknown: 0,
}

// Priority ranks the outcome among those findings claim (see
// outcomePriority); 0 for one the taxonomy lacks, as for unknown.
func (o Outcome) Priority() int { return outcomePriority[o] }

// Valid reports an outcome of the taxonomy.
func (o Outcome) Valid() bool {
	_, ok := outcomePriority[o]
	return ok
}

// Phase is a stage of a server's life, in the order they happen.
type Phase string

// Phases, in startup order.
const (
	PhaseLaunch           Phase = "launch"
	PhaseDistributedInit  Phase = "distributed-init"
	PhaseWeightsLoading   Phase = "weights-loading"
	PhasePostWeights      Phase = "post-weights"
	PhaseKVCache          Phase = "kv-cache"
	PhaseTorchCompile     Phase = "torch-compile"
	PhaseCUDAGraphCapture Phase = "cuda-graph-capture"
	PhaseWarmup           Phase = "warmup"
	PhaseServing          Phase = "serving"
	PhaseShutdown         Phase = "shutdown"
)

// Phases lists the phases in order.
var Phases = []Phase{
	PhaseLaunch, PhaseDistributedInit, PhaseWeightsLoading, PhasePostWeights, PhaseKVCache,
	PhaseTorchCompile, PhaseCUDAGraphCapture, PhaseWarmup, PhaseServing, PhaseShutdown,
}

// Order returns the phase's position in startup order (-1 if unknown).
func (p Phase) Order() int {
	for i, q := range Phases {
		if q == p {
			return i
		}
	}
	return -1
}

// Category is a cause category.
type Category string

// Cause categories.
const (
	CatAttentionBackend   Category = "attention-backend"
	CatGPUArchUnsupported Category = "gpu-arch-unsupported"
	CatDependencyMismatch Category = "dependency-mismatch"
	CatJITCompile         Category = "jit-compile"
	CatNCCLP2P            Category = "nccl-p2p"
	CatCollectiveHang     Category = "collective-hang"
	CatSHMExhausted       Category = "shm-exhausted"
	CatGPUOOM             Category = "gpu-oom"
	CatKVCacheInsufficent Category = "kv-cache-insufficient"
	CatHostOOM            Category = "host-oom"
	CatSlowStorage        Category = "slow-storage"
	CatCUDAGraph          Category = "cuda-graph"
	CatGPUFault           Category = "gpu-fault"
	CatKernelBug          Category = "kernel-bug"
	CatConfig             Category = "config"
	CatSpecDecode         Category = "spec-decode"
	CatThroughput         Category = "throughput"
	CatPortInUse          Category = "port-in-use"
	CatUnknown            Category = "unknown"
)

// Categories lists every cause category.
var Categories = []Category{
	CatAttentionBackend, CatGPUArchUnsupported, CatDependencyMismatch, CatJITCompile, CatNCCLP2P,
	CatCollectiveHang, CatSHMExhausted, CatGPUOOM, CatKVCacheInsufficent, CatHostOOM, CatSlowStorage,
	CatCUDAGraph, CatGPUFault, CatKernelBug, CatConfig, CatSpecDecode, CatThroughput, CatPortInUse, CatUnknown,
}

// Valid reports whether c is in the taxonomy.
func (c Category) Valid() bool {
	for _, k := range Categories {
		if k == c {
			return true
		}
	}
	return false
}

// Severity ranks findings.
type Severity string

// Severities, most severe first.
const (
	SeverityCritical Severity = "critical"
	SeverityError    Severity = "error"
	SeverityWarning  Severity = "warning"
	SeverityInfo     Severity = "info"
)

// Rank orders severities: critical 3, error 2, warning 1, info 0, unknown -1.
func (s Severity) Rank() int {
	switch s {
	case SeverityCritical:
		return 3
	case SeverityError:
		return 2
	case SeverityWarning:
		return 1
	case SeverityInfo:
		return 0
	}
	return -1
}
