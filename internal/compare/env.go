package compare

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/coroner-dev/coroner/internal/envpolicy"
	"github.com/coroner-dev/coroner/internal/redact"
	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/rules"
)

// EnvRow is an environment variable that differs.
type EnvRow struct {
	Name string    `json:"name"`
	A    *EnvValue `json:"a"`
	B    *EnvValue `json:"b"`
}

// EnvValue is a variable's value in one run.
type EnvValue struct {
	Value string `json:"value"`
	From  string `json:"from"`
	Ref   *Ref   `json:"ref,omitempty"`
}

// envFromRank prefers what the launch set over what an env report saw.
var envFromRank = map[string]int{"cmdline": 0, "env": 1, "manifest": 2, "collect-env": 3, "check-env": 4}

func runEnv(r Run) map[string]*EnvValue {
	out := map[string]*EnvValue{}
	for _, e := range r.Facts.Env {
		if !tracked(e.Name) {
			continue
		}
		v := &EnvValue{Value: e.Value, From: e.From, Ref: refOf(e.Src)}
		// The policy of internal/redact, the one a bundle's redaction
		// follows: TOKENIZERS_PARALLELISM is shown, HF_TOKEN is not.
		if redact.Conceal(e.Name, e.Value) {
			v.Value = "(set, not shown)"
		}
		if cur, ok := out[e.Name]; !ok || envFromRank[e.From] < envFromRank[cur.From] {
			out[e.Name] = v
		}
	}
	return out
}

// tracked reports the variables a diff compares: those that change how
// the engines, PyTorch, CUDA and NCCL behave (envpolicy.Diff).
func tracked(name string) bool { return envpolicy.Matters(name, envpolicy.Diff) }

func envDiff(a, b Run) ([]EnvRow, int) {
	ea, eb := runEnv(a), runEnv(b)
	var rows []EnvRow
	same := 0
	for _, k := range unionKeys(ea, eb) {
		va, vb := ea[k], eb[k]
		if va != nil && vb != nil && va.Value == vb.Value {
			same++
			continue
		}
		rows = append(rows, EnvRow{Name: k, A: va, B: vb})
	}
	return rows, same
}

// VersionRow is one component's version in both runs.
type VersionRow struct {
	Component string `json:"component"`
	A         string `json:"a,omitempty"`
	B         string `json:"b,omitempty"`
	ARef      *Ref   `json:"a_ref,omitempty"`
	BRef      *Ref   `json:"b_ref,omitempty"`
	Differs   bool   `json:"differs"`
}

// components are the versions worth setting side by side, in the order a
// reader looks for them, with the env-report keys that give each.
var components = []struct {
	name string
	keys []string
}{
	{"sglang", []string{"sglang"}},
	{"vllm", []string{"vllm"}},
	{"torch", []string{"torch"}},
	{"cuda (torch build)", []string{"cuda_build"}},
	{"cuda runtime", []string{"cuda_runtime", "cuda_toolkit"}},
	{"nccl", []string{"nccl"}},
	{"flashinfer", []string{"flashinfer"}},
	{"triton", []string{"triton"}},
	{"sgl-kernel", []string{"sgl_kernel", "sglang_kernel"}},
	{"transformers", []string{"transformers"}},
	{"xgrammar", []string{"xgrammar"}},
	{"python", []string{"python"}},
	{"driver", []string{"driver"}},
}

type version struct {
	v   string
	src facts.Source
}

// runVersions picks each component's version from the run's readings
// (rules.Index.Software): what the engine's log printed first, then env
// reports, then nvidia-smi's driver.
func runVersions(r Run) map[string]version {
	out := map[string]version{}
	set := func(name, v string, src facts.Source) {
		if _, ok := out[name]; !ok && v != "" && v != "Module Not Found" {
			out[name] = version{v, src}
		}
	}
	soft := r.Result.Index.Software()
	for _, rd := range soft {
		switch rd.Kind {
		case rules.ByBanner:
			if rd.Key != "" { // a version of no engine it could name
				set(rd.Key, rd.Value, rd.Src)
			}
		case rules.ByNCCLRuntime:
			set("nccl", rd.Value, rd.Src)
		}
	}
	for _, byKey := range rules.EnvReports(soft) {
		for _, c := range components {
			for _, k := range c.keys {
				if rd := byKey[k]; rd.Value != "" {
					set(c.name, rd.Value, rd.Src)
					break
				}
			}
		}
	}
	for _, rd := range rules.ReadingsOf(soft, rules.BySnapshot) {
		if rd.Key == "driver" {
			set("driver", rd.Value, rd.Src)
		}
	}
	return out
}

func versions(a, b Run) []VersionRow {
	va, vb := runVersions(a), runVersions(b)
	var rows []VersionRow
	for _, c := range components {
		x, y := va[c.name], vb[c.name]
		if x.v == "" && y.v == "" {
			continue
		}
		row := VersionRow{Component: c.name, A: x.v, B: y.v, Differs: x.v != y.v}
		if x.v != "" {
			row.ARef = refOf(x.src)
		}
		if y.v != "" {
			row.BRef = refOf(y.src)
		}
		rows = append(rows, row)
	}
	return rows
}

// GPURow is both runs' GPUs in a few words.
type GPURow struct {
	A       string `json:"a"`
	B       string `json:"b"`
	ARef    *Ref   `json:"a_ref,omitempty"`
	BRef    *Ref   `json:"b_ref,omitempty"`
	Differs bool   `json:"differs"`
}

func gpus(a, b Run) GPURow {
	ga, ra := gpuWords(a)
	gb, rb := gpuWords(b)
	return GPURow{A: ga, B: gb, ARef: ra, BRef: rb, Differs: ga != gb}
}

// gpuWords summarizes a run's GPUs: "8 × NVIDIA H200 (SM 9.0, 140 GiB)".
func gpuWords(r Run) (string, *Ref) {
	inv := r.Result.Index.Inventory()
	if len(inv) == 0 {
		for _, rep := range r.Facts.Envs {
			if len(rep.GPUs) > 0 {
				return gpuLines(rep.GPUs), refOf(rep.Src)
			}
		}
		return "", nil
	}
	type group struct {
		desc string
		n    int
	}
	var gs []group
	for _, g := range inv {
		desc := g.Name
		if desc == "" {
			desc = "unnamed GPU"
		}
		var extra []string
		if g.CC != "" {
			extra = append(extra, "SM "+g.CC)
		}
		if g.MemMiB > 0 {
			extra = append(extra, fmt.Sprintf("%.0f GiB", g.MemMiB/1024))
		}
		if len(extra) > 0 {
			desc += " (" + strings.Join(extra, ", ") + ")"
		}
		if n := len(gs); n > 0 && gs[n-1].desc == desc {
			gs[n-1].n++
			continue
		}
		gs = append(gs, group{desc, 1})
	}
	var parts []string
	for _, g := range gs {
		parts = append(parts, fmt.Sprintf("%d × %s", g.n, g.desc))
	}
	return strings.Join(parts, " + "), refOf(inv[0].Src)
}

// gpuLines summarizes "GPU 0: NAME" lines of an env report.
func gpuLines(lines []string) string {
	count := map[string]int{}
	for _, l := range lines {
		name := l
		if i := strings.Index(l, ": "); i >= 0 {
			name = l[i+2:]
		}
		count[name]++
	}
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(count)) {
		parts = append(parts, fmt.Sprintf("%d × %s", count[name], name))
	}
	sort.Strings(parts)
	return strings.Join(parts, " + ")
}
