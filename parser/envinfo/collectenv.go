package envinfo

import (
	"bytes"
	"regexp"
	"strings"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/textio"
)

// collect_env prints "Key: value" lines (PyTorch and vLLM before ~0.9.1) or
// "Key<padded to 29>: value" lines under "====" section banners (vLLM since
// ~0.9.1). Some keys open a list on the following lines: GPU models, cuDNN
// libraries, lscpu, pip packages, the vLLM build flags, the GPU topology
// and the environment variables.

var newLayoutKeyRe = regexp.MustCompile(`(?m)^PyTorch version\s+: `)

func sniffCollectEnv(head []byte, name string) int {
	switch {
	case bytes.Contains(head, []byte("Collecting environment information")):
		return 95
	case (bytes.Contains(head, []byte("PyTorch version: ")) || newLayoutKeyRe.Match(head)) &&
		(bytes.Contains(head, []byte("Is debug build")) || bytes.Contains(head, []byte("CUDA used to build PyTorch"))):
		return 90
	case strings.Contains(name, "collect_env") || strings.Contains(name, "collect-env") || strings.Contains(name, "collectenv"):
		return 25
	}
	return 0
}

// collectKeys maps report keys to Versions keys.
var collectKeys = map[string]string{
	"PyTorch version":            "torch",
	"CUDA used to build PyTorch": "cuda_build",
	"ROCM used to build PyTorch": "rocm_build",
	"Clang version":              "clang",
	"Libc version":               "libc",
	"Is CUDA available":          "cuda_available",
	"CUDA runtime version":       "cuda_runtime",
	"CUDA_MODULE_LOADING set to": "cuda_module_loading",
	"Nvidia driver version":      "driver",
	"HIP runtime version":        "hip",
	"MIOpen runtime version":     "miopen",
	"XPU runtime version":        "xpu_runtime",
	"Caching allocator config":   "caching_allocator_config",
	"ROCM Version":               "rocm",
	"Neuron SDK Version":         "neuron",
	"vLLM Version":               "vllm",
	"Is debug build":             "torch_debug",
}

// cpuKeys are the lscpu lines worth keeping.
var cpuKeys = map[string]string{
	"Model name":        "cpu",
	"Hypervisor vendor": "hypervisor",
	"CPU(s)":            "cpus",
}

// pipKeys maps package names (lower case, '_' as '-') to Versions keys.
var pipKeys = map[string]string{
	"torch": "torch", "triton": "triton", "transformers": "transformers", "numpy": "numpy",
	"flashinfer-python": "flashinfer", "flashinfer": "flashinfer", "vllm": "vllm", "sglang": "sglang",
	"sgl-kernel": "sgl_kernel", "sglang-kernel": "sgl_kernel", "xformers": "xformers",
	"nvidia-nccl-cu11": "nccl", "nvidia-nccl-cu12": "nccl", "nvidia-nccl-cu13": "nccl",
	"flash-attn": "flash_attn", "pytorch-triton-rocm": "triton",
}

var (
	archSuffixRe = regexp.MustCompile(`^(.*) \((x86_64|aarch64|arm64|ppc64le|s390x)\)$`)
	platformRe   = regexp.MustCompile(`^Linux-(.+)-(x86_64|aarch64|ppc64le|s390x)-with`)
	cudnnPathRe  = regexp.MustCompile(`libcudnn(_[a-z_]+)?\.so\.(\d+\.\d+\.\d+)`)
	gpuLineRe    = regexp.MustCompile(`^GPU \d+: `)
	uuidSuffixRe = regexp.MustCompile(` \(UUID: [^)]*\)$`)
	bannerRe     = regexp.MustCompile(`^=+$`)
	archsRe      = regexp.MustCompile(`CUDA Archs: ([^;]*)`)
)

type ceMode uint8

const (
	ceNormal ceMode = iota
	ceGPUs
	ceCudnn
	ceCPU
	ceLibs
	ceBuild
	ceTopo
	ceLegend
	ceEnv
)

type collectParser struct {
	in      *textio.Input
	out     *facts.Facts
	s       *setter
	mode    ceMode
	section string
	banner  bool // the last line was a "====" banner: a title follows
	cudnn   []string
}

func parseCollectEnv(in *textio.Input, out *facts.Facts) {
	p := &collectParser{in: in, out: out}
	for in.Scan() {
		p.line(strings.TrimRight(unwrapped(in), " \t"))
	}
	if p.s == nil {
		in.IssueAt(0, facts.IssueUnrecognized, "no collect_env field found")
		return
	}
	p.finishCudnn()
	out.Envs = append(out.Envs, p.s.r)
}

func (p *collectParser) start() {
	if p.s == nil {
		p.s = newReport(p.in.Src(), facts.KindCollectEnv)
	}
}

func (p *collectParser) line(l string) {
	src := p.in.Src()
	trim := strings.TrimSpace(l)
	// Banners: "====" / title / "====".
	if len(trim) >= 10 && bannerRe.MatchString(trim) {
		p.banner = !p.banner
		if p.banner {
			p.mode = ceNormal // a new section starts; the title sets its mode
		}
		return
	}
	if p.banner {
		p.section = trim
		p.start()
		switch trim {
		case "CPU Info":
			p.mode = ceCPU
		case "Versions of relevant libraries":
			p.mode = ceLibs
		case "Environment Variables":
			p.mode = ceEnv
		}
		return
	}
	if strings.HasPrefix(trim, "Collecting environment information") {
		p.start()
		return
	}
	switch p.mode {
	case ceGPUs:
		if gpuLineRe.MatchString(trim) {
			p.s.r.GPUs = append(p.s.r.GPUs, uuidSuffixRe.ReplaceAllString(trim, ""))
			addReportGPU(p.out, src, trim)
			return
		}
		p.mode = ceNormal
	case ceCudnn:
		if strings.HasPrefix(trim, "/") || strings.HasPrefix(trim, "C:\\") {
			p.cudnn = append(p.cudnn, trim)
			if p.s.r.Where["cudnn"] == (facts.Source{}) {
				p.s.r.Where["cudnn"] = src
			}
			return
		}
		p.mode = ceNormal
		p.finishCudnn()
	case ceBuild:
		if m := archsRe.FindStringSubmatch(trim); m != nil {
			p.s.set("cuda_archs", m[1], src, true)
			p.mode = ceNormal
			return
		}
		p.mode = ceNormal
	case ceTopo:
		if trim == "" {
			p.mode = ceLegend
			return
		}
		p.s.r.Topology = append(p.s.r.Topology, stripANSI(l))
		return
	case ceLegend:
		if trim == "" || l[0] == ' ' || l[0] == '\t' || trim == "Legend:" {
			return
		}
		p.mode = ceNormal
	}
	if trim == "" {
		if p.mode == ceCPU && p.section != "CPU Info" {
			p.mode = ceNormal // the old layout's lscpu block ends at a blank line
		}
		return
	}
	if p.mode == ceLibs || strings.HasPrefix(trim, "[pip") || strings.HasPrefix(trim, "[conda]") {
		if p.lib(trim, src) {
			return
		}
	}
	if p.mode == ceEnv || (p.s != nil && startsAssignment(trim)) {
		if p.env(trim, src) {
			return
		}
	}
	key, val, ok := splitKey(trim)
	if !ok {
		if p.s == nil {
			return // chatter before the report (warnings, "INFO ... detected platform")
		}
		if p.mode == ceCPU {
			return // lscpu lines without a colon
		}
		p.in.Issuef(facts.IssueMalformed, "not a collect_env line (Key: value)")
		return
	}
	if p.mode == ceCPU && p.s != nil {
		if k, ok := cpuKeys[key]; ok {
			p.s.set(k, val, src, true)
		} else if key == "Architecture" {
			p.s.set("arch", val, src, false)
		}
		return
	}
	if _, known := collectKeys[key]; !known && !specialKeys[key] {
		return // a key of another version, or chatter before the report
	}
	p.start()
	p.keyValue(key, val, src)
}

// specialKeys are the keys keyValue reads beyond collectKeys.
var specialKeys = map[string]bool{
	"CPU": true, "Versions of relevant libraries": true, "GPU models and configuration": true, "cuDNN version": true,
	"vLLM Build Flags": true, "CUDA Archs": true, "GPU Topology": true, "OS": true, "GCC version": true,
	"CMake version": true, "Python version": true, "Python platform": true,
}

// splitKey splits "Key: value" and "Key<spaces>: value"; a key holds no
// colon and is not too long (lscpu flags, paths and prose are not keys).
func splitKey(l string) (key, val string, ok bool) {
	i := strings.IndexByte(l, ':')
	if i <= 0 || i > 48 {
		return "", "", false
	}
	key = strings.TrimSpace(l[:i])
	if key == "" || strings.ContainsAny(key, "/\\[]=") {
		return "", "", false
	}
	return key, strings.TrimSpace(l[i+1:]), true
}

func (p *collectParser) keyValue(key, val string, src facts.Source) {
	switch key {
	case "CPU":
		p.mode = ceCPU
		return
	case "Versions of relevant libraries":
		p.mode = ceLibs
		return
	case "GPU models and configuration":
		if val == "" {
			p.mode = ceGPUs
		} else if !isMissing(val) {
			p.s.r.GPUs = append(p.s.r.GPUs, uuidSuffixRe.ReplaceAllString(val, ""))
			if gpuLineRe.MatchString(val) {
				addReportGPU(p.out, src, val)
			} else {
				// "GPU models and configuration: GPU 0: ..." or a bare name.
				addReportGPU(p.out, src, "GPU 0: "+val)
			}
		}
		return
	case "cuDNN version":
		switch {
		case strings.HasPrefix(val, "Probably one of the following"):
			p.mode = ceCudnn
			p.cudnn = p.cudnn[:0]
		case cudnnPathRe.MatchString(val):
			p.cudnn = append(p.cudnn[:0], val)
			p.s.r.Where["cudnn"] = src
			p.finishCudnn()
		default:
			p.s.set("cudnn", val, src, true)
		}
		return
	case "vLLM Build Flags":
		p.mode = ceBuild
		return
	case "CUDA Archs":
		// Old layout: the build flags on one line ("CUDA Archs: Not Set; ROCm: Disabled").
		if m := archsRe.FindStringSubmatch("CUDA Archs: " + val); m != nil {
			p.s.set("cuda_archs", m[1], src, true)
		}
		return
	case "GPU Topology":
		p.mode = ceTopo
		return
	case "OS":
		if m := archSuffixRe.FindStringSubmatch(val); m != nil {
			p.s.set("os", m[1], src, true)
			p.s.set("arch", m[2], src, true)
		} else {
			p.s.set("os", val, src, true)
		}
		return
	case "GCC version":
		if f := strings.Fields(val); len(f) > 0 && !isMissing(val) {
			p.s.set("gcc", f[len(f)-1], src, true)
		}
		return
	case "CMake version":
		p.s.set("cmake", strings.TrimPrefix(val, "version "), src, true)
		return
	case "Python version":
		if f := strings.Fields(val); len(f) > 0 {
			p.s.set("python", f[0], src, true)
		}
		return
	case "Python platform":
		p.s.set("platform", val, src, true)
		if m := platformRe.FindStringSubmatch(val); m != nil {
			p.s.set("kernel", m[1], src, true)
		}
		return
	}
	if k, ok := collectKeys[key]; ok {
		p.s.set(k, val, src, true)
	}
}

// finishCudnn takes the version of the main cuDNN library from a list of paths.
func (p *collectParser) finishCudnn() {
	if len(p.cudnn) == 0 || p.s == nil {
		return
	}
	src := p.s.r.Where["cudnn"]
	best := ""
	for _, path := range p.cudnn {
		m := cudnnPathRe.FindStringSubmatch(path)
		if m == nil {
			continue
		}
		if m[1] == "" {
			best = m[2]
			break
		}
		if best == "" {
			best = m[2]
		}
	}
	delete(p.s.r.Where, "cudnn")
	if best != "" {
		p.s.set("cudnn", best, src, true)
	}
	p.cudnn = p.cudnn[:0]
}

// lib reads "[pip3] torch==2.11.0" and "[conda] torch 2.4.0 py3.11 pytorch".
func (p *collectParser) lib(l string, src facts.Source) bool {
	var mgr, rest string
	switch {
	case strings.HasPrefix(l, "[pip3] "), strings.HasPrefix(l, "[pip] "):
		mgr, rest = "pip", l[strings.IndexByte(l, ']')+2:]
	case strings.HasPrefix(l, "[conda] "):
		mgr, rest = "conda", l[len("[conda] "):]
	default:
		return false
	}
	p.start()
	if isMissing(rest) {
		return true // "[conda] Could not collect"
	}
	var name, ver string
	if mgr == "pip" {
		n, v, ok := strings.Cut(rest, "==")
		if !ok {
			return true // a package without a pinned version
		}
		name, ver = n, v
	} else {
		f := strings.Fields(rest)
		if len(f) < 2 {
			return true
		}
		name, ver = f[0], f[1]
	}
	name = strings.ReplaceAll(strings.ToLower(strings.TrimSpace(name)), "_", "-")
	ver = strings.TrimSpace(ver)
	p.s.set(mgr+":"+name, ver, src, true)
	if k, ok := pipKeys[name]; ok {
		p.s.set(k, ver, src, false)
	}
	return true
}

// env reads a "NAME=value" line of the environment section.
func (p *collectParser) env(l string, src facts.Source) bool {
	if !startsAssignment(l) {
		return false
	}
	p.start()
	name, val, _ := strings.Cut(l, "=")
	p.out.Env = append(p.out.Env, &facts.EnvVar{Src: src, Name: name, Value: Redact(name, val), From: "collect-env"})
	return true
}
