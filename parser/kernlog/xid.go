package kernlog

import (
	"regexp"
	"strconv"

	"github.com/goccy/go-yaml"

	"github.com/coroner-dev/coroner/rules/catalog"
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

// xidCatalog is NVIDIA's Xid catalog, kept as data in
// rules/catalog/xid.yaml (sorted by code).
var xidCatalog = func() []XidEntry {
	var raw []struct {
		Code        int      `yaml:"code"`
		Name        string   `yaml:"name"`
		Meaning     string   `yaml:"meaning"`
		Immediate   string   `yaml:"immediate"`
		Investigate string   `yaml:"investigate"`
		Causes      []string `yaml:"causes"`
		Severity    Severity `yaml:"severity"`
		Action      string   `yaml:"action"`
		Secondary   bool     `yaml:"secondary"`
		Hardware    bool     `yaml:"hardware"`
	}
	if err := yaml.UnmarshalWithOptions(catalog.Xid, &raw, yaml.Strict()); err != nil {
		panic("rules/catalog/xid.yaml: " + yaml.FormatError(err, false, false))
	}
	out := make([]XidEntry, len(raw))
	for i, r := range raw {
		out[i] = XidEntry{Code: r.Code, Name: r.Name, Meaning: r.Meaning, Immediate: r.Immediate, Investigate: r.Investigate,
			Causes: r.Causes, Severity: r.Severity, Action: r.Action, Secondary: r.Secondary, Hardware: r.Hardware}
	}
	return out
}()

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
