package rules

import (
	"fmt"
	"regexp"

	"github.com/coroner-dev/coroner/parser/facts"
)

func init() { Register(driverTooOldRule) }

var driverTooOldRule = &Rule{
	ID:       "driver-too-old",
	Title:    "the NVIDIA driver is older than the CUDA runtime needs",
	Severity: SeverityError,
	Category: CatDependencyMismatch,
	Needs: []facts.Kind{facts.KindCollectEnv, facts.KindCheckEnv, facts.KindPipList, facts.KindNvidiaSMIQ, facts.KindNvidiaSMIXML,
		facts.KindNvidiaSMICSV, facts.KindNvidiaSMITable},
	Doc: `Compares the driver (an environment report or nvidia-smi) with the CUDA
runtime the Python packages were built for (collect_env's "CUDA used to
build PyTorch" or "CUDA runtime version", or torch's +cuXYZ), by NVIDIA's
table of the oldest driver each CUDA release needs:

- a driver older than the oldest of the runtime's major version (12.x needs
  525.60.13, 13.x 580.65.06, 11.x 450.80.02) cannot run it: CUDA fails to
  initialize ("driver version is insufficient", error 35, 803/804 with a
  forward-compatibility package), whatever the engine;
- a driver of the right major but older than the runtime's own minor
  release runs it under minor-version compatibility, except what needs the
  newer driver: PTX the driver must JIT-compile ("the provided PTX was
  compiled with an unsupported toolchain") and APIs added in the minor
  release. Reported as a weaker hypothesis, only when the run failed.

Driver versions differ between Linux and Windows (WSL reports the Windows
driver); the table is Linux's, so a WSL bundle gets no finding.`,
	References: []string{
		"https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html#cuda-driver",
		"https://docs.nvidia.com/deploy/cuda-compatibility/index.html#minor-version-compatibility",
	},
	Run: runDriverTooOld,
}

// cudaDrivers is the oldest Linux driver of each CUDA release (NVIDIA's CUDA
// Toolkit release notes, "CUDA Toolkit and Corresponding Driver Versions":
// the GA release of each).
var cudaDrivers = []struct{ cuda, driver string }{
	{"10.2", "440.33"}, {"11.0", "450.36.06"}, {"11.1", "455.23"}, {"11.2", "460.27.03"}, {"11.3", "465.19.01"},
	{"11.4", "470.42.01"}, {"11.5", "495.29.05"}, {"11.6", "510.39.01"}, {"11.7", "515.43.04"}, {"11.8", "520.61.05"},
	{"12.0", "525.60.13"}, {"12.1", "530.30.02"}, {"12.2", "535.54.03"}, {"12.3", "545.23.06"}, {"12.4", "550.54.14"},
	{"12.5", "555.42.02"}, {"12.6", "560.28.03"}, {"12.8", "570.26"}, {"12.9", "575.51.03"}, {"13.0", "580.65.06"},
}

// majorDrivers is the oldest driver that runs any release of a CUDA major
// version under minor-version compatibility (CUDA compatibility guide).
var majorDrivers = map[int]string{11: "450.80.02", 12: "525.60.13", 13: "580.65.06"}

// minorCompatFailRe matches the failures minor-version compatibility does
// not prevent (CUDA compatibility guide: PTX the driver JIT-compiles, and
// calls that need a newer driver): cudaErrorUnsupportedPtxVersion (222),
// cudaErrorCallRequiresNewerDriver (36), cudaErrorInsufficientDriver (35).
var minorCompatFailRe = regexp.MustCompile(`(?i)(unsupported toolchain|UNSUPPORTED_PTX_VERSION|UnsupportedPtxVersion|PTX (JIT|was compiled)|requires a newer (CUDA )?driver|CallRequiresNewerDriver|driver version is insufficient|InsufficientDriver|named symbol not found)`)

// torchCUDARe reads the CUDA release of a torch build ("2.4.0+cu121").
var torchCUDARe = regexp.MustCompile(`\+cu(\d{2,3})$`)

func runDriverTooOld(p *Pass) {
	idx := p.Index
	run := idx.Versions()
	// The CUDA torch was built with is the runtime the server loads;
	// collect_env's "CUDA runtime version" is the toolkit nvcc finds.
	var cuda Running
	cudaOK := false
	for _, r := range idx.Facts.Envs {
		if v, ok := ParseVersion(r.Versions["cuda_build"]); ok {
			src, ok := r.Where["cuda_build"]
			if !ok {
				src = r.Src
			}
			cuda, cudaOK = Running{Version: v, Src: src, From: "CUDA used to build PyTorch"}, true
			break
		}
	}
	if !cudaOK {
		if t, ok := run["torch"]; ok {
			if m := torchCUDARe.FindStringSubmatch(t.Version.Text); m != nil {
				s := m[1][:len(m[1])-1] + "." + m[1][len(m[1])-1:]
				if v, ok := ParseVersion(s); ok {
					cuda, cudaOK = Running{Version: v, Src: t.Src, From: "torch " + t.Version.Text}, true
				}
			}
		}
	}
	if !cudaOK {
		cuda, cudaOK = run["cuda"]
	}
	drv, drvOK := run["driver"]
	if !drvOK {
		for _, s := range idx.GPUSnapshots() {
			if v, ok := ParseVersion(s.Driver); ok && s.Driver != "" {
				drv, drvOK = Running{Version: v, Src: s.Src, From: "nvidia-smi"}, true
				break
			}
		}
	}
	if !cudaOK || !drvOK || len(cuda.Version.Release) < 2 || len(drv.Version.Release) < 2 {
		return
	}
	if drv.Version.Release[0] < 400 {
		return // not a Linux NVIDIA driver number (a WSL/Windows one is 5xx too, but ROCm's is not)
	}
	major := cuda.Version.Release[0]
	ev := []Evidence{
		{Src: cuda.Src, Text: fmt.Sprintf("CUDA runtime %s (%s)", cuda.Version.Text, cuda.From)},
		{Src: drv.Src, Text: fmt.Sprintf("driver %s (%s)", drv.Version.Text, drv.From)},
	}
	if need, ok := majorDrivers[major]; ok {
		nv, _ := ParseVersion(need)
		if drv.Version.Compare(nv) < 0 {
			p.Report(Finding{
				Message: fmt.Sprintf("The CUDA runtime is %s (%s) and the driver %s (%s): CUDA %d.x needs driver %s or newer, so CUDA cannot initialize on this driver whatever the engine does.",
					cuda.Version.Text, cuda.Src, drv.Version.Text, drv.Src, major, need),
				Evidence:   ev,
				Confidence: 0.75,
				Cause:      true,
				Why:        fmt.Sprintf("driver %s is older than CUDA %d.x's oldest, %s", drv.Version.Text, major, need),
				Remedy:     fmt.Sprintf("Upgrade the host's NVIDIA driver to %s or newer, or run a build of the engine (and torch) for an older CUDA (a +cu1xx wheel or image the driver supports). In a container, the driver is the host's: the image cannot bring its own.", need),
			})
			return
		}
	}
	// Minor-version compatibility covers all but PTX JIT and the newer
	// release's APIs: a weaker hypothesis only when the failure is one of
	// those.
	var fail *facts.LogEvent
	for _, e := range idx.State.Failures {
		if minorCompatFailRe.MatchString(failureText(e)) {
			fail = e
			break
		}
	}
	if fail == nil {
		return
	}
	ev = append(ev, Ev(fail))
	for _, r := range cudaDrivers {
		cv, _ := ParseVersion(r.cuda)
		if cv.Release[0] != major || cv.Release[1] != cuda.Version.Release[1] {
			continue
		}
		nv, _ := ParseVersion(r.driver)
		if drv.Version.Compare(nv) < 0 {
			p.Report(Finding{
				Message: fmt.Sprintf("The CUDA runtime is %s (%s) and the driver %s (%s), older than CUDA %s's own %s: it runs under minor-version compatibility, which does not cover PTX the driver must compile or APIs of the newer release; and this run failed there (%s).",
					cuda.Version.Text, cuda.Src, drv.Version.Text, drv.Src, r.cuda, r.driver, fail.Src),
				Evidence:   ev,
				Confidence: 0.3,
				Cause:      true,
				Why:        fmt.Sprintf("driver %s is older than CUDA %s needs for everything (%s)", drv.Version.Text, r.cuda, r.driver),
				Remedy:     fmt.Sprintf("Upgrade the driver to %s or newer, or use builds for the CUDA release the driver ships with (nvidia-smi's \"CUDA Version\").", r.driver),
			})
		}
		return
	}
}
