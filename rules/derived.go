// The derivation's names the rules and the packages that read package
// rules use (reports, packs, calibration, compare, the command): the
// derivation itself is package derive.

package rules

import "github.com/coroner-dev/coroner/rules/derive"

type (
	Acceptance    = derive.Acceptance
	BatchRate     = derive.BatchRate
	Category      = derive.Category
	DerivedRange  = derive.DerivedRange
	Evidence      = derive.Evidence
	FrameLibrary  = derive.FrameLibrary
	GPUInfo       = derive.GPUInfo
	Index         = derive.Index
	Outcome       = derive.Outcome
	Phase         = derive.Phase
	Placement     = derive.Placement
	Reading       = derive.Reading
	ReadingKind   = derive.ReadingKind
	RatePoint     = derive.RatePoint
	Running       = derive.Running
	RuntimeSeries = derive.RuntimeSeries
	Severity      = derive.Severity
	SigMatch      = derive.SigMatch
	Signature     = derive.Signature
	SourceProbe   = derive.SourceProbe
	Span          = derive.Span
	State         = derive.State
	Version       = derive.Version
	Wait          = derive.Wait
)

const (
	CatAttentionBackend   = derive.CatAttentionBackend
	CatCUDAGraph          = derive.CatCUDAGraph
	CatCollectiveHang     = derive.CatCollectiveHang
	CatConfig             = derive.CatConfig
	CatDependencyMismatch = derive.CatDependencyMismatch
	CatGPUArchUnsupported = derive.CatGPUArchUnsupported
	CatGPUFault           = derive.CatGPUFault
	CatGPUOOM             = derive.CatGPUOOM
	CatHostOOM            = derive.CatHostOOM
	CatJITCompile         = derive.CatJITCompile
	CatKVCacheInsufficent = derive.CatKVCacheInsufficent
	CatKernelBug          = derive.CatKernelBug
	CatNCCLP2P            = derive.CatNCCLP2P
	CatSHMExhausted       = derive.CatSHMExhausted
	CatSlowStorage        = derive.CatSlowStorage
	CatSpecDecode         = derive.CatSpecDecode
	CatThroughput         = derive.CatThroughput
	LayerClass            = derive.LayerClass
	OutcomeCrashed        = derive.OutcomeCrashed
	OutcomeHung           = derive.OutcomeHung
	OutcomeInProgress     = derive.OutcomeInProgress
	OutcomeReady          = derive.OutcomeReady
	OutcomeSlow           = derive.OutcomeSlow
	OutcomeUnknown        = derive.OutcomeUnknown
	PhaseCUDAGraphCapture = derive.PhaseCUDAGraphCapture
	PhaseDistributedInit  = derive.PhaseDistributedInit
	PhaseKVCache          = derive.PhaseKVCache
	PhaseLaunch           = derive.PhaseLaunch
	PhasePostWeights      = derive.PhasePostWeights
	PhaseServing          = derive.PhaseServing
	PhaseShutdown         = derive.PhaseShutdown
	PhaseTorchCompile     = derive.PhaseTorchCompile
	PhaseWarmup           = derive.PhaseWarmup
	PhaseWeightsLoading   = derive.PhaseWeightsLoading
	SeverityCritical      = derive.SeverityCritical
	SeverityError         = derive.SeverityError
	SeverityInfo          = derive.SeverityInfo
	SeverityWarning       = derive.SeverityWarning
	WaitCollective        = derive.WaitCollective
	WaitCompile           = derive.WaitCompile
	WaitGPU               = derive.WaitGPU
	WaitIdle              = derive.WaitIdle
	WaitLoad              = derive.WaitLoad

	ByBanner      = derive.ByBanner
	ByEnvReport   = derive.ByEnvReport
	ByImageTag    = derive.ByImageTag
	ByNCCLMention = derive.ByNCCLMention
	ByNCCLRuntime = derive.ByNCCLRuntime
	BySnapshot    = derive.BySnapshot
	BySystem      = derive.BySystem
)

var (
	BuiltinCatalog = derive.BuiltinCatalog
	Categories     = derive.Categories
	Derive         = derive.Derive
	Ev             = derive.Ev
	EnvReports     = derive.EnvReports
	EvProc         = derive.EvProc
	LastActivity   = derive.LastActivity
	LevelMisses    = derive.LevelMisses
	LineWatch      = derive.LineWatch
	ParseDerived   = derive.ParseDerived
	ParseVersion   = derive.ParseVersion
	Phases         = derive.Phases
	PointText      = derive.PointText
	ReadingsOf     = derive.ReadingsOf
	RootFailure    = derive.RootFailure
	RuntimeOf      = derive.RuntimeOf
	SameProcess    = derive.SameProcess
	ShutdownLine   = derive.ShutdownLine
	Workers        = derive.Workers
)
