package envinfo

import (
	"regexp"
	"strings"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/textio"
)

// sglang.check_env prints one "Key: value" per line, package versions by
// distribution name, and the `nvidia-smi topo -m` output after
// "NVIDIA Topology:". Library chatter may come before it.

// checkKeys are the fixed keys of check_env (NVIDIA and ROCm variants).
var checkKeys = map[string]string{
	"Python":              "python",
	"CUDA available":      "cuda_available",
	"ROCM available":      "rocm_available",
	"CUDA_HOME":           "cuda_home",
	"ROCM_HOME":           "rocm_home",
	"NVCC":                "cuda_toolkit",
	"HIPCC":               "hipcc",
	"CUDA Driver Version": "driver",
	"ROCM Driver Version": "driver",
	"PyTorch":             "torch",
	"Hypervisor vendor":   "hypervisor",
	"ulimit soft":         "ulimit_nofile",
}

// checkAliases maps package keys to the Versions keys collect_env uses.
var checkAliases = map[string]string{
	"sgl_kernel": "sgl_kernel", "sglang_kernel": "sgl_kernel",
	"flashinfer": "flashinfer", "flashinfer_python": "flashinfer",
}

var (
	checkGPURe  = regexp.MustCompile(`^GPU [\d,]+: `)
	checkCCRe   = regexp.MustCompile(`^GPU [\d,]+ Compute Capability: (.*)$`)
	nvccFullRe  = regexp.MustCompile(`V(\d+\.\d+\.\d+)`)
	nvccRelRe   = regexp.MustCompile(`release (\d+\.\d+)`)
	packageKey  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.\-]*$`)
	checkSniffs = []string{"Python: ", "CUDA available: ", "PyTorch: ", "sglang: ", "CUDA_HOME: ", "CUDA Driver Version: ",
		"NVCC: ", "sgl_kernel: ", "sglang-kernel: ", "flashinfer_python: ", "flashinfer: ", "ROCM available: ", "NVIDIA Topology:"}
)

func sniffCheckEnv(lines []string, name string) int {
	seen := map[string]bool{}
	for _, l := range lines {
		for _, p := range checkSniffs {
			if strings.HasPrefix(l, p) {
				seen[p] = true
			}
		}
	}
	switch {
	case len(seen) >= 3 && (seen["sglang: "] || seen["PyTorch: "] || seen["CUDA available: "]):
		return 88
	case strings.Contains(name, "check_env") || strings.Contains(name, "check-env"):
		return 25
	}
	return 0
}

func parseCheckEnv(in *textio.Input, out *facts.Facts) {
	var s *setter
	var ccs []string
	topo, legend := false, false
	for in.Scan() {
		l := strings.TrimRight(unwrapped(in), " \t")
		src := in.Src()
		trim := strings.TrimSpace(l)
		if topo {
			if trim == "" {
				topo, legend = false, true
				continue
			}
			s.r.Topology = append(s.r.Topology, stripANSI(l))
			continue
		}
		if legend {
			if trim == "" || l[0] == ' ' || l[0] == '\t' || trim == "Legend:" {
				continue
			}
			legend = false
		}
		if trim == "" {
			continue
		}
		if m := checkCCRe.FindStringSubmatch(trim); m != nil && s != nil {
			ccs = appendUnique(ccs, strings.TrimSpace(m[1]))
			if k := strings.Index(trim, " Compute Capability"); k > 4 {
				setReportCC(out, src.File, trim[4:k], strings.TrimSpace(m[1]))
			}
			if _, ok := s.r.Where["compute_capability"]; !ok {
				s.r.Where["compute_capability"] = src
			}
			continue
		}
		if checkGPURe.MatchString(trim) && s != nil {
			s.r.GPUs = append(s.r.GPUs, trim)
			addReportGPU(out, src, trim)
			continue
		}
		key, val, ok := strings.Cut(trim, ":")
		if !ok {
			if s != nil {
				in.Issuef(facts.IssueMalformed, "not a check_env line (Key: value)")
			}
			continue
		}
		key = strings.TrimSpace(key)
		// "Hypervisor vendor:: KVM" has two colons.
		val = strings.TrimSpace(strings.TrimPrefix(val, ":"))
		if s == nil {
			// The report starts at its first line; what comes before is chatter.
			if key != "Python" && key != "CUDA available" && key != "ROCM available" {
				continue
			}
			s = newReport(src, facts.KindCheckEnv)
		}
		if key == "NVIDIA Topology" || key == "AMD Topology" {
			topo = true
			continue
		}
		if k, ok := checkKeys[key]; ok {
			switch k {
			case "python":
				if f := strings.Fields(val); len(f) > 0 {
					val = f[0]
				}
			case "cuda_toolkit":
				if m := nvccFullRe.FindStringSubmatch(val); m != nil {
					val = m[1]
				} else if m := nvccRelRe.FindStringSubmatch(val); m != nil {
					val = m[1]
				}
			}
			s.set(k, val, src, true)
			continue
		}
		if !packageKey.MatchString(key) {
			continue // a key of another version
		}
		pk := strings.ReplaceAll(strings.ToLower(key), "-", "_")
		if a, ok := checkAliases[pk]; ok {
			pk = a
		}
		s.set(pk, val, src, true)
	}
	if s == nil {
		in.IssueAt(0, facts.IssueUnrecognized, "no check_env report found (it starts with a Python: line)")
		return
	}
	if len(ccs) > 0 {
		s.r.Versions["compute_capability"] = strings.Join(ccs, ",")
	}
	out.Envs = append(out.Envs, s.r)
}

func appendUnique(list []string, v string) []string {
	for _, x := range list {
		if x == v {
			return list
		}
	}
	return append(list, v)
}
