package nvsmi

import (
	"strings"
)

// Architecture names, as nvidia-smi prints "Product Architecture".
const (
	archKepler    = "Kepler"
	archMaxwell   = "Maxwell"
	archPascal    = "Pascal"
	archVolta     = "Volta"
	archTuring    = "Turing"
	archAmpere    = "Ampere"
	archAda       = "Ada Lovelace"
	archHopper    = "Hopper"
	archBlackwell = "Blackwell"
)

// Capability maps an NVIDIA product name, as nvidia-smi prints it ("NVIDIA
// H200", "Tesla V100-SXM2-16GB", "NVIDIA RTX PRO 6000 Blackwell Server
// Edition"), to its architecture and CUDA compute capability, following the
// official list (developer.nvidia.com/cuda-gpus). Dumps from older drivers
// lack compute_cap, and -q text never prints it, so rules that ask "does this
// binary have kernels for this GPU" need this table.
//
// Names cut by the default table ("NVIDIA GeForce ...") and unknown products
// return ok=false: an unknown capability is better than a wrong one.
func Capability(name string) (arch, cc string, ok bool) {
	t := nameTokens(name)
	if len(t) == 0 {
		return "", "", false
	}
	has := func(words ...string) bool {
		for _, w := range words {
			if t.has(w) {
				return true
			}
		}
		return false
	}
	rtx := t.has("RTX")
	switch {
	// Blackwell. GB10 (DGX Spark) is 12.1; the datacenter parts 10.x; every
	// workstation and consumer part 12.0, whatever the edition suffix.
	case has("GB10"):
		return archBlackwell, "12.1", true
	case has("B300", "GB300", "B300A"):
		return archBlackwell, "10.3", true
	case has("B200", "GB200", "B100", "B200A"):
		return archBlackwell, "10.0", true
	case rtx && (t.seq("RTX", "PRO") || has("BLACKWELL")):
		return archBlackwell, "12.0", true
	case rtx && t.numberIn(5050, 5090):
		return archBlackwell, "12.0", true

	case has("H100", "H200", "H800", "H20", "GH200", "H100L", "H100NVL", "H200NVL"):
		return archHopper, "9.0", true

	case has("ADA") || has("L4", "L40", "L40S", "L40G", "L20", "L2") || rtx && t.numberIn(4050, 4090):
		return archAda, "8.9", true

	case has("ORIN"):
		return archAmpere, "8.7", true
	case has("A100", "A800", "A30", "A100X", "A30X"):
		return archAmpere, "8.0", true
	case has("A10", "A10G", "A10M", "A40", "A16", "A2") || t.any(isRTXA) || rtx && t.numberIn(3050, 3090):
		return archAmpere, "8.6", true

	// "Quadro RTX 4000" is Turing; "RTX 4000 Ada Generation" matched above.
	case has("T4", "T4G") || t.seq("TITAN", "RTX") || t.has("QUADRO") && rtx ||
		rtx && (t.numberIn(2060, 2080) || has("3000", "4000", "5000", "6000", "8000")) ||
		t.has("GTX") && t.numberIn(1630, 1660) || t.any(isQuadroT):
		return archTuring, "7.5", true

	case has("V100", "V100S", "GV100") || t.seq("TITAN", "V"):
		return archVolta, "7.0", true

	case has("P100", "GP100"):
		return archPascal, "6.0", true
	case has("P40", "P4", "P6", "P10", "XP") || t.seq("TITAN", "X") && has("PASCAL") ||
		t.has("GTX") && t.numberIn(1050, 1080) || t.any(isQuadroP):
		return archPascal, "6.1", true

	case has("M10"):
		return archMaxwell, "5.0", true
	case has("M60", "M40", "M6", "M4") || t.seq("GTX", "TITAN", "X") || t.has("GTX") && t.numberIn(950, 980):
		return archMaxwell, "5.2", true

	case has("K80"):
		return archKepler, "3.7", true
	case has("K40", "K40M", "K40C", "K20", "K20X", "K20M"):
		return archKepler, "3.5", true
	}
	return "", "", false
}

// archCapability derives the compute capability from an architecture that
// has only one among the GPUs nvidia-smi runs on.
func archCapability(arch string) (string, bool) {
	switch strings.ToLower(strings.TrimSpace(arch)) {
	case "hopper":
		return "9.0", true
	case "ada lovelace", "ada":
		return "8.9", true
	case "turing":
		return "7.5", true
	case "volta":
		return "7.0", true
	}
	return "", false
}

type tokens []string

func nameTokens(name string) tokens {
	up := strings.ToUpper(name)
	return strings.FieldsFunc(up, func(r rune) bool {
		switch r {
		case ' ', '\t', '-', '_', '/', '(', ')', ',', ':':
			return true
		}
		return false
	})
}

func (t tokens) has(w string) bool {
	for _, x := range t {
		if x == w {
			return true
		}
	}
	return false
}

// seq reports whether the words appear one after another.
func (t tokens) seq(words ...string) bool {
	for i := 0; i+len(words) <= len(t); i++ {
		ok := true
		for j, w := range words {
			if t[i+j] != w {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

func (t tokens) any(f func(string) bool) bool {
	for _, x := range t {
		if f(x) {
			return true
		}
	}
	return false
}

// numberIn reports a model number lo..hi that ends in 0 (4090, 5070; the
// "Ti" and "SUPER" suffixes are separate words).
func (t tokens) numberIn(lo, hi int) bool {
	for _, x := range t {
		n, ok := atoiToken(x)
		if ok && n >= lo && n <= hi && n%10 == 0 {
			return true
		}
	}
	return false
}

func atoiToken(x string) (int, bool) {
	if x == "" || len(x) > 6 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(x); i++ {
		c := x[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// isRTXA matches the Ampere workstation parts: RTX A2000 ... A6000.
func isRTXA(x string) bool {
	n, ok := atoiToken(strings.TrimPrefix(x, "A"))
	return strings.HasPrefix(x, "A") && ok && len(x) == 5 && n >= 2000 && n <= 6000
}

// isQuadroT matches the Turing T-series: T400, T600, T1000, T1200 ...
func isQuadroT(x string) bool {
	n, ok := atoiToken(strings.TrimPrefix(x, "T"))
	return strings.HasPrefix(x, "T") && ok && (len(x) == 4 || len(x) == 5) && n >= 400 && n <= 2000
}

// isQuadroP matches the Pascal Quadro parts: P400 ... P6000 (GP100 is 6.0).
func isQuadroP(x string) bool {
	n, ok := atoiToken(strings.TrimPrefix(x, "P"))
	return strings.HasPrefix(x, "P") && ok && (len(x) == 4 || len(x) == 5) && n >= 400 && n <= 6000
}
