package reports

import (
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/coroner-dev/coroner/internal/envpolicy"
	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/rules"
)

// Environment is what the run ran on and with. Every value cites the file and
// line it was read from, so a reader can check it against the evidence.
type Environment struct {
	// Engine is the inference engine whose log the bundle holds (sglang,
	// vllm), "" when no log names one. Its version is in Software.
	Engine string     `json:"engine"`
	GPUs   []GPUGroup `json:"gpus"`
	// Software holds the engine, driver, CUDA, torch, NCCL and library
	// versions, in a fixed order: the engine first ("unknown" when its log
	// does not say), then the CUDA stack, then the rest by name.
	Software []Item `json:"software"`
	// ServerArgs are the engine arguments that matter to a diagnosis, and
	// every argument given on the launch command line, sorted by name.
	ServerArgs []Item `json:"server_args"`
	// EnvVars are the NCCL_*, CUDA_*, VLLM_*, SGLANG_*, PYTORCH_*, TORCH_*
	// (and related) variables, sorted by name then source.
	EnvVars []Item `json:"env_vars"`
	// System is the OS, kernel and host.
	System []Item `json:"system"`
}

// Item is one named value and where it was read.
type Item struct {
	Name   string   `json:"name"`
	Value  string   `json:"value"`
	Source Location `json:"source"`
	// Note says how a value relates to another source (a launch flag the
	// engine resolved differently).
	Note string `json:"note,omitempty"`
}

// GPUGroup is a set of identical GPUs of one nvidia-smi snapshot.
type GPUGroup struct {
	Model             string   `json:"model"`
	Count             int      `json:"count"`
	Indexes           []int    `json:"indexes,omitempty"`
	Arch              string   `json:"arch,omitempty"`
	ComputeCapability string   `json:"compute_capability,omitempty"`
	MemoryMiB         float64  `json:"memory_mib,omitempty"`
	Source            Location `json:"source"`
}

// empty reports an environment the bundle says nothing of.
func (e Environment) empty() bool {
	return len(e.GPUs)+len(e.Software)+len(e.ServerArgs)+len(e.EnvVars)+len(e.System) == 0
}

func buildEnvironment(idx *rules.Index) Environment {
	if idx == nil { // a report of sources only
		return Environment{GPUs: []GPUGroup{}, Software: []Item{}, ServerArgs: []Item{}, EnvVars: []Item{}, System: []Item{}}
	}
	return Environment{
		GPUs: gpuGroups(idx.Inventory()), Engine: string(idx.Engine()),
		Software: software(idx), ServerArgs: serverArgs(idx.Facts.Settings), EnvVars: envVars(idx.Facts.Env), System: system(idx),
	}
}

// gpuGroups sums up the bundle's GPUs (the rules' inventory: every
// snapshot, else nvidia-smi -L and environment reports) as groups of one
// model, capability and memory, in inventory order.
func gpuGroups(inv []rules.GPUInfo) []GPUGroup {
	out := []GPUGroup{}
	for _, g := range inv {
		mem := math.Round(g.MemMiB)
		found := false
		for i := range out {
			o := &out[i]
			if o.Model == g.Name && o.ComputeCapability == g.CC && o.MemoryMiB == mem && o.Arch == g.Arch {
				o.Count++
				if g.Index >= 0 && !slices.Contains(o.Indexes, g.Index) {
					o.Indexes = append(o.Indexes, g.Index)
				}
				found = true
				break
			}
		}
		if !found {
			grp := GPUGroup{Model: g.Name, Count: 1, Arch: g.Arch, ComputeCapability: g.CC, MemoryMiB: mem,
				Source: Location{File: g.Src.File, Line: g.Src.Line}}
			if g.Index >= 0 {
				grp.Indexes = []int{g.Index}
			}
			out = append(out, grp)
		}
	}
	return out
}

// softwareOrder ranks the components shown first; the rest follow by name.
var softwareOrder = []string{"sglang", "vllm", "driver", "cuda-driver", "cuda-runtime", "cuda-torch", "torch", "nccl", "nccl-runtime", "cudnn", "python"}

// envReportKeys maps the version keys of env reports (collect_env,
// check_env) to the names the report uses; pip packages matching
// relevantPip are added under their package name.
var envReportKeys = map[string]string{
	"driver": "driver", "cuda_runtime": "cuda-runtime", "cuda_build": "cuda-torch", "torch": "torch",
	"nccl": "nccl", "cudnn": "cudnn", "python": "python", "triton": "triton", "vllm": "vllm",
	"sglang": "sglang", "flashinfer": "flashinfer", "transformers": "transformers", "xformers": "xformers",
	"sgl_kernel": "sgl-kernel", "flash_attn": "flash-attn", "deep_gemm": "deep-gemm",
}

var relevantPip = regexp.MustCompile(`^(torch|triton|vllm|sglang|sgl[-_]kernel|flashinfer.*|xformers|transformers|flash[-_]attn.*|deep[-_]gemm|nvidia-nccl.*|cuda-python|tensorrt.*|ray)$`)

func software(idx *rules.Index) []Item {
	var out []Item
	seen := map[string]bool{}
	add := func(name, value string, src facts.Source, note string) {
		value = strings.TrimSpace(value)
		if value == "" {
			return
		}
		key := name + "\x00" + value
		if seen[key] {
			return
		}
		seen[key] = true
		out = append(out, Item{Name: name, Value: value, Source: loc2(src), Note: note})
	}
	soft := idx.Software()
	engineLog := map[int]bool{}
	for _, r := range rules.ReadingsOf(soft, rules.ByBanner) {
		if r.Key != "" {
			engineLog[r.Group] = true
		}
	}
	for _, r := range soft {
		switch {
		case r.Kind == rules.ByBanner && r.Key == "":
			// A version of no engine the log names: no row to put it in.
		case r.Kind == rules.ByBanner && r.Value != "":
			add(r.Key, r.Value, r.Src, "")
		case r.Kind == rules.ByBanner:
			add(r.Key, "unknown", r.Src, "the log does not print its version")
		case r.Kind == rules.ByNCCLRuntime && engineLog[r.Group]:
			add("nccl-runtime", r.Value, r.Src, "as the engine loaded it")
		}
	}
	// A log of no engine (nccl-tests, a training script) prints the NCCL
	// its own process loaded, as telling for an NCCL bug; after the
	// engines', which speak for the server.
	for _, r := range rules.ReadingsOf(soft, rules.ByNCCLRuntime) {
		if !engineLog[r.Group] {
			add("nccl-runtime", r.Value, r.Src, "as the log's process loaded it")
		}
	}
	for _, r := range rules.ReadingsOf(soft, rules.BySnapshot) {
		note := ""
		if r.Key == "cuda-driver" {
			note = "the newest CUDA the driver supports"
		}
		add(r.Key, r.Value, r.Src, note)
	}
	envs := rules.ReadingsOf(soft, rules.ByEnvReport)
	type reportKey struct {
		group int
		key   string
	}
	inReport := map[reportKey]bool{}
	// shown are the lines a report key is read from: a package list line
	// a report key was read from (collect_env's pip section gives its
	// "nccl") is that row already.
	shown := map[facts.Source]string{}
	for _, r := range envs {
		inReport[reportKey{r.Group, r.Key}] = true
		if _, ok := envReportKeys[r.Key]; ok && r.Src.Line > 0 {
			shown[r.Src] = r.Value
		}
	}
	for _, r := range envs {
		if name, ok := envReportKeys[r.Key]; ok {
			add(name, r.Value, r.Src, "")
			continue
		}
		if pkg, ok := strings.CutPrefix(r.Key, "pip:"); ok && relevantPip.MatchString(pkg) {
			if inReport[reportKey{r.Group, strings.ReplaceAll(pkg, "-", "_")}] {
				continue // the report's own line for it is shown
			}
			if v, ok := shown[r.Src]; ok && v == r.Value {
				continue
			}
			add(pkg, r.Value, r.Src, "pip")
		}
	}
	for _, r := range rules.ReadingsOf(soft, rules.BySystem) {
		switch r.Key {
		case "driver":
			add("driver", r.Value, r.Src, "")
		case "cuda_driver":
			add("cuda-driver", r.Value, r.Src, "the newest CUDA the driver supports")
		}
	}
	rank := func(name string) int {
		for i, n := range softwareOrder {
			if n == name {
				return i
			}
		}
		return len(softwareOrder)
	}
	sort.SliceStable(out, func(i, j int) bool {
		ri, rj := rank(out[i].Name), rank(out[j].Name)
		if ri != rj {
			return ri < rj
		}
		return out[i].Name < out[j].Name
	})
	if out == nil {
		out = []Item{}
	}
	return out
}

// keyArgs are the engine arguments a diagnosis most often turns on; they
// are shown whenever a settings dump holds them. Arguments given on the
// command line are shown too, whatever their name: the user chose them.
var keyArgs = map[string]bool{
	"model_path": true, "model": true, "quantization": true, "dtype": true,
	"kv_cache_dtype": true, "load_format": true,
	"tp_size": true, "tensor_parallel_size": true, "dp_size": true, "data_parallel_size": true,
	"ep_size": true, "pp_size": true, "pipeline_parallel_size": true, "enable_expert_parallel": true,
	"enable_dp_attention": true, "nnodes": true, "distributed_executor_backend": true,
	"attention_backend": true, "decode_attention_backend": true, "prefill_attention_backend": true,
	"sampling_backend": true, "moe_runner_backend": true, "moe_a2a_backend": true,
	"mem_fraction_static": true, "gpu_memory_utilization": true, "max_total_tokens": true,
	"max_model_len": true, "context_length": true, "max_num_seqs": true, "max_running_requests": true,
	"max_num_batched_tokens": true, "chunked_prefill_size": true,
	"cuda_graph_max_bs": true, "cuda_graph_bs": true, "disable_cuda_graph": true, "enforce_eager": true,
	"cuda_graph_sizes": true, "compilation_config": true, "enable_torch_compile": true,
	"disable_custom_all_reduce": true, "enable_p2p_check": true, "num_continuous_decode_steps": true,
	"speculative_algorithm": true, "speculative_config": true, "speculative_draft_model_path": true,
	"speculative_num_steps": true, "speculative_eagle_topk": true, "speculative_num_draft_tokens": true,
	"speculative_model": true, "num_speculative_tokens": true, "trust_remote_code": true,
}

// argsFromLog are the Setting.From values of settings the engine printed.
func argsFromLog(from string) bool { return from == "server-args" || from == "non-default-args" }

func serverArgs(settings []*facts.Setting) []Item {
	type choice struct {
		log, cmd *facts.Setting
	}
	byKey := map[string]*choice{}
	for _, s := range settings {
		c := byKey[s.Key]
		if c == nil {
			c = &choice{}
			byKey[s.Key] = c
		}
		switch {
		case argsFromLog(s.From):
			if c.log == nil {
				c.log = s
			}
		case s.From == "cmdline":
			if c.cmd == nil {
				c.cmd = s
			}
		}
	}
	out := []Item{}
	for _, k := range slices.Sorted(maps.Keys(byKey)) {
		c := byKey[k]
		if c.cmd == nil && (!keyArgs[k] || c.log == nil || uninformative(k, c.log.Value)) {
			continue
		}
		// What the engine printed is what it ran with; the launch line is
		// what the user asked for. Show the first, and the second when they
		// differ.
		s, note := c.log, ""
		if s == nil || unset(s.Value) {
			s = c.cmd
		} else if c.cmd != nil && !sameArg(c.cmd.Value, s.Value) {
			note = fmt.Sprintf("the launch command (%s) sets %s", c.cmd.Src, c.cmd.Value)
		}
		out = append(out, Item{Name: k, Value: s.Value, Source: loc2(s.Src), Note: note})
	}
	return out
}

func unset(v string) bool { return v == "" || v == "None" || v == "null" }

// uninformative reports a printed value that says only "the default": off,
// automatic, or a parallel size of one.
func uninformative(key, v string) bool {
	switch strings.ToLower(strings.Trim(v, `'"`)) {
	case "", "none", "null", "false", "auto", "[]", "{}":
		return true
	case "1":
		return strings.HasSuffix(key, "_size") || key == "nnodes"
	}
	return false
}

// sameArg compares a flag's value with the engine's print of it, which
// quotes strings and capitalizes booleans.
func sameArg(a, b string) bool {
	norm := func(s string) string {
		s = strings.Trim(strings.TrimSpace(s), `'"`)
		return strings.ToLower(s)
	}
	return norm(a) == norm(b)
}

// envVars are the variables that shape GPU, NCCL and engine behavior
// (envpolicy.Report), each value once.
func envVars(vars []*facts.EnvVar) []Item {
	out := []Item{}
	seen := map[string]bool{}
	for _, e := range vars {
		ok := envpolicy.Matters(e.Name, envpolicy.Report)
		key := e.Name + "\x00" + e.Value
		if !ok || seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, Item{Name: e.Name, Value: e.Value, Source: loc2(e.Src)})
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		if a.Source.File != b.Source.File {
			return a.Source.File < b.Source.File
		}
		return a.Source.Line < b.Source.Line
	})
	return out
}

func system(idx *rules.Index) []Item {
	out := []Item{}
	have := map[string]bool{}
	for _, r := range idx.Platform() {
		value := strings.TrimSpace(r.Value)
		if value == "" || have[r.Key] {
			continue
		}
		have[r.Key] = true
		out = append(out, Item{Name: r.Key, Value: value, Source: loc2(r.Src)})
	}
	order := map[string]int{"os": 0, "kernel": 1, "arch": 2, "cpu": 3, "hypervisor": 4, "host": 5}
	sort.SliceStable(out, func(i, j int) bool { return order[out[i].Name] < order[out[j].Name] })
	return out
}

func loc2(s facts.Source) Location { return Location{File: s.File, Line: s.Line} }
