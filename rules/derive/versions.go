package derive

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/coroner-dev/coroner/parser/facts"
)

// Versions of the catalog: which releases print a message, which release
// fixed the bug behind it, and which versions a bundle runs.
//
// A catalog entry's `affected` is a package and a range in pip's notation
// ("nccl >=2.5.6, <2.30.3"; clauses of several packages joined by ";"),
// derived from the release tags where the message exists
// (scripts/catalog-versions writes catalog/versions.yaml) or written from
// the upstream threads; `fixed` is a package and the first release with
// the fix ("vllm 0.8.5"). The signature rule compares both with what the
// bundle shows (versionsOf) and says so.

// Version is a release number in PEP 440's order, which also reads NCCL's
// tags (2.18.3-1), git tags (v0.8.5) and local parts (2.5.1+cu124, which
// are ignored).
type Version struct {
	Release []int
	// Pre is "a", "b" or "rc" with its number; Post and Dev their numbers,
	// -1 when absent.
	Pre        string
	PreN       int
	Post, Dev  int
	Text       string
	prePresent bool
}

var versionRE = regexp.MustCompile(`^[vV]?(\d+(?:\.\d+)*)(?:[-_.]?(a|alpha|b|beta|rc|c|pre|preview)[-_.]?(\d*))?(?:[-_.]?(?:post|rev|r)[-_.]?(\d+)|-(\d+))?(?:[-_.]?(dev)[-_.]?(\d*))?(?:\+[0-9A-Za-z._-]*)?$`)

// ParseVersion reads a version; ok is false for text that is none.
func ParseVersion(s string) (Version, bool) {
	s = strings.TrimSpace(s)
	m := versionRE.FindStringSubmatch(s)
	if m == nil {
		return Version{}, false
	}
	v := Version{Text: s, Post: -1, Dev: -1, PreN: -1}
	for _, p := range strings.Split(m[1], ".") {
		n, err := strconv.Atoi(p)
		if err != nil {
			return Version{}, false
		}
		v.Release = append(v.Release, n)
	}
	if m[2] != "" {
		v.prePresent = true
		switch m[2] {
		case "alpha":
			v.Pre = "a"
		case "beta":
			v.Pre = "b"
		case "c", "pre", "preview":
			v.Pre = "rc"
		default:
			v.Pre = m[2]
		}
		v.PreN, _ = strconv.Atoi(m[3])
	}
	switch {
	case m[4] != "":
		v.Post, _ = strconv.Atoi(m[4])
	case m[5] != "":
		// NCCL's "2.18.3-1" is a packaging revision of 2.18.3.
		v.Post, _ = strconv.Atoi(m[5])
	}
	if m[6] != "" {
		v.Dev, _ = strconv.Atoi(m[7])
	}
	return v, true
}

func (v Version) String() string { return v.Text }

// Compare returns -1, 0 or 1 as v is older than, the same as or newer
// than w.
func (v Version) Compare(w Version) int {
	n := max(len(v.Release), len(w.Release))
	for i := 0; i < n; i++ {
		a, b := at(v.Release, i), at(w.Release, i)
		if a != b {
			return sign(a - b)
		}
	}
	if c := sign(v.phase() - w.phase()); c != 0 {
		return c
	}
	if v.prePresent && w.prePresent {
		if c := strings.Compare(v.Pre, w.Pre); c != 0 {
			return c
		}
		if c := sign(v.PreN - w.PreN); c != 0 {
			return c
		}
	}
	if c := sign(v.Post - w.Post); c != 0 {
		return c
	}
	return sign(devRank(v.Dev) - devRank(w.Dev))
}

// phase orders what follows the release number: a bare dev release before
// a pre-release before the release.
func (v Version) phase() int {
	switch {
	case v.prePresent:
		return 1
	case v.Dev >= 0 && v.Post < 0:
		return 0
	}
	return 2
}

func devRank(d int) int {
	if d < 0 {
		return 1 << 30 // no dev part sorts after every dev release
	}
	return d
}

func at(r []int, i int) int {
	if i < len(r) {
		return r[i]
	}
	return 0
}

func sign(x int) int {
	switch {
	case x < 0:
		return -1
	case x > 0:
		return 1
	}
	return 0
}

// bound is one comparison of a range: ">=2.5.6".
type bound struct {
	op string
	v  Version
}

func (b bound) holds(v Version) bool {
	c := v.Compare(b.v)
	switch b.op {
	case ">=":
		return c >= 0
	case ">":
		return c > 0
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	case "==":
		return c == 0
	case "!=":
		return c != 0
	}
	return false
}

// Clause is one package's range: every bound must hold.
type Clause struct {
	Package string
	bounds  []bound
	Text    string
}

// Contains reports whether v is in the range.
func (c Clause) Contains(v Version) bool {
	for _, b := range c.bounds {
		if !b.holds(v) {
			return false
		}
	}
	return true
}

// Range is a catalog entry's affected versions: clauses of different
// packages, any of which may apply.
type Range []Clause

func (r Range) String() string {
	parts := make([]string, len(r))
	for i, c := range r {
		parts[i] = c.Text
	}
	return strings.Join(parts, "; ")
}

// Fix is the first release of a package with the fix.
type Fix struct {
	Package string
	Version Version
}

func (f Fix) String() string { return f.Package + " " + f.Version.Text }

var (
	clauseRE = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9_.-]*)\s+(.+)$`)
	boundRE  = regexp.MustCompile(`^(>=|<=|==|!=|>|<)\s*(\S+)$`)
)

// ParseRange reads "pkg >=1.2, <1.4; other <2"; "pkg *" is every release.
func ParseRange(s string) (Range, error) {
	var r Range
	for _, part := range strings.Split(s, ";") {
		part = strings.TrimSpace(part)
		m := clauseRE.FindStringSubmatch(part)
		if m == nil {
			return nil, fmt.Errorf("%q is not a package and a range (\"nccl >=2.5.6, <2.30\")", part)
		}
		c := Clause{Package: strings.ToLower(m[1]), Text: part}
		if strings.TrimSpace(m[2]) == "*" {
			// Every release: the message is as old as the package.
			r = append(r, c)
			continue
		}
		for _, bs := range strings.Split(m[2], ",") {
			bm := boundRE.FindStringSubmatch(strings.TrimSpace(bs))
			if bm == nil {
				return nil, fmt.Errorf("%q: %q is not a comparison (>=, >, <, <=, ==, !=) with a version", part, strings.TrimSpace(bs))
			}
			v, ok := ParseVersion(bm[2])
			if !ok {
				return nil, fmt.Errorf("%q: %q is not a version", part, bm[2])
			}
			c.bounds = append(c.bounds, bound{op: bm[1], v: v})
		}
		r = append(r, c)
	}
	return r, nil
}

// ParseFix reads "vllm 0.8.5".
func ParseFix(s string) (Fix, error) {
	f := strings.Fields(s)
	if len(f) != 2 {
		return Fix{}, fmt.Errorf("%q is not a package and a version (\"vllm 0.8.5\")", s)
	}
	v, ok := ParseVersion(f[1])
	if !ok {
		return Fix{}, fmt.Errorf("%q: %q is not a version", s, f[1])
	}
	return Fix{Package: strings.ToLower(f[0]), Version: v}, nil
}

// Running is a version the bundle shows, and where.
type Running struct {
	Version Version
	Src     facts.Source
	From    string // "collect-env", "pip list", "log banner", "image tag", "NCCL banner"
}

// versionKeys maps catalog package names to the keys envinfo reads
// (facts.EnvReport.Versions), the pip names after them.
var versionKeys = map[string][]string{
	"torch":           {"torch", "pip:torch"},
	"nccl":            {"nccl", "pip:nvidia-nccl-cu12", "pip:nvidia-nccl-cu13", "pip:nvidia-nccl-cu11"},
	"vllm":            {"vllm", "pip:vllm"},
	"sglang":          {"sglang", "pip:sglang"},
	"sgl_kernel":      {"sgl_kernel", "pip:sgl-kernel", "pip:sglang-kernel"},
	"flashinfer":      {"flashinfer", "pip:flashinfer-python", "pip:flashinfer"},
	"triton":          {"triton", "pip:triton", "pip:pytorch-triton"},
	"transformers":    {"transformers", "pip:transformers"},
	"deep_gemm":       {"pip:deep-gemm", "pip:deep_gemm"},
	"tensorrt_llm":    {"pip:tensorrt-llm", "pip:tensorrt_llm"},
	"tgi":             {"pip:text-generation-server", "pip:text-generation"},
	"lmdeploy":        {"lmdeploy", "pip:lmdeploy"},
	"ray":             {"pip:ray"},
	"xformers":        {"xformers", "pip:xformers"},
	"cuda":            {"cuda", "cuda_runtime", "cuda_build"},
	"driver":          {"driver"},
	"python":          {"python"},
	"urllib3":         {"pip:urllib3"},
	"huggingface_hub": {"pip:huggingface-hub"},
}

// imageTags reads an engine's version from a container image name.
var imageTags = []struct {
	re  *regexp.Regexp
	pkg string
}{
	{regexp.MustCompile(`(?:^|/)vllm(?:-openai)?:v?(\d+\.\d+\.\d+[0-9A-Za-z.]*)`), "vllm"},
	{regexp.MustCompile(`(?:^|/)sglang:v?(\d+\.\d+\.\d+[0-9A-Za-z.]*)`), "sglang"},
	{regexp.MustCompile(`text-generation-inference:v?(\d+\.\d+\.\d+)`), "tgi"},
}

// ncclBannerRE is the version NCCL prints when it starts ("NCCL version
// 2.21.5+cuda12.4") and torch repeats in its NCCL errors.
var ncclBannerRE = regexp.MustCompile(`NCCL version (\d+\.\d+\.\d+)`)

// versionsOf returns the versions of the catalog's packages that the
// bundle shows, the strongest evidence first: an environment report or a
// package list, then the engine's banner, then NCCL's own banner, then the
// container image's tag.
func versionsOf(soft []Reading) map[string]Running {
	out := map[string]Running{}
	set := func(pkg string, r Reading, from string) {
		if _, ok := out[pkg]; ok {
			return
		}
		if v, ok := ParseVersion(r.Value); ok {
			out[pkg] = Running{Version: v, Src: r.Src, From: from}
		}
	}
	pkgs := slices.Sorted(maps.Keys(versionKeys))
	for _, byKey := range EnvReports(soft) {
		for _, p := range pkgs {
			for _, k := range versionKeys[p] {
				if r, ok := byKey[k]; ok {
					set(p, r, r.Detail)
					break
				}
			}
		}
	}
	for _, r := range ReadingsOf(soft, ByBanner) {
		if r.Key != "" && r.Value != "" {
			set(r.Key, r, "log banner")
		}
	}
	if ms := ReadingsOf(soft, ByNCCLMention); len(ms) > 0 {
		set("nccl", ms[0], "NCCL banner")
	}
	for _, r := range ReadingsOf(soft, ByImageTag) {
		set(r.Key, r, "image tag "+r.Detail)
	}
	return out
}
