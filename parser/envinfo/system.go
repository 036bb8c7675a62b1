package envinfo

import (
	"regexp"
	"strings"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/textio"
)

// A system description is whatever a collector wrote about the host: uname
// -a, /etc/os-release, lsb_release -a, /proc/version,
// /proc/driver/nvidia/version, and `--version` lines of tools (nvidia-smi,
// ps, nvcc, python, docker, gcc, ldd). Lines it does not know are skipped:
// such files hold error messages of tools that are missing or refused an
// option, which are not damage.

var (
	unameRe        = regexp.MustCompile(`^Linux (\S+) (\d+\.\d+\S*) (#.*)$`)
	procVersionRe  = regexp.MustCompile(`^Linux version (\d+\.\d+\S*) `)
	procpsRe       = regexp.MustCompile(`^(\S+) from procps(?:-ng)? (\S+)$`)
	nvidiaModuleRe = regexp.MustCompile(`^NVRM version: NVIDIA .*?Kernel Module(?: for \S+)?\s+(\d+\.\d+(?:\.\d+)?)`)
	nvccVersionRe  = regexp.MustCompile(`^Cuda compilation tools, release (\d+\.\d+), V(\d+\.\d+\.\d+)`)
	pythonRe       = regexp.MustCompile(`^Python (\d+\.\d+\.\d+\S*)$`)
	dockerRe       = regexp.MustCompile(`^Docker version (\S+?),`)
	gccRe          = regexp.MustCompile(`^gcc \(.*\) (\d+\.\d+\.\d+)$`)
	lddRe          = regexp.MustCompile(`^ldd \(.*\) (\d+\.\d+)$`)
	archRe         = regexp.MustCompile(`^(x86_64|aarch64|arm64|ppc64le|s390x)$`)
)

// smiVersionKeys are the lines of `nvidia-smi --version`.
var smiVersionKeys = map[string]string{
	"NVIDIA-SMI version": "nvidia_smi",
	"NVML version":       "nvml",
	"DRIVER version":     "driver",
	"CUDA Version":       "cuda_driver",
}

func sniffSystem(lines []string, name string) int {
	score := 0
	for i, l := range lines {
		t := strings.TrimSpace(l)
		s := 0
		linux := strings.HasPrefix(t, "Linux ")
		switch {
		case linux && i < 3 && unameRe.MatchString(t):
			s = 85
		case linux && procVersionRe.MatchString(t):
			s = 80
		case strings.HasPrefix(t, "PRETTY_NAME="):
			s = 80
		case strings.HasPrefix(t, "NVRM version: NVIDIA"):
			s = 80
		case strings.HasPrefix(t, "NVIDIA-SMI version") || strings.HasPrefix(t, "DRIVER version"):
			s = 75
		case strings.HasPrefix(t, "Distributor ID:"):
			s = 75
		case strings.Contains(t, " from procps") && procpsRe.MatchString(t):
			s = 60
		}
		score = max(score, s)
	}
	if score == 0 {
		for _, w := range []string{"system", "uname", "os-release", "os_release", "lsb", "version"} {
			if strings.Contains(name, w) {
				return 20
			}
		}
	}
	return score
}

func parseSystem(in *textio.Input, out *facts.Facts) {
	si := &facts.SystemInfo{Versions: map[string]string{}}
	found := false
	set := func(k, v string) {
		v = strings.TrimSpace(v)
		if v == "" || isMissing(v) {
			return
		}
		if _, ok := si.Versions[k]; !ok {
			si.Versions[k] = cut(v)
		}
		if !found {
			si.Src, found = in.Src(), true
		}
	}
	for in.Scan() {
		l := strings.TrimSpace(stripANSI(unwrapped(in)))
		if l == "" {
			continue
		}
		if m := unameRe.FindStringSubmatch(l); m != nil {
			if si.Hostname == "" {
				si.Hostname = m[1]
			}
			if si.Kernel == "" {
				si.Kernel = m[2]
			}
			f := strings.Fields(m[3])
			for j := len(f) - 1; j >= 0; j-- {
				if archRe.MatchString(f[j]) {
					set("arch", f[j])
					break
				}
			}
			set("kernel", m[2])
			continue
		}
		if m := procVersionRe.FindStringSubmatch(l); m != nil {
			if si.Kernel == "" {
				si.Kernel = m[1]
			}
			set("kernel", m[1])
			continue
		}
		if m := procpsRe.FindStringSubmatch(l); m != nil {
			set("procps", m[2])
			continue
		}
		if m := nvidiaModuleRe.FindStringSubmatch(l); m != nil {
			set("driver", m[1])
			if strings.Contains(l, "Open Kernel Module") {
				set("kernel_module", "open")
			} else {
				set("kernel_module", "proprietary")
			}
			continue
		}
		if m := nvccVersionRe.FindStringSubmatch(l); m != nil {
			set("cuda_toolkit", m[2])
			continue
		}
		if m := pythonRe.FindStringSubmatch(l); m != nil {
			set("python", m[1])
			continue
		}
		if m := dockerRe.FindStringSubmatch(l); m != nil {
			set("docker", m[1])
			continue
		}
		if m := gccRe.FindStringSubmatch(l); m != nil {
			set("gcc", m[1])
			continue
		}
		if m := lddRe.FindStringSubmatch(l); m != nil {
			set("glibc", m[1])
			continue
		}
		if k, v, ok := strings.Cut(l, ":"); ok {
			k = strings.TrimSpace(k)
			if key, known := smiVersionKeys[k]; known {
				set(key, v)
				continue
			}
			switch k {
			case "Description": // lsb_release -a
				if si.OS == "" {
					si.OS = strings.TrimSpace(v)
					set("os", v)
				}
				continue
			case "Release":
				set("os_version", v)
				continue
			case "Distributor ID":
				set("os_id", strings.ToLower(strings.TrimSpace(v)))
				continue
			}
		}
		if k, v, ok := strings.Cut(l, "="); ok && isName(k) {
			v = unquote(v)
			switch k {
			case "PRETTY_NAME":
				si.OS = v
				set("os", v)
			case "ID":
				set("os_id", v)
			case "VERSION_ID":
				set("os_version", v)
			case "VERSION_CODENAME":
				set("os_codename", v)
			}
			continue
		}
	}
	if !found {
		in.IssueAt(0, facts.IssueUnrecognized, "no uname, os-release or tool version line found")
		return
	}
	if si.OS != "" {
		si.Versions["os"] = si.OS
	}
	out.System = append(out.System, si)
}
