package pack

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/parser"
	"github.com/coroner-dev/coroner/rules"
)

const example = "../../fixtures/rulepack-example/site.rules.yaml"

func TestExamplePack(t *testing.T) {
	s, err := Load(example)
	require.NoError(t, err)
	require.Len(t, s.Packs, 1)
	p := s.Packs[0]
	require.Len(t, p.Signatures, 1)
	sig := p.Signatures[0]
	assert.Equal(t, "acmefs-stale-handle", sig.ID)
	assert.Equal(t, rules.CatSlowStorage, sig.Category)
	assert.Equal(t, example+":10", sig.Where)
	assert.True(t, sig.Match("acmefs.errors.StaleFileHandle: acmefs: stale file handle: /mnt/models/x"))

	var ids []string
	for _, r := range s.PackRules() {
		ids = append(ids, r.ID)
		assert.False(t, r.Builtin)
		assert.NotEmpty(t, r.Doc)
	}
	assert.Equal(t, []string{"acme-custom-ar-no-p2p", "acme-model-on-nfs", "acme-nccl-p2p-disabled"}, ids)
	nccl := rules.Lookup(s.Rules(), "acme-nccl-p2p-disabled")
	require.NotNil(t, nccl)
	assert.Equal(t, rules.SeverityError, nccl.Severity)
	assert.Equal(t, rules.CatConfig, nccl.Category)
	assert.Equal(t, []string{"https://wiki.acme.example/policy/nccl"}, nccl.References)

	// The set holds the built-in rules too, once each, and the catalog
	// the built-in signatures followed by the pack's.
	assert.Len(t, s.Rules(), len(rules.Registered())+3)
	assert.NoError(t, rules.CheckRegistry(s.Rules()))
	cat := s.Catalog()
	assert.Len(t, cat, len(rules.BuiltinCatalog())+1)
	assert.Equal(t, "acmefs-stale-handle", cat[len(cat)-1].ID)

	info, ok := s.Info("acme-model-on-nfs")
	require.True(t, ok)
	assert.Equal(t, example+":41", info.Where)
	assert.Contains(t, info.When, `settings["model_path"] startsWith "/mnt/"`)
	_, ok = s.Info("stall")
	assert.False(t, ok, "built-ins have no pack info")
}

func TestNoPacksIsTheBuiltinSet(t *testing.T) {
	s, err := Load()
	require.NoError(t, err)
	assert.Equal(t, rules.Registered(), s.Rules())
	assert.Len(t, s.Catalog(), len(rules.BuiltinCatalog()))
	assert.Empty(t, s.PackRules())
}

// badPack has one defect or more per entry; the test wants every one,
// each at the line and column a reader would point at.
const badPack = `rules:
  - id: Bad_Id
    title: t
    doc: d
    severity: loud
    categry: config
    when: state.ready
  - id: type-error
    title: t
    doc: d
    when: env["X"] > 3
  - id: block-error
    title: t
    doc: d
    when: |
      state.ready and
        gpus[0].nmae == "x"
  - id: needs-event
    title: t
    doc: d
    when: event.type == "oom"
  - id: bad-match
    title: t
    doc: d
    match:
      type: [traceback, tracebak, line]
      msg: '(unclosed'
  - id: bad-message
    title: t
    doc: d
    when: state.failed
    message: 'failed in {{ state.phse }}'
  - id: stall
    title: t
    doc: d
    when: state.ready
  - id: nothing
    title: t
    doc: d
  - id: type-error
    title: again
    doc: d
    when: state.alive
signatures:
  - id: sig-one
    pattern: '[z-a]'
    category: gpu-oom
    confidence: 0.5
    title: x
    colour: red
  - id: no-kernel-image
    pattern: 'x'
    category: gpu-oom
    confidence: 0.5
    title: x
`

func TestErrorsAllAtOnceWithPositions(t *testing.T) {
	_, err := Parse([]byte(badPack), "bad.yaml")
	require.Error(t, err)
	var es Errors
	require.ErrorAs(t, err, &es)
	got := strings.Split(err.Error(), "\n")
	want := []string{
		`bad.yaml:2:9: rule Bad_Id: id "Bad_Id" is not kebab-case`,
		`bad.yaml:5:15: rule Bad_Id: severity "loud" is not critical, error, warning or info`,
		`bad.yaml:6:5: rule Bad_Id: unknown field "categry"`,
		`bad.yaml:11:20: rule type-error: when: invalid operation: > (mismatched types string and int)`,
		`bad.yaml:17:17: rule block-error: when: type gpu has no field nmae`,
		`bad.yaml:21:11: rule needs-event: when: event is only set in a rule with match`,
		`bad.yaml:26:25: rule bad-match: match.type: "tracebak" is not an event type`,
		`bad.yaml:26:35: rule bad-match: match.type: "line" lines are not kept as events`,
		`bad.yaml:27:12: rule bad-match: match.msg: error parsing regexp`,
		`bad.yaml:32:34: rule bad-message: message: type state has no field phse`,
		`bad.yaml:33:9: rule stall: the id is already a built-in rule`,
		`bad.yaml:37:5: rule nothing: needs match, when, or both`,
		`bad.yaml:40:9: rule type-error: defined twice (first at line 8)`,
		`bad.yaml:46:14: signature sig-one: pattern: error parsing regexp`,
		`bad.yaml:50:5: signature sig-one: unknown field "colour"`,
		`bad.yaml:51:9: signature no-kernel-image: the id is already a built-in signature`,
	}
	require.Len(t, got, len(want), err.Error())
	for i, w := range want {
		assert.True(t, strings.HasPrefix(got[i], w), "error %d:\n got %s\nwant %s...", i, got[i], w)
	}
}

// TestPositionsInEveryScalarStyle points into expressions written as
// literal, folded, quoted and multi-line plain scalars.
func TestPositionsInEveryScalarStyle(t *testing.T) {
	_, err := Parse([]byte(`rules:
  - id: folded
    title: t
    doc: d
    when: >
      state.ready and
      gpus[0].nmae == "x"
  - id: double-quoted
    title: t
    doc: d
    when: "state.ready and nope"
  - id: plain-multi
    title: t
    doc: d
    when: state.ready and
      nope2
  - id: literal
    title: t
    doc: d
    when: |
      state.ready
        and nope3
`), "s.yaml")
	require.Error(t, err)
	assert.Equal(t, strings.Join([]string{
		`s.yaml:7:15: rule folded: when: type gpu has no field nmae`,
		`s.yaml:11:28: rule double-quoted: when: unknown name nope`,
		`s.yaml:16:7: rule plain-multi: when: unknown name nope2`,
		`s.yaml:22:13: rule literal: when: unknown name nope3`,
	}, "\n"), err.Error())
}

func TestCrossPackErrors(t *testing.T) {
	// What names another pack's rule or signature is checked when the
	// packs are put together: this one is fine on its own.
	p, err := Parse([]byte(`rules:
  - id: by-signature
    title: t
    doc: d
    match:
      signature: [no-such-signature, theirs]
signatures:
  - id: mine
    pattern: 'y'
    category: gpu-oom
    confidence: 0.5
    title: y
    owner: nobody
`), "cross.yaml")
	require.NoError(t, err)
	other, err := Parse([]byte("signatures:\n  - {id: theirs, pattern: z, category: config, confidence: 0.5, title: z}\n"), "other.yaml")
	require.NoError(t, err)
	_, err = New(p, other)
	require.Error(t, err)
	assert.Equal(t, strings.Join([]string{
		`cross.yaml:6:19: rule by-signature: match.signature: "no-such-signature" is no signature`,
		`cross.yaml:13:12: signature mine: owner "nobody" is no rule`,
	}, "\n"), err.Error())

	// Two packs that define the same rule: the second is the error.
	a, err := Parse([]byte("rules:\n  - {id: twin, title: t, doc: d, when: state.ready}\n"), "a.yaml")
	require.NoError(t, err)
	b, err := Parse([]byte("rules:\n  - {id: twin, title: t, doc: d, when: state.ready}\n"), "b.yaml")
	require.NoError(t, err)
	_, err = New(a, b)
	require.Error(t, err)
	assert.Equal(t, `b.yaml:2:10: rule twin: the id is already defined at a.yaml:2`, err.Error())
}

func TestSyntaxAndShapeErrors(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"syntax", "rules:\n  - id: x\n   title: y\n", "bad.yaml:3:"},
		{"empty", "", "bad.yaml:1:1: empty pack"},
		{"not a mapping", "42\n", `bad.yaml:1:1: pack: want a mapping`},
		{"rules not a list", "rules: {id: x}\n", `bad.yaml:1:8: rules: want a list`},
		{"unknown top key", "rule:\n  - id: x\n", `bad.yaml:1:1: pack: unknown field "rule"`},
		{"two documents", "rules: []\n---\nrules: []\n", "a pack is one YAML document"},
		{"missing file", "", "no such file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.name == "missing file" {
				_, err = Load("testdata/does-not-exist.yaml")
			} else {
				_, err = Parse([]byte(tc.src), "bad.yaml")
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestCatalogFile(t *testing.T) {
	// A plain list is a catalog, in the schema of the built-in one.
	p, err := Parse([]byte(`- id: our-oom
  pattern: 'acme-alloc: out of device memory'
  category: gpu-oom
  confidence: 0.8
  title: our allocator ran out of device memory
  remedy: lower --mem-fraction-static
`), "catalog.yaml")
	require.NoError(t, err)
	require.Len(t, p.Signatures, 1)
	assert.Empty(t, p.Rules)
	assert.Equal(t, rules.SeverityError, p.Signatures[0].Severity, "the catalog's default severity")
	assert.Equal(t, "catalog.yaml:1", p.Signatures[0].Where)
}

// seedView is the view of the seed hang bundle, whose files the
// expectations below were read from.
func seedView(t *testing.T) (*View, *rules.Index) {
	t.Helper()
	f, err := parser.Parse([]string{"../../fixtures/seed/flashinfer-sm120-hang"}, parser.Options{})
	require.NoError(t, err)
	idx := rules.Derive(f, nil)
	return newView(idx), idx
}

func TestViewOfSeedBundle(t *testing.T) {
	v, _ := seedView(t)
	tests := []struct {
		expr string
		want any
	}{
		{`engine`, "sglang"},
		// server_args at server.log:4 says flashinfer, tp_size=8.
		{`settings["attention_backend"]`, "flashinfer"},
		{`settings.tp_size`, "8"},
		{`settings.model_path`, "/models/Kimi-K2.5-INT4"},
		{`settings["no_such_setting"]`, ""},
		{`"no_such_setting" in settings`, false},
		// launch.sh:5 exports NCCL_P2P_LEVEL=SYS.
		{`env.NCCL_P2P_LEVEL`, "SYS"},
		{`"NCCL_P2P_DISABLE" in env`, false},
		// nvidia-smi-q.txt: 8 GPUs; the first at 100 % util, 79214 of 97887 MiB.
		{`len(gpus)`, 8},
		{`gpus[0].name`, "NVIDIA RTX PRO 6000 Blackwell Server Edition"},
		{`gpus[0].cc`, "12.0"},
		{`gpus[0].util`, 100.0},
		{`gpus[0].mem_used_mib`, 79214.0},
		{`gpus[0].mem_total_mib`, 97887.0},
		// ps_aux.txt: eight schedulers in R state; TP0 at 87:02 of CPU.
		{`count(procs, .role == "sglang-scheduler")`, 8},
		{`all(filter(procs, .role == "sglang-scheduler"), .state == "R")`, true},
		{`find(procs, .pid == 72309).cpu_s`, 87*60 + 2.0},
		{`find(procs, .pid == 72169).args startsWith "python3 -m sglang.launch_server"`, true},
		// health.txt: the probe failed; no ready line, no failure.
		{`state.alive`, true},
		{`state.ready`, false},
		{`state.failed`, false},
		{`state.probes_failed`, 1},
		{`state.phase`, "post-weights"},
		{`state.silence_s > 60 * 60`, true},
		{`log.lines`, 226},
		{`kinds["ps"]`, 1},
		// Eight ranks logged "Load weight begin" (server.log:143-150), none
		// an end: the hang is after the weights.
		{`len(events("load-begin"))`, 8},
		{`len(events("load-end"))`, 0},
		{`events("load-begin")[0].proc`, "TP1"},
		{`events("load-begin")[0].line`, 143},
	}
	for _, tc := range tests {
		t.Run(tc.expr, func(t *testing.T) {
			p, cerr := compile(tc.expr, false, true)
			require.Nil(t, cerr)
			got, err := p.run(newEnv(v))
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestCites(t *testing.T) {
	v, _ := seedView(t)
	tests := []struct {
		expr string
		want []string // file:line of each cited piece of evidence
	}{
		// A setting cites where the engine logged it, not the launch line.
		{`settings.attention_backend == "flashinfer"`, []string{"server.log:4"}},
		{`env["NCCL_P2P_LEVEL"] == "SYS"`, []string{"launch.sh:5"}},
		// A predicate cites the first items it held for.
		{`any(procs, .role == "sglang-scheduler" and .cpu_s > 5150)`, []string{"ps_aux.txt:8", "ps_aux.txt:12"}},
		{`any(gpus, .util == 100)`, []string{"nvidia-smi-q.txt:9", "nvidia-smi-q.txt:264", "nvidia-smi-q.txt:519"}},
		// none(...) holds for no item: the snapshot is the evidence.
		{`none(procs, .role == "compiler")`, []string{"ps_aux.txt:1"}},
	}
	for _, tc := range tests {
		t.Run(tc.expr, func(t *testing.T) {
			p, cerr := compile(tc.expr, true, true)
			require.Nil(t, cerr)
			e := newEnv(v)
			ok, err := p.bool(e)
			require.NoError(t, err)
			require.True(t, ok)
			var got []string
			for _, ev := range p.cites(e) {
				got = append(got, ev.Src.String())
			}
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestRunFiresQuietAndInconclusive(t *testing.T) {
	_, idx := seedView(t)
	pk, err := Parse([]byte(`rules:
  - id: flashinfer-on-blackwell
    title: flashinfer on an SM120 GPU
    doc: d
    category: attention-backend
    confidence: 0.6
    when: settings.attention_backend == "flashinfer" and any(gpus, .cc == "12.0")
    message: '{{ settings.attention_backend }} on {{ len(gpus) }} GPU(s) of cc {{ gpus[0].cc }}'
  - id: triton-anywhere
    title: triton
    doc: d
    when: settings.attention_backend == "triton"
  - id: ninth-gpu
    title: a ninth GPU
    doc: d
    when: gpus[8].util > 50
  - id: weights-loaded
    title: weights loaded
    doc: d
    severity: info
    match:
      type: load-begin
      msg: 'Load weight begin'
    when: event.proc == "TP3"
`), "t.yaml")
	require.NoError(t, err)
	set, err := New(pk)
	require.NoError(t, err)
	res := &rules.Result{}
	for _, r := range set.PackRules() {
		one := rules.Run(idx.Facts, rules.Options{Rules: []*rules.Rule{r}})
		res.Findings = append(res.Findings, one.Findings...)
		res.Inconclusive = append(res.Inconclusive, one.Inconclusive...)
	}
	require.Len(t, res.Findings, 2)
	byRule := map[string]rules.Finding{}
	for _, f := range res.Findings {
		byRule[f.Rule] = f
	}
	fi := byRule["flashinfer-on-blackwell"]
	assert.Equal(t, "flashinfer on 8 GPU(s) of cc 12.0", fi.Message)
	assert.Equal(t, rules.CatAttentionBackend, fi.Category)
	assert.Equal(t, rules.SeverityWarning, fi.Severity, "the default severity")
	assert.Equal(t, 0.6, fi.Confidence)
	assert.True(t, fi.Cause, "a category makes a cause")
	require.NotEmpty(t, fi.Evidence)
	assert.Equal(t, "server.log:4", fi.Evidence[0].Src.String())
	assert.Equal(t, "nvidia-smi-q.txt:9", fi.Evidence[1].Src.String())

	wl := byRule["weights-loaded"]
	assert.False(t, wl.Cause)
	require.NotEmpty(t, wl.Evidence)
	assert.Equal(t, "Matched 1 time(s), first at server.log:148: Load weight begin. avail mem=93.47 GB", wl.Message)
	assert.Equal(t, "server.log:148", wl.Evidence[0].Src.String())

	require.Len(t, res.Inconclusive, 1)
	assert.Equal(t, "ninth-gpu", res.Inconclusive[0].Rule)
	assert.Contains(t, res.Inconclusive[0].Missing[0], "t.yaml:13")
}

// TestEventTypesComplete keeps the list of event types a match may name
// in step with parser/facts.
func TestEventTypesComplete(t *testing.T) {
	src, err := os.ReadFile("../../parser/facts/log.go")
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^\s+Event\w+\s+EventType = "([a-z0-9-]+)"`).FindAllStringSubmatch(string(src), -1)
	require.Greater(t, len(m), 50)
	for _, x := range m {
		name := x[1]
		assert.True(t, knownEventType(name) || containsStr(eventNames(notEvents), name), "event type %q is missing from eventTypes", name)
		if knownEventType(name) {
			assert.Regexp(t, `\s`+regexp.QuoteMeta(name)+`\s`, refEventTypes(), "Reference lists the event types")
		}
	}
}

// refEventTypes is the event type list of Reference.
func refEventTypes() string {
	s := Reference[strings.Index(Reference, "Event types:"):]
	return s[:strings.Index(s, "\n\n")+1]
}

// TestDocsNameTheView keeps Reference and the README's User rules
// section in step with the view.
func TestDocsNameTheView(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	section := string(readme)
	require.Contains(t, section, "## User rules")
	section = section[strings.Index(section, "## User rules"):]
	section = section[:strings.Index(section[3:], "\n## ")+3]
	for _, typ := range []any{View{}, GPU{}, Proc{}, Disk{}, State{}, Log{}, Event{}, env{}} {
		rt := reflect.TypeOf(typ)
		for i := 0; i < rt.NumField(); i++ {
			tag := rt.Field(i).Tag.Get("expr")
			if tag == "" || tag == "-" {
				continue
			}
			assert.Regexp(t, `\b`+regexp.QuoteMeta(tag)+`\b`, Reference, "Reference: %s.%s", rt.Name(), tag)
			assert.Contains(t, section, "`"+tag, "README: %s.%s", rt.Name(), tag)
		}
	}
}

// A pack rule can work at the layers below the exact signatures: the
// library that owns a traceback's innermost frames, the phase coroner
// placed the failure in, the frames themselves.
func TestPackRuleReadsTheFailingLibraryAndPhase(t *testing.T) {
	dir := t.TempDir()
	// sgl-project/sglang CI (flashinfer-ai/flashinfer#1892), as pasted.
	log := `[2025-10-09 04:13:01 TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=62.10 GB
[2025-10-09 04:13:06 TP0] Scheduler hit an exception: Traceback (most recent call last):
  File "/sglang/python/sglang/srt/model_executor/cuda_graph_runner.py", line 485, in capture
    ) = self.capture_one_batch_size(bs, forward)
  File "/sglang/python/sglang/srt/model_executor/cuda_graph_runner.py", line 661, in capture_one_batch_size
    run_once()
RuntimeError: CUDA error: operation not permitted when stream is capturing
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "server.log"), []byte(log), 0o644))
	f, err := parser.Parse([]string{dir}, parser.Options{})
	require.NoError(t, err)
	pk, err := Parse([]byte(`rules:
  - id: capture-in-graph-runner
    title: a capture failure raised in the graph runner
    doc: d
    category: cuda-graph
    match:
      type: traceback
    when: event.library == "cuda-graph" and event.phase == "cuda-graph-capture" and "capture_one_batch_size" in event.frames
    message: '{{ event.exc_type }} in {{ event.library }}, {{ event.phase }}'
`), "t.yaml")
	require.NoError(t, err)
	set, err := New(pk)
	require.NoError(t, err)
	res := rules.Run(f, rules.Options{Rules: set.PackRules()})
	require.Len(t, res.Findings, 1, "%+v", res.Inconclusive)
	assert.Equal(t, "RuntimeError in cuda-graph, cuda-graph-capture", res.Findings[0].Message)
}

// A pack rule can be a prior: it reads the host's memory and the GPU
// topology as the built-in priors do, and cites them. The bundle is the
// real 2 x H200 capture (NVLink, 252 GiB) with a log whose failure names no
// cause of its own.
func TestPackRuleAtThePriorLayer(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"topo.txt", "00-idle/meminfo.txt"} {
		data, err := os.ReadFile(filepath.Join("../../fixtures/corpus/h200-x2", name))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, filepath.Base(name)), data, 0o644))
	}
	// vllm-project/vllm#4653, as pasted: the worker's RPC fails, nothing says why.
	log := "ERROR 05-07 13:02:07 worker_base.py:145] Error executing method init_device. This might cause deadlock in distributed execution.\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "server.log"), []byte(log), 0o644))
	f, err := parser.Parse([]string{dir}, parser.Options{})
	require.NoError(t, err)
	const fallback = `
  - id: acme-any-failure-is-config
    title: a failure nothing else explains is our config
    doc: d
    category: config
    layer: fallback
    when: len(events("error")) > 0
`
	run := func(pack string) *rules.Result {
		pk, err := Parse([]byte(pack), "t.yaml")
		require.NoError(t, err)
		set, err := New(pk)
		require.NoError(t, err)
		return rules.Run(f, rules.Options{Rules: set.PackRules()})
	}
	res := run(`rules:
  - id: acme-nvlink-big-host
    title: our NVLink hosts with room in memory fail on the fabric manager first
    doc: d
    category: nccl-p2p
    layer: prior
    confidence: 0.3
    when: topology.nvlink and memory.total_gib > 200 and len(events("error")) > 0
    message: 'NVLink ({{ topology.links }}) and {{ memory.total_gib }} GiB'` + fallback)
	var prior *rules.Finding
	for i := range res.Findings {
		if res.Findings[i].Rule == "acme-nvlink-big-host" {
			prior = &res.Findings[i]
		}
	}
	require.NotNil(t, prior, "%+v", res.Findings)
	assert.Contains(t, prior.Message, "NVLink ([NV18]) and 251.")
	assert.Contains(t, prior.Why, "layer prior")
	var cited []string
	for _, e := range prior.Evidence {
		cited = append(cited, e.Src.File)
	}
	assert.Subset(t, cited, []string{"topo.txt", "meminfo.txt"})
	for _, c := range res.Verdict.Causes {
		assert.NotEqual(t, rules.CatConfig, c.Category, "the fallback counts only when nothing else names a cause")
	}

	// Alone, the fallback names the cause.
	res = run("rules:" + fallback)
	require.NotEmpty(t, res.Verdict.Causes)
	assert.Equal(t, rules.CatConfig, res.Verdict.Causes[0].Category)
}

func TestPackLayerErrors(t *testing.T) {
	_, err := Parse([]byte(`rules:
  - id: a-rule
    title: t
    doc: d
    category: config
    layer: hunch
    when: state.failed
  - id: b-rule
    title: t
    doc: d
    cause: false
    layer: prior
    when: state.failed
`), "t.yaml")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `t.yaml:6:12: rule a-rule: layer "hunch" is not one of class, library, prior, fallback`)
	assert.Contains(t, err.Error(), "t.yaml:12:12: rule b-rule: a layer ranks a cause; this rule names none")
}
