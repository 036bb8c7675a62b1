package facts

import (
	"encoding/json"
	"time"
)

// Val is a number that may be absent: nvidia-smi prints N/A, [Not Supported]
// and ERR! where a value is unknown, and a rule must tell 0 from unknown.
type Val struct {
	V  float64
	OK bool
}

// V returns a present value.
func V(x float64) Val { return Val{V: x, OK: true} }

// MarshalJSON renders an absent value as null.
func (v Val) MarshalJSON() ([]byte, error) {
	if !v.OK {
		return []byte("null"), nil
	}
	return json.Marshal(v.V)
}

// GPUSnapshot is one nvidia-smi capture (-q, -q -x, a CSV query, the table,
// one dmon/pmon sample).
type GPUSnapshot struct {
	Src Source `json:"src"`

	// Host is the node it was taken on, when the bundle holds several
	// (set by parser/runs).
	Host string `json:"host,omitempty"`

	At     time.Time `json:"at,omitzero"`
	AtFrom string    `json:"at_from,omitempty"`
	Format Kind      `json:"format"`
	Driver string    `json:"driver,omitempty"`
	CUDA   string    `json:"cuda,omitempty"`
	GPUs   []*GPU    `json:"gpus"`
	// Procs are the compute processes (Processes block, --query-compute-apps, pmon).
	Procs []*GPUProcess `json:"procs,omitempty"`
	// ProcsListed is set when the dump lists processes, so that an empty
	// Procs means "none" (a --query-gpu CSV or a -d selection lists none).
	ProcsListed bool `json:"procs_listed,omitempty"`
	// Incomplete is set when the dump stopped in the middle (a hung nvidia-smi).
	Incomplete bool `json:"incomplete,omitempty"`
	// OmittedGPUs and OmittedProcs count the GPUs and processes read but
	// not kept, past nvsmi.MaxGPUs and nvsmi.MaxGPUProcs.
	OmittedGPUs  int `json:"omitted_gpus,omitempty"`
	OmittedProcs int `json:"omitted_procs,omitempty"`
	// Errors are the failures nvidia-smi printed instead of data ("Unable to
	// determine the device handle for GPU ...: GPU is lost", "No devices were
	// found", "NVIDIA-SMI has failed because it couldn't communicate with the
	// NVIDIA driver"): evidence of a sick GPU or driver, not parse problems.
	Errors []*GPUError `json:"errors,omitempty"`
}

// GPUError is one failure line nvidia-smi printed.
type GPUError struct {
	Src Source `json:"src"`
	// BusID is the GPU the line names (normalized), "" if none.
	BusID string `json:"bus_id,omitempty"`
	Text  string `json:"text"`
}

// GPU is one GPU in one snapshot.
type GPU struct {
	Src   Source `json:"src"`
	Index int    `json:"index"`            // -1 when the format gives none
	BusID string `json:"bus_id,omitempty"` // normalized domain:bus:device.fn, lower case, 8-digit domain
	UUID  string `json:"uuid,omitempty"`
	Name  string `json:"name,omitempty"`
	// Arch is the architecture name (Hopper, Blackwell ...); CC the compute
	// capability "9.0". CCFrom is "dump" when printed, "name" when derived from
	// the product name with the GPU table.
	Arch   string `json:"arch,omitempty"`
	CC     string `json:"cc,omitempty"`
	CCFrom string `json:"cc_from,omitempty"`

	MemTotalMiB Val    `json:"mem_total_mib"`
	MemUsedMiB  Val    `json:"mem_used_mib"`
	UtilGPU     Val    `json:"util_gpu"` // percent
	UtilMem     Val    `json:"util_mem"`
	TempC       Val    `json:"temp_c"`
	PowerW      Val    `json:"power_w"`
	PowerLimitW Val    `json:"power_limit_w"`
	SMClockMHz  Val    `json:"sm_clock_mhz"`
	MemClockMHz Val    `json:"mem_clock_mhz"`
	PState      string `json:"pstate,omitempty"`
	// ClockReasons are the active clock event (throttle) reasons, by name.
	ClockReasons []string `json:"clock_reasons,omitempty"`

	ECCVolatileUncorr   Val  `json:"ecc_volatile_uncorrected"`
	ECCAggregateUncorr  Val  `json:"ecc_aggregate_uncorrected"`
	RetiredPagesPending bool `json:"retired_pages_pending,omitempty"`
	RemapFailure        bool `json:"remap_failure,omitempty"`
	RemapPending        bool `json:"remap_pending,omitempty"`
	ResetRequired       bool `json:"reset_required,omitempty"`
	DrainRecommended    bool `json:"drain_recommended,omitempty"`

	PCIeGenCur   Val `json:"pcie_gen_cur"`
	PCIeGenMax   Val `json:"pcie_gen_max"`
	PCIeWidthCur Val `json:"pcie_width_cur"`
	PCIeWidthMax Val `json:"pcie_width_max"`

	MIG     bool   `json:"mig,omitempty"`
	Persist string `json:"persistence,omitempty"` // Enabled, Disabled

	// ComputeMode is Default, Exclusive_Process or Prohibited (the table's
	// "E. Process" is stored as Exclusive_Process).
	ComputeMode string `json:"compute_mode,omitempty"`
	// SMClockMaxMHz is the maximum SM clock, to measure clock reduction.
	SMClockMaxMHz Val `json:"sm_clock_max_mhz"`
	// PCIeReplays is "Replays Since Reset": a count above 0 points to PCIe
	// signal problems.
	PCIeReplays Val `json:"pcie_replays"`
	// RecoveryAction is "GPU Recovery Action" (R580+), e.g. None; it replaced
	// GPU Reset Status. ResetRequired/DrainRecommended are set from it too.
	RecoveryAction string `json:"recovery_action,omitempty"`
	// ClockEventsUS are the clock event reason counters (cumulative
	// microseconds since driver load) by reason name: sw_power_cap,
	// sync_boost, sw_thermal_slowdown, hw_thermal_slowdown,
	// hw_power_brake_slowdown. The after-the-fact throttling evidence.
	ClockEventsUS map[string]float64 `json:"clock_events_us,omitempty"`
	// FabricState and FabricStatus are the NVSwitch fabric's registration
	// (Completed/Success when healthy on HGX; In Progress, Not Started ...).
	FabricState  string `json:"fabric_state,omitempty"`
	FabricStatus string `json:"fabric_status,omitempty"`
	// RetiredPagesDBE is the count of pages retired for double-bit ECC
	// errors (pre-Ampere); RemappedRowsUncorr the rows remapped for
	// uncorrectable errors (A100 and later, HBM parts).
	RetiredPagesDBE    Val `json:"retired_pages_dbe"`
	RemappedRowsUncorr Val `json:"remapped_rows_uncorrectable"`
	// ReadErrors names the fields nvidia-smi printed as ERR!, Unknown Error or
	// GPU is lost for this GPU ("fan", "temperature/gpu current temp" ...).
	ReadErrors []string `json:"read_errors,omitempty"`
}

// GPUProcess is a process holding a GPU.
type GPUProcess struct {
	Src    Source `json:"src"`
	GPU    int    `json:"gpu"` // index, -1 unknown
	BusID  string `json:"bus_id,omitempty"`
	UUID   string `json:"uuid,omitempty"`
	PID    int    `json:"pid"`
	Type   string `json:"type,omitempty"` // C, G, C+G
	Name   string `json:"name"`
	MemMiB Val    `json:"mem_mib"`
	SMUtil Val    `json:"sm_util"`
}

// Topology is `nvidia-smi topo -m`.
type Topology struct {
	Src Source `json:"src"`
	// GPUs are the GPU labels in header order ("GPU0" ...).
	GPUs []string `json:"gpus"`
	// Links[i][j] is the link between GPU i and j: X, NV#, PIX, PXB, PHB, NODE, SYS.
	Links [][]string `json:"links"`
	// NICs are the NIC labels, if any.
	NICs []string `json:"nics,omitempty"`
	// NICLinks[i][j] is the link between GPU i and NIC j.
	NICLinks [][]string `json:"nic_links,omitempty"`
	// NICDevices are the device names of the NICs ("mlx5_0"), from the NIC
	// legend or the labels themselves on older drivers; "" when unknown.
	NICDevices []string `json:"nic_devices,omitempty"`
	// CPUAffinity and NUMAAffinity are the columns of the same names, per GPU
	// ("0-31", "0"); nil when the matrix has none.
	CPUAffinity  []string `json:"cpu_affinity,omitempty"`
	NUMAAffinity []string `json:"numa_affinity,omitempty"`
}

// NVLinked reports whether any pair of distinct GPUs is connected by NVLink.
func (t *Topology) NVLinked() bool {
	for i, row := range t.Links {
		for j, l := range row {
			if i != j && len(l) >= 2 && l[:2] == "NV" {
				return true
			}
		}
	}
	return false
}

// GPUListEntry is one line of `nvidia-smi -L`.
type GPUListEntry struct {
	Src   Source `json:"src"`
	Index int    `json:"index"`
	Name  string `json:"name"`
	UUID  string `json:"uuid"`
	// Arch and CC come from the product name (the list prints nothing else).
	Arch string `json:"arch,omitempty"`
	CC   string `json:"cc,omitempty"`
}
