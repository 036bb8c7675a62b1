package kernlog

import (
	"fmt"
	"net/url"
	"regexp"
	"strconv"

	"github.com/coroner-dev/coroner/rules/catalog"
	"github.com/coroner-dev/coroner/rules/catalog/jsonform"
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
	// References are where the entry comes from: NVIDIA's catalog, its
	// cause matrix.
	References []string
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
// rules/catalog/xid.yaml, beside the signatures, and read from its JSON form
// (rules/catalog/json/xid.json) when the program starts; a catalog that does
// not hold together stops it there, and TestXidCatalog stops it before a
// release.
var xidCatalog = func() []XidEntry {
	es, err := loadXids(func(v any) error { return jsonform.Decode(catalog.XidJSON, v) })
	if err != nil {
		panic("rules/catalog/json/xid.json (from xid.yaml): " + err.Error())
	}
	return es
}()

// xidCauses are the cause matrix's columns.
var xidCauses = map[string]bool{"HW": true, "Drv": true, "App": true, "Mem": true, "Bus": true, "Th": true, "FB": true}

// xidName is a catalog mnemonic.
var xidName = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)

// loadXids decodes the Xid catalog with decode, which must be strict (an
// unknown field an error), and checks each entry: codes ascending and once,
// a mnemonic, a meaning, a known severity, an action, causes of the matrix
// and at least one https reference.
func loadXids(decode func(any) error) ([]XidEntry, error) {
	var raw []struct {
		Code        int      `yaml:"code" json:"code"`
		Name        string   `yaml:"name" json:"name"`
		Meaning     string   `yaml:"meaning" json:"meaning"`
		Immediate   string   `yaml:"immediate" json:"immediate"`
		Investigate string   `yaml:"investigate" json:"investigate"`
		Causes      []string `yaml:"causes" json:"causes"`
		Severity    Severity `yaml:"severity" json:"severity"`
		Action      string   `yaml:"action" json:"action"`
		Secondary   bool     `yaml:"secondary" json:"secondary"`
		Hardware    bool     `yaml:"hardware" json:"hardware"`
		References  []string `yaml:"references" json:"references"`
	}
	if err := decode(&raw); err != nil {
		return nil, fmt.Errorf("decoding: %w", err)
	}
	if len(raw) == 0 {
		return nil, fmt.Errorf("no entries")
	}
	out := make([]XidEntry, len(raw))
	for i, r := range raw {
		bad := func(format string, args ...any) error {
			return fmt.Errorf("entry %d (code %d): %s", i+1, r.Code, fmt.Sprintf(format, args...))
		}
		switch {
		case r.Code <= 0:
			return nil, bad("code must be a positive number")
		case i > 0 && r.Code <= raw[i-1].Code:
			return nil, bad("codes must ascend, each once: %d comes after %d", r.Code, raw[i-1].Code)
		case !xidName.MatchString(r.Name):
			return nil, bad("name %q is not a catalog mnemonic (capitals, digits, _)", r.Name)
		case r.Meaning == "":
			return nil, bad("meaning is empty")
		case r.Action == "":
			return nil, bad("action is empty")
		case len(r.References) == 0:
			return nil, bad("no references: say where the entry comes from")
		}
		switch r.Severity {
		case SevCritical, SevError, SevWarning, SevInfo:
		default:
			return nil, bad("severity %q is none of critical, error, warning, info", r.Severity)
		}
		for _, c := range r.Causes {
			if !xidCauses[c] {
				return nil, bad("cause %q is not a column of the cause matrix (HW, Drv, App, Mem, Bus, Th, FB)", c)
			}
		}
		for _, ref := range r.References {
			if u, err := url.Parse(ref); err != nil || u.Scheme != "https" || u.Host == "" {
				return nil, bad("reference %q is not an https URL", ref)
			}
		}
		out[i] = XidEntry{Code: r.Code, Name: r.Name, Meaning: r.Meaning, Immediate: r.Immediate, Investigate: r.Investigate,
			Causes: r.Causes, Severity: r.Severity, Action: r.Action, Secondary: r.Secondary, Hardware: r.Hardware,
			References: r.References}
	}
	return out, nil
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
