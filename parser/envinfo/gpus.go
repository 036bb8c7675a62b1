package envinfo

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/nvsmi"
)

// The GPU lines of an environment report ("GPU 0: NVIDIA H200", check_env's
// "GPU 0,1,2,3: NVIDIA H100 80GB HBM3" and "GPU 0,1 Compute Capability:
// 9.0") name the GPUs as surely as nvidia-smi -L: they are added to the
// bundle's GPU list, with the architecture and compute capability the name
// implies (or the report states), so that a bundle whose only word on its
// GPUs is a pasted collect_env still knows what they are.

var reportGPURe = regexp.MustCompile(`^GPU ([\d, ]+): (.+)$`)

// addReportGPU adds the GPUs of one report line.
func addReportGPU(out *facts.Facts, src facts.Source, line string) {
	m := reportGPURe.FindStringSubmatch(strings.TrimSpace(line))
	if m == nil {
		return
	}
	name := strings.TrimSpace(uuidSuffixRe.ReplaceAllString(m[2], ""))
	arch, cc, _ := nvsmi.Capability(name)
	for _, i := range indexes(m[1]) {
		out.GPUList = append(out.GPUList, &facts.GPUListEntry{Src: src, Index: i, Name: name, Arch: arch, CC: cc})
	}
}

// setReportCC applies check_env's "GPU 0,1 Compute Capability: 9.0" to the
// GPUs it names, added by this report.
func setReportCC(out *facts.Facts, file string, idxs, cc string) {
	for _, i := range indexes(idxs) {
		for _, g := range out.GPUList {
			if g.Src.File == file && g.Index == i {
				g.CC = cc
			}
		}
	}
}

func indexes(s string) []int {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(f)); err == nil && n >= 0 && n < 1024 {
			out = append(out, n)
		}
	}
	return out
}
