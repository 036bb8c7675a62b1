package envinfo

import (
	"regexp"
	"strings"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/textio"
)

// A package list is what people paste for "which versions": `pip freeze`
// (name==version, name @ url), `pip list` (a Package/Version table), `conda
// list` (name, version, build, channel under "# packages in environment
// at ..."), and the packages.txt that `coroner collect` writes from the
// server's site-packages (pip freeze with comments saying where it read).

var (
	freezeRe    = regexp.MustCompile(`^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?\s*===?\s*([0-9][^\s;#]*)`)
	listHeadRe  = regexp.MustCompile(`^Package\s+Version(\s|$)`)
	listRuleRe  = regexp.MustCompile(`^-{3,}\s+-{3,}`)
	listRowRe   = regexp.MustCompile(`^([A-Za-z0-9][A-Za-z0-9._-]*)\s+([0-9][^\s]*)(\s|$)`)
	condaHeadRe = regexp.MustCompile(`^# packages in environment at `)
	condaRowRe  = regexp.MustCompile(`^([A-Za-z0-9_][A-Za-z0-9._-]*)\s+([0-9][^\s]*)\s+\S+(\s+\S+)?\s*$`)
	torchCudaRe = regexp.MustCompile(`^# torch\.version\.cuda: ([0-9.]+)$`)
)

func sniffPipList(lines []string, name string) int {
	freeze, table, conda := 0, false, false
	for i, l := range lines {
		t := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(t, "# coroner collect: Python packages"):
			return 95
		case listHeadRe.MatchString(t) && i+1 < len(lines) && listRuleRe.MatchString(strings.TrimSpace(lines[i+1])):
			table = true
		case condaHeadRe.MatchString(t):
			conda = true
		case freezeRe.MatchString(t) && !strings.ContainsAny(t, " \t"):
			freeze++
		}
	}
	switch {
	case table, conda:
		return 80
	case freeze >= 5 && freeze*2 >= len(lines):
		// A requirements file is also name==version lines: just as good.
		return 70
	case freeze >= 3 && (strings.Contains(name, "pip") || strings.Contains(name, "requirements") || strings.Contains(name, "packages")):
		return 60
	}
	return 0
}

func parsePipList(in *textio.Input, out *facts.Facts) {
	s := newReport(in.Src(), facts.KindPipList)
	mgr := "pip"
	for in.Scan() {
		l := strings.TrimSpace(unwrapped(in))
		src := in.Src()
		if m := torchCudaRe.FindStringSubmatch(l); m != nil {
			s.set("cuda_build", m[1], src, true)
			continue
		}
		if condaHeadRe.MatchString(l) {
			mgr = "conda"
			continue
		}
		if l == "" || l[0] == '#' || listHeadRe.MatchString(l) || listRuleRe.MatchString(l) {
			continue
		}
		var m []string
		switch {
		case mgr == "conda":
			m = condaRowRe.FindStringSubmatch(l)
		case strings.Contains(l, "=="):
			m = freezeRe.FindStringSubmatch(l)
		default:
			m = listRowRe.FindStringSubmatch(l)
		}
		if m == nil {
			continue
		}
		// pip names compare with '_' as '-'; conda's keep their own.
		name := strings.ToLower(m[1])
		kind := mgr
		if mgr == "conda" && strings.HasSuffix(l, "pypi") {
			// A conda environment's pip packages say "pypi" as their channel.
			kind = "pip"
		}
		if kind == "pip" {
			name = strings.ReplaceAll(name, "_", "-")
		}
		s.set(kind+":"+name, m[2], src, true)
		if k, ok := pipKeys[name]; ok {
			s.set(k, m[2], src, true)
		}
	}
	if len(s.r.Versions) == 0 {
		in.IssueAt(0, facts.IssueUnrecognized, "no package version found")
		return
	}
	out.Envs = append(out.Envs, s.r)
}
