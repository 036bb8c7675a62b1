package kernlog

import (
	"regexp"
	"strconv"
)

// Severity is the analyzer's classification of an Xid. It is derived from
// NVIDIA's resolution buckets and cause matrix, not printed by NVIDIA.
type Severity string

// Severities, worst first.
const (
	SevCritical Severity = "critical" // the GPU needs a reset, a reboot or service
	SevError    Severity = "error"    // the application that hit it must restart
	SevWarning  Severity = "warning"  // a symptom or a pending condition; look for its cause
	SevInfo     Severity = "info"
)

// XidEntry is what NVIDIA's Xid catalog says about one code, plus the
// analyzer's reading of it.
type XidEntry struct {
	Code int
	// Name is the catalog mnemonic (ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS).
	Name    string
	Meaning string
	// Immediate and Investigate are the catalog's resolution buckets
	// (RESTART_APP, RESET_GPU, RESTART_BM, WORKFLOW_XID_48 ...).
	Immediate   string
	Investigate string
	// Causes are the older cause matrix's columns: HW hardware, Drv driver,
	// App user application, Mem system memory, Bus bus error, Th thermal,
	// FB framebuffer corruption.
	Causes   []string
	Severity Severity
	// Action says in plain words what to do.
	Action string
	// Secondary marks codes that usually follow another Xid and are
	// attributed to it (look for the first Xid of the burst).
	Secondary bool
	// Hardware marks codes whose usual cause is a failing part.
	Hardware bool
}

// XidInfo returns the catalog entry of an Xid code.
func XidInfo(code int) (XidEntry, bool) {
	e, ok := xidByCode[code]
	return e, ok
}

// XidCodes lists the codes the catalog knows, ascending.
func XidCodes() []int {
	out := make([]int, 0, len(xidCatalog))
	for _, e := range xidCatalog {
		out = append(out, e.Code)
	}
	return out
}

var allCauses = []string{"HW", "Drv", "App", "Mem", "Bus", "Th", "FB"}

// xidCatalog is NVIDIA's Xid catalog (resolution buckets extracted 2025-10-29)
// and the older cause matrix (r555, 2024-09-24), as summarized in the
// project's research notes (shared/research/snapshots.md §3.2). Keep it
// sorted by code.
var xidCatalog = []XidEntry{
	{Code: 8, Name: "ROBUST_CHANNEL_FIFO_ERROR_IDLE_TIMEOUT", Meaning: "GPU stopped processing",
		Immediate: "RESTART_APP", Investigate: "CONTACT_SUPPORT", Causes: []string{"Drv", "App", "Bus", "Th"},
		Severity: SevError, Action: "Restart the application; if it repeats, check the driver, PCIe link and cooling."},
	{Code: 13, Name: "ROBUST_CHANNEL_GR_EXCEPTION", Meaning: "Graphics engine exception (SM warp exception: illegal or misaligned address, illegal instruction)",
		Immediate: "RESTART_APP", Investigate: "WORKFLOW_XID_13", Causes: allCauses,
		Severity: SevError, Action: "Usually a bug in a CUDA kernel (out-of-bounds access): restart the application and suspect the kernel library it ran (attention backend, custom ops). If it repeats on one GPU across applications, run DCGM diagnostics."},
	{Code: 31, Name: "ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT", Meaning: "GPU memory page fault (MMU fault)",
		Immediate: "RESTART_APP", Investigate: "WORKFLOW_XID_31", Causes: []string{"HW", "Drv", "App"},
		Severity: SevError, Action: "Usually an application bug (illegal address): restart the application. Repeats on the same GPU across applications point to hardware (DCGM diagnostics); repeats across GPUs to the application or CUDA stack."},
	{Code: 32, Name: "ROBUST_CHANNEL_PBDMA_ERROR", Meaning: "Invalid or corrupted push buffer stream",
		Immediate: "RESTART_APP", Investigate: "CHECK_APP/CUDA", Causes: []string{"Drv", "Mem", "Bus", "Th", "FB"},
		Severity: SevError, Action: "Restart the application; most often a PCIe signal quality problem: check the slot, riser and PCIe link errors."},
	{Code: 38, Name: "FECS_ERR_WATCHDOG_TIMEOUT", Meaning: "Driver firmware error",
		Immediate: "IGNORE", Investigate: "CONTACT_SUPPORT", Causes: []string{"Drv"},
		Severity: SevError, Action: "Driver firmware error: update the driver; report it if it repeats."},
	{Code: 43, Name: "ROBUST_CHANNEL_RESETCHANNEL_VERIF_ERROR", Meaning: "GPU stopped processing (a channel was reset after a fault)",
		Immediate: "IGNORE", Investigate: "CONTACT_SUPPORT", Causes: []string{"Drv", "App"},
		Severity: SevWarning, Secondary: true, Action: "Usually follows an Xid 13 or 31 of the killed application: look at that one."},
	{Code: 44, Name: "ROBUST_CHANNEL_GR_FAULT_DURING_CTXSW", Meaning: "Graphics engine fault during context switch",
		Immediate: "IGNORE", Investigate: "CONTACT_SUPPORT", Causes: []string{"Drv"},
		Severity: SevError, Action: "Driver fault during a context switch: update the driver; report it if it repeats."},
	{Code: 45, Name: "ROBUST_CHANNEL_PREEMPTIVE_REMOVAL", Meaning: "Preemptive cleanup due to previous errors",
		Immediate: "WORKFLOW_XID_45", Investigate: "Solo: RESTART_FM; Not Solo: IGNORE (follow other Xid)", Causes: []string{"Drv", "App"},
		Severity: SevWarning, Secondary: true, Action: "A symptom: attribute it to the Xid before it (also logged when a process using the GPU is killed). Alone on an NVSwitch system it can mean Fabric Manager died: restart it."},
	{Code: 46, Name: "ROBUST_CHANNEL_GPU_TIMEOUT_ERROR", Meaning: "GPU stopped processing",
		Immediate: "RESET_GPU", Investigate: "CONTACT_SUPPORT", Causes: []string{"Drv"},
		Severity: SevCritical, Action: "Reset the GPU (nvidia-smi -r or reboot); report it if it repeats."},
	{Code: 48, Name: "ROBUST_CHANNEL_GPU_ECC_DBE", Meaning: "Double-bit ECC error (uncorrectable memory error)",
		Immediate: "WORKFLOW_XID_48", Causes: []string{"HW"},
		Severity: SevCritical, Hardware: true, Action: "Uncorrectable memory error: followed by Xid 63/64, drain the GPU and reset it to apply the row remap; without them, run field diagnostics. Check nvidia-smi -q Remapped Rows."},
	{Code: 54, Name: "SILENT_RUNNING_PWR_REDUCED_CLOCKING", Meaning: "Auxiliary power not connected",
		Immediate: "CHECK_MECHANICALS", Investigate: "CONTACT_SUPPORT",
		Severity: SevError, Hardware: true, Action: "Check the GPU's auxiliary power cables."},
	{Code: 61, Name: "PMU_BREAKPOINT", Meaning: "Internal micro-controller breakpoint or warning",
		Immediate: "CONTACT_SUPPORT", Causes: nil,
		Severity: SevCritical, Action: "Reset the GPU and report it to NVIDIA."},
	{Code: 62, Name: "PMU_HALT_ERROR", Meaning: "Internal micro-controller halt",
		Immediate: "RESET_GPU", Investigate: "CONTACT_SUPPORT", Causes: []string{"HW", "Drv", "Th"},
		Severity: SevCritical, Action: "Reset the GPU; often the first event of a hang cascade (62, 45, 119, 154)."},
	{Code: 63, Name: "INFOROM_DRAM_RETIREMENT_EVENT", Meaning: "ECC page retirement or row-remapping recording event",
		Immediate: "IGNORE", Investigate: "IGNORE", Causes: []string{"HW", "Drv", "FB"},
		Severity: SevWarning, Hardware: true, Action: "A row remap is pending until the GPU is reset: restart the application and reset the GPU when convenient."},
	{Code: 64, Name: "INFOROM_DRAM_RETIREMENT_FAILURE", Meaning: "Page retirement or row-remapper recording failure",
		Immediate: "RESET_GPU", Investigate: "CONTACT_SUPPORT", Causes: []string{"HW", "Drv"},
		Severity: SevCritical, Hardware: true, Action: "Reboot; if it repeats the GPU needs service (RMA)."},
	{Code: 68, Name: "ROBUST_CHANNEL_NVDEC0_ERROR", Meaning: "NVDEC0 (video decoder) exception",
		Immediate: "RESTART_APP", Investigate: "CONTACT_SUPPORT", Causes: []string{"HW", "Drv", "App"},
		Severity: SevError, Action: "Restart the application (video decoding of multimodal input)."},
	{Code: 69, Name: "ROBUST_CHANNEL_GR_CLASS_ERROR", Meaning: "Graphics engine class error",
		Immediate: "RESTART_APP", Investigate: "CHECK_APP/CUDA", Causes: []string{"HW", "Drv"},
		Severity: SevError, Action: "Restart the application; check the CUDA stack if it repeats."},
	{Code: 74, Name: "NVLINK_ERROR", Meaning: "NVLink error (GPU to GPU or NVSwitch link)",
		Immediate: "WORKFLOW_NVLINK_ERR", Investigate: "CONTACT_SUPPORT", Causes: []string{"HW", "Drv", "Bus"},
		Severity: SevCritical, Hardware: true, Action: "Reset the GPU or reboot; check nvidia-smi nvlink -s. May be sympathetic: the GPU at the other end of the link may be the one that failed."},
	{Code: 79, Name: "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS", Meaning: "GPU has fallen off the bus (not reachable over PCIe)",
		Immediate: "RESTART_BM", Investigate: "CONTACT_SUPPORT", Causes: []string{"HW", "Drv", "Mem", "Bus", "Th"},
		Severity: SevCritical, Hardware: true, Action: "The GPU is gone until the machine reboots: reboot, then check PCIe link, riser, power and temperature; replace the GPU if it repeats."},
	{Code: 80, Name: "PBDMA_PUSHBUFFER_CRC_MISMATCH", Meaning: "Corrupted data sent to the GPU",
		Immediate: "RESTART_APP", Investigate: "CHECK_APP/CUDA", Causes: []string{"HW", "Drv", "Mem", "Bus", "FB"},
		Severity: SevError, Action: "Restart the application; check PCIe and system memory if it repeats."},
	{Code: 92, Name: "EXCESSIVE_SBE_INTERRUPTS", Meaning: "High single-bit ECC error rate",
		Immediate: "IGNORE", Investigate: "CONTACT_SUPPORT", Causes: []string{"HW", "Drv"},
		Severity: SevWarning, Hardware: true, Action: "Watch the ECC counters; plan service if the rate grows."},
	{Code: 94, Name: "ROBUST_CHANNEL_CONTAINED_ERROR", Meaning: "Contained uncorrectable memory error",
		Immediate: "RESTART_APP", Investigate: "IGNORE (sympathetic)", Causes: []string{"HW", "Drv", "FB"},
		Severity: SevError, Hardware: true, Action: "Only the application that hit it must restart; reset the GPU when convenient to apply the pending row remap."},
	{Code: 95, Name: "ROBUST_CHANNEL_UNCONTAINED_ERROR", Meaning: "Uncontained memory error",
		Immediate: "RESET_GPU", Investigate: "IGNORE (sympathetic)", Causes: []string{"HW", "Drv", "FB"},
		Severity: SevCritical, Hardware: true, Action: "Every application on the GPU is affected: reset the GPU (with MIG, drain the other instances first)."},
	{Code: 109, Name: "ROBUST_CHANNEL_CTXSW_TIMEOUT_ERROR", Meaning: "Context switch timeout",
		Immediate: "RESET_GPU", Investigate: "CONTACT_SUPPORT", Causes: allCauses,
		Severity: SevCritical, Action: "Reset the GPU; often comes with Xid 13 in a hung kernel."},
	{Code: 110, Name: "SEC_FAULT_ERROR", Meaning: "Security fault",
		Immediate: "RESET_GPU", Investigate: "INVESTIGATE_SW", Causes: []string{"HW"},
		Severity: SevCritical, Hardware: true, Action: "Reset the GPU; service it if it repeats."},
	{Code: 119, Name: "GSP_RPC_TIMEOUT", Meaning: "GSP firmware RPC timeout",
		Immediate: "RESET_GPU", Investigate: "INVESTIGATE_SW", Causes: []string{"HW", "Drv", "Mem", "Bus", "Th", "FB"},
		Severity: SevCritical, Action: "The GPU is usually wedged: reset it or reboot. Known driver bugs cause it: check the driver version."},
	{Code: 120, Name: "GSP_ERROR", Meaning: "GSP firmware error",
		Immediate: "RESET_GPU", Investigate: "INVESTIGATE_SW", Causes: []string{"HW", "Drv", "Mem", "Bus", "Th", "FB"},
		Severity: SevCritical, Action: "Reset the GPU or reboot; check the driver version."},
	{Code: 121, Name: "C2C_ERROR", Meaning: "C2C (chip-to-chip, Grace to GPU) link error",
		Immediate: "IGNORE", Investigate: "CONTACT_SUPPORT", Causes: []string{"HW", "Bus"},
		Severity: SevError, Hardware: true, Action: "Grace-Hopper/Blackwell only: report it if it repeats."},
	{Code: 136, Name: "ALI_TRAINING_FAIL", Meaning: "Link training failed",
		Immediate: "RESET_GPU", Investigate: "INVESTIGATE_LINK_SI",
		Severity: SevCritical, Hardware: true, Action: "Reset the GPU; investigate the link's signal integrity."},
	{Code: 137, Name: "NVLINK_PRIV_ERR", Meaning: "NVLink (FLA) privilege error",
		Immediate: "IGNORE", Investigate: "XID_137_FLOW", Causes: []string{"App"},
		Severity: SevError, Action: "An application or configuration error on the NVLink fabric."},
	{Code: 140, Name: "UNRECOVERABLE_ECC_ERROR_ESCAPE", Meaning: "Unrecovered ECC error: the driver could not mark pages for offlining or remapping",
		Immediate: "RESET_GPU", Investigate: "CONTACT_SUPPORT", Causes: []string{"HW", "Drv", "FB"},
		Severity: SevCritical, Hardware: true, Action: "Reset the GPU; service it if it repeats."},
	{Code: 143, Name: "GPU_INIT_ERROR", Meaning: "GPU initialization failure",
		Immediate: "RESET_GPU", Investigate: "CONTACT_SUPPORT", Causes: []string{"HW", "Drv", "FB"},
		Severity: SevCritical, Hardware: true, Action: "The GPU is missing from nvidia-smi: reset it or reboot; service it if it repeats."},
	nvlink5(144, "NVLINK_SAW_ERROR"),
	nvlink5(145, "NVLINK_RLW_ERROR"),
	nvlink5(146, "NVLINK_TLW_ERROR"),
	nvlink5(147, "NVLINK_TREX_ERROR"),
	nvlink5(148, "NVLINK_NVLPW_CTRL_ERROR"),
	nvlink5(149, "NVLINK_NETIR_ERROR"),
	nvlink5(150, "NVLINK_MSE_ERROR"),
	{Code: 151, Name: "ROBUST_CHANNEL_KEY_ROTATION_ERROR", Meaning: "Key rotation error (confidential computing)",
		Immediate: "RESTART_VM",
		Severity:  SevError, Action: "Restart the VM."},
	{Code: 154, Name: "GPU_RECOVERY_ACTION_CHANGED", Meaning: "GPU recovery action changed",
		Severity: SevWarning, Secondary: true, Action: "Read the new action in the line (0 None, 1 GPU Reset Required, 2 Node Reboot Required, 3 Drain P2P, 4 Drain and Reset) and attribute it to the Xid before it."},
	{Code: 155, Name: "NVLINK_SW_DEFINED_ERROR", Meaning: "NVLink software-defined error",
		Immediate: "RESET_GPU", Investigate: "INVESTIGATE_SW_USER",
		Severity: SevError, Action: "Reset the GPU."},
	{Code: 156, Name: "RESOURCE_RETIREMENT_EVENT", Meaning: "Resource retirement event",
		Immediate: "RESET_GPU", Investigate: "IGNORE",
		Severity: SevWarning, Hardware: true, Action: "Reset the GPU when convenient."},
	{Code: 157, Name: "RESOURCE_RETIREMENT_FAILURE", Meaning: "Resource retirement failure",
		Immediate: "IGNORE", Investigate: "CONTACT_SUPPORT",
		Severity: SevError, Hardware: true, Action: "Report it to NVIDIA."},
	{Code: 158, Name: "GPU_FATAL_TIMEOUT", Meaning: "GPU fatal timeout",
		Immediate: "RESET_GPU", Investigate: "CONTACT_SUPPORT",
		Severity: SevCritical, Action: "Reset the GPU or reboot."},
	{Code: 167, Name: "PCIE_FATAL_TIMEOUT", Meaning: "PCIe fatal timeout",
		Severity: SevCritical, Hardware: true, Action: "Reset the GPU or reboot; check the PCIe link."},
	{Code: 168, Name: "REDUCED_GPU_MEMORY_CAPACITY", Meaning: "Reduced GPU memory capacity",
		Severity: SevWarning, Hardware: true, Action: "Less memory is usable than installed: plan service."},
	{Code: 169, Name: "SEC2_HALT_ERROR", Meaning: "SEC2 micro-controller halt",
		Severity: SevCritical, Action: "Reset the GPU or reboot."},
	{Code: 171, Name: "UNCORRECTABLE_DRAM_ERROR", Meaning: "Uncorrectable DRAM error (detail of an Xid 48)",
		Severity: SevCritical, Hardware: true, Action: "Treat like Xid 48: drain and reset, field diagnostics if it repeats."},
	{Code: 172, Name: "UNCORRECTABLE_SRAM_ERROR", Meaning: "Uncorrectable SRAM error (detail of an Xid 48)",
		Severity: SevCritical, Hardware: true, Action: "Treat like Xid 48: drain and reset, field diagnostics if it repeats."},
}

func nvlink5(code int, name string) XidEntry {
	return XidEntry{Code: code, Name: name, Meaning: "NVLink5 unit error (Blackwell); fatal or not depending on the unit and error status",
		Immediate: "WORKFLOW_NVLINK5_ERR", Severity: SevError, Hardware: true,
		Action: "Decode the line with NVIDIA's Xid 144-150 sheet; a line marked Fatal needs a GPU reset."}
}

var xidByCode = func() map[int]XidEntry {
	m := make(map[int]XidEntry, len(xidCatalog))
	for _, e := range xidCatalog {
		m[e.Code] = e
	}
	return m
}()

// recoveryRe reads Xid 154's "changed from 0x0 (None) to 0x4 (Drain and Reset)".
var recoveryRe = regexp.MustCompile(`to (0x[0-9a-fA-F]+|\d+) \(([^)]*)\)`)

// RecoveryAction reads the new recovery action from the text of an Xid 154
// line: its NVML code and name.
func RecoveryAction(text string) (code int, name string, ok bool) {
	m := recoveryRe.FindStringSubmatch(text)
	if m == nil {
		return 0, "", false
	}
	v, err := strconv.ParseInt(m[1], 0, 32)
	if err != nil {
		return 0, "", false
	}
	return int(v), m[2], true
}
