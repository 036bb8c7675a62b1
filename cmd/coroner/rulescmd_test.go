package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/rules"
	"github.com/coroner-dev/coroner/rules/pack"
)

const (
	examplePackDir = "../../fixtures/rulepack-example"
	examplePack    = examplePackDir + "/site.rules.yaml"
)

func TestRulesList(t *testing.T) {
	code, out, errs := runCLI(t, "", "rules", "list")
	require.Equal(t, exitOK, code, errs)
	table, summary, _ := strings.Cut(out, "\n\n")
	lines := strings.Split(table, "\n")
	assert.Regexp(t, `^ID\s+SEVERITY\s+CATEGORY\s+TITLE$`, lines[0])
	// Every built-in rule, and the suppression rule, one row each; then the catalog's size.
	assert.Len(t, lines, 1+len(rules.Registered())+1)
	assert.Regexp(t, `^catalog: \d{3} signatures, \d+ classes of errors, \d+ relays in \d+ categories .*; \d+ Xid codes`, summary)
	assert.Regexp(t, `(?m)^stall\s+error\s+-\s+startup stalled`, out)
	assert.Regexp(t, `(?m)^suppression\s+info\s+-\s+suppression matched no finding$`, out)
	assert.NotContains(t, out, "acme-")

	code, out, errs = runCLI(t, "", "rules", "list", "--rules", examplePack)
	require.Equal(t, exitOK, code, errs)
	assert.Regexp(t, `(?m)^acme-nccl-p2p-disabled\s+error\s+config\s+NCCL_P2P_DISABLE=1 is set`, out)
	assert.Regexp(t, `(?m)^acme-model-on-nfs\s+warning\s+slow-storage\s+`, out)

	code, out, errs = runCLI(t, "", "rules", "list", "--format", "json", "--rules", examplePack)
	require.Equal(t, exitOK, code, errs)
	var list []ruleJSON
	require.NoError(t, json.Unmarshal([]byte(out), &list))
	byID := map[string]ruleJSON{}
	for _, r := range list {
		byID[r.ID] = r
	}
	nfs := byID["acme-model-on-nfs"]
	assert.False(t, nfs.Builtin)
	assert.Equal(t, examplePack+":41", nfs.From)
	assert.Equal(t, []string{"https://wiki.acme.example/runbooks/model-cache"}, nfs.References)
	assert.Equal(t, []string{"env", "cmdline", "collect-env"}, byID["acme-nccl-p2p-disabled"].Needs)
	stall := byID["stall"]
	assert.True(t, stall.Builtin)
	assert.Empty(t, stall.From)

	code, out, errs = runCLI(t, "", "rules", "list", "--signatures", "--rules", examplePack)
	require.Equal(t, exitOK, code, errs)
	assert.Regexp(t, `(?m)^acmefs-stale-handle\s+error\s+slow-storage\s+the AcmeFS client`, out)
	assert.Regexp(t, `(?m)^no-kernel-image\s+critical\s+gpu-arch-unsupported\s+`, out)
	// Then the count of each category, and of the ranges read from release tags.
	assert.Regexp(t, `(?m)^CATEGORY\s+SIGNATURES\s+CLASSES\s+VERSIONS FROM TAGS$`, out)
	exact, storage := 1, 1 // the pack's one, acmefs-stale-handle, is slow-storage
	for _, s := range rules.BuiltinCatalog() {
		if s.Layer != rules.LayerClass {
			exact++
			if s.Category == rules.CatSlowStorage {
				storage++
			}
		}
	}
	assert.Regexp(t, fmt.Sprintf(`(?m)^slow-storage\s+%d\s+\d+\s+\d+$`, storage), out)
	assert.Regexp(t, fmt.Sprintf(`(?m)^all\s+%d\s+\d+\s+\d+$`, exact), out)
}

func TestRulesExplain(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		want []string // substrings of stdout, or of stderr when code != 0
	}{
		{"built-in rule", []string{"stall"}, exitOK, []string{
			"stall: startup stalled: the log is silent while the server is alive\n",
			"severity: error   category: -   built-in\n"}},
		{"pack rule", []string{"acme-model-on-nfs", "--rules", examplePack}, exitOK, []string{
			"acme-model-on-nfs: the model is read from the shared NFS mount",
			"pack " + examplePack + ":41",
			"when:\n  settings[\"model_path\"] startsWith \"/mnt/\"",
			"references:\n  https://wiki.acme.example/runbooks/model-cache\n"}},
		{"pack rule with match", []string{"acme-custom-ar-no-p2p", "--rules", examplePack}, exitOK, []string{
			"match:\n  type: custom-allreduce\n  fields:\n    enabled: ^false$\n    reason: P2P\n\nwhen:\n  any(gpus, .name contains \"H200\")\n"}},
		{"built-in signature", []string{"no-kernel-image"}, exitOK, []string{
			"no-kernel-image: CUDA binaries lack kernels", "(signature)", "pattern: no kernel image is available",
			"reported by: gpu-arch-unsupported"}},
		{"signature with derived versions", []string{"nccl-duplicate-gpu"}, exitOK, []string{
			"versions:\n  printed by: nccl >=2.", "NVIDIA/nccl: derived from ", "release tags: first ",
			"source: \"Duplicate GPU detected : rank\" in NVIDIA/nccl", "https://github.com/NVIDIA/nccl/blob/v2.29"}},
		{"signature with a fix", []string{"trtllm-backend-needs-sm100"}, exitOK, []string{
			"printed by: sglang >=0.5.6.post1, <0.5.7\n  fixed in: sglang 0.5.7\n  (the range above is the entry's own"}},
		{"relay", []string{"sglang-child-failed"}, exitOK, []string{"relay: it reports another failure"}},
		{"xid", []string{"xid-79"}, exitOK, []string{"Xid 79: GPU has fallen off the bus", "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS", "severity: critical", "action: The GPU is gone until the machine reboots",
			"https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html", "https://docs.nvidia.com/deploy/xid-errors/index.html"}},
		{"no such xid", []string{"xid-9999"}, exitUsage, []string{`no rule or signature "xid-9999"`}},
		{"pack signature", []string{"acmefs-stale-handle", "--rules", examplePack}, exitOK, []string{
			"defined at " + examplePack + ":10", "reported by: signature"}},
		{"suppression", []string{"suppression"}, exitOK, []string{"suppression: suppression matched no finding"}},
		{"the language", nil, exitOK, []string{pack.Reference}},
		{"unknown", []string{"no-such-rule"}, exitUsage, []string{`no rule or signature "no-such-rule"`}},
		{"a pack rule without its pack", []string{"acme-model-on-nfs"}, exitUsage, []string{`no rule or signature "acme-model-on-nfs"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runCLI(t, "", append([]string{"rules", "explain"}, tc.args...)...)
			require.Equal(t, tc.code, code, "stdout:\n%s\nstderr:\n%s", out, errs)
			text := out
			if tc.code != exitOK {
				text = errs
			}
			for _, w := range tc.want {
				assert.Contains(t, text, w)
			}
		})
	}
}

func TestRulesTestExamplePack(t *testing.T) {
	// The pack is found in the folder; naming it again changes nothing.
	code, out, errs := runCLI(t, "", "rules", "test", examplePackDir, "--rules", examplePack)
	require.Equal(t, exitOK, code, "stdout:\n%s\nstderr:\n%s", out, errs)
	assert.Equal(t, `PASS acmefs-stale-handle.txtar
PASS custom-ar-no-p2p-h200.txtar
PASS custom-ar-no-p2p-l40s.txtar
PASS model-on-nfs.txtar
PASS nccl-p2p-disabled.txtar
PASS nccl-p2p-level-only.txtar
ok: 6 case(s), 3 pack rule(s) from 1 pack(s)
`, out)
}

// writeFiles lays out files under a temporary directory.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(data), 0o644))
	}
	return dir
}

const tinyPack = `rules:
  - id: team-tp-mismatch
    title: tensor parallel size is not 2
    doc: Our two-GPU nodes run every model with --tp 2.
    severity: error
    category: config
    when: settings.tp_size != "" and settings.tp_size != "2"
`

func TestRulesTestFailures(t *testing.T) {
	log := func(tp int) string {
		return "[2026-03-02 08:01:12] server_args=ServerArgs(model_path='/models/Qwen3-8B', tp_size=" +
			string(rune('0'+tp)) + ", port=30000)\n[2026-03-02 08:01:20 TP0] Init torch distributed begin.\n"
	}
	dir := writeFiles(t, map[string]string{
		"team.rules.yaml": tinyPack,
		// Fires and is wanted: passes.
		"fires.txtar": "tz: UTC\n-- server.log --\n" + log(4) + "-- want --\nteam-tp-mismatch server.log:1 \"tensor parallel\"\n",
		// Fires but nothing wants it.
		"unwanted.txtar": "tz: UTC\n-- server.log --\n" + log(8) + "-- want --\n",
		// Wanted at the wrong line.
		"wrong-line.txtar": "tz: UTC\n-- server.log --\n" + log(4) + "-- want --\nteam-tp-mismatch server.log:2 \"tensor parallel\"\n",
		// A bundle folder with its wants beside it, quiet.
		"cases/quiet/server.log": log(2),
		"cases/quiet.want":       "# tp 2: nothing to say\n",
		// A want line that does not parse.
		"broken.txtar": "-- server.log --\n" + log(2) + "-- want --\nthis is not a want\n",
	})
	code, out, errs := runCLI(t, "", "rules", "test", dir)
	require.Equal(t, exitFindings, code, "stdout:\n%s\nstderr:\n%s", out, errs)
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	assert.Equal(t, "FAIL broken.txtar", lines[0])
	assert.Contains(t, lines[1], `broken.txtar:5: want RULE FILE:LINE "regexp" or verdict key=value, got "this is not a want"`)
	assert.Equal(t, "PASS cases/quiet", lines[2])
	assert.Equal(t, "PASS fires.txtar", lines[3])
	assert.Equal(t, "FAIL unwanted.txtar", lines[4])
	assert.Contains(t, lines[5], "unexpected finding team-tp-mismatch (error) at server.log:1")
	assert.Equal(t, "FAIL wrong-line.txtar", lines[6])
	assert.Contains(t, lines[7], "wrong-line.txtar: unexpected finding team-tp-mismatch (error) at server.log:1")
	assert.Contains(t, lines[8], `wrong-line.txtar:6: no finding of team-tp-mismatch matched server.log:2 "tensor parallel"`)
	assert.Equal(t, "FAIL: 3 failed case(s), 0 coverage problem(s); 5 case(s), 1 pack rule(s) from 1 pack(s)", lines[len(lines)-1])

	// A pack rule without a quiet case fails the coverage check.
	dir = writeFiles(t, map[string]string{
		"team.rules.yaml": tinyPack,
		"fires.txtar":     "tz: UTC\n-- server.log --\n" + log(4) + "-- want --\nteam-tp-mismatch server.log:1 \"tensor parallel\"\n",
	})
	code, out, _ = runCLI(t, "", "rules", "test", dir)
	require.Equal(t, exitFindings, code, out)
	assert.Contains(t, out, "PASS fires.txtar\nFAIL coverage\n    rule team-tp-mismatch has no case where it stays quiet\n")

	// --rules adds a pack kept elsewhere; a single txtar is a case.
	packFile := filepath.Join(t.TempDir(), "team.yaml")
	require.NoError(t, os.WriteFile(packFile, []byte(tinyPack), 0o644))
	code, out, errs = runCLI(t, "", "rules", "test", "--rules", packFile, filepath.Join(dir, "fires.txtar"))
	require.Equal(t, exitFindings, code, errs)
	assert.Contains(t, out, "PASS "+filepath.Join(dir, "fires.txtar"))

	// No cases, a missing folder, a broken pack: usage errors.
	code, _, errs = runCLI(t, "", "rules", "test", t.TempDir())
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errs, "no cases in")
	code, _, errs = runCLI(t, "", "rules", "test", "does/not/exist")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errs, "does/not/exist")
	dir = writeFiles(t, map[string]string{"bad.rules.yaml": "rules:\n  - id: x\n", "a.txtar": "-- want --\n"})
	code, _, errs = runCLI(t, "", "rules", "test", dir)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errs, "bad.rules.yaml:2:5: rule x: missing title")
}

func TestAnalyzeWithPacks(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"bad.yaml": "rules:\n  - id: x\n    title: t\n    doc: d\n    when: nope > 1\n  - id: y\n    title: t\n    doc: d\n    severity: fatal\n    when: state.ready\n",
		"kimi.yaml": `rules:
  - id: kimi-needs-triton
    title: Kimi on Blackwell must use the triton attention backend
    doc: Our Blackwell nodes serve Kimi-K2.5 with triton only (see the incident of 2026-02-10).
    severity: error
    category: attention-backend
    confidence: 0.95
    when: settings.model_path contains "Kimi" and settings.attention_backend != "triton" and any(gpus, .cc == "12.0")
`,
	})
	code, out, errs := runCLI(t, "", "analyze", "--rules", filepath.Join(dir, "bad.yaml"), seedBundle)
	assert.Equal(t, exitUsage, code)
	assert.Empty(t, out, "no report from a bad pack")
	assert.Contains(t, errs, filepath.Join(dir, "bad.yaml")+":5:11: rule x: when: unknown name nope\n")
	assert.Contains(t, errs, filepath.Join(dir, "bad.yaml")+`:9:15: rule y: severity "fatal" is not critical, error, warning or info`)

	code, _, errs = runCLI(t, "", "analyze", "--rules", filepath.Join(dir, "missing.yaml"), seedBundle)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errs, "missing.yaml: no such file or directory")

	code, out, errs = runCLI(t, "", "analyze", "--format", "json", "--rules", filepath.Join(dir, "kimi.yaml"), seedBundle)
	require.Equal(t, exitFindings, code, errs)
	var rep struct {
		Verdict struct {
			Causes []struct{ Category, Rule string }
		}
		Findings []struct {
			Rule     string
			Message  string
			Evidence []struct {
				File string
				Line int
			}
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	var kimi *struct {
		Rule     string
		Message  string
		Evidence []struct {
			File string
			Line int
		}
	}
	for i := range rep.Findings {
		if rep.Findings[i].Rule == "kimi-needs-triton" {
			kimi = &rep.Findings[i]
		}
	}
	require.NotNil(t, kimi, out)
	// server.log:4 is the server_args line with model_path and
	// attention_backend (cited once for each); nvidia-smi-q.txt:9 the
	// first GPU of compute capability 12.0.
	var cited []string
	for _, e := range kimi.Evidence {
		cited = append(cited, e.File+":"+strconv.Itoa(e.Line))
	}
	require.GreaterOrEqual(t, len(cited), 3)
	assert.Equal(t, []string{"server.log:4", "server.log:4", "nvidia-smi-q.txt:9"}, cited[:3])
	// Its 0.95 ranks above the built-in attention-backend finding's 0.8,
	// both in the same category: the category's cause is the pack rule's.
	require.NotEmpty(t, rep.Verdict.Causes)
	assert.Equal(t, "attention-backend", rep.Verdict.Causes[0].Category)
	assert.Equal(t, "kimi-needs-triton", rep.Verdict.Causes[0].Rule)
}

func TestAnalyzeSuppress(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"team.yaml": `# the seed machine, 2026-02
- rule: alive-not-ready
  file: health.txt
  reason: our probe script times out at 5 s during startup
- rule: attention-backend
  reason: we know; the fix is rolling out (INFRA-77)
- rule: gpu-oom
  reason: a stale entry
`,
		"typo.yaml":     "- rule: attention-backnd\n  reason: typo\n",
		"noreason.yaml": "- rule: stall\n",
	})
	code, out, errs := runCLI(t, "", "analyze", "--format", "json", "--suppress", filepath.Join(dir, "team.yaml"), seedBundle)
	require.Equal(t, exitFindings, code, errs)
	assert.Equal(t, "coroner: 2 finding(s) suppressed by "+filepath.Join(dir, "team.yaml")+"\n", errs)
	var rep struct {
		Verdict struct {
			Outcome string
			Causes  []struct{ Category string }
		}
		Findings []struct {
			Rule, Severity, Message string
			Evidence                []struct {
				File string
				Line int
			}
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	var got []string
	for _, f := range rep.Findings {
		got = append(got, f.Rule)
	}
	// Without suppressions: stall, attention-backend, short-log-long-cpu,
	// alive-not-ready (main_test's seed run). The suppressed two are gone;
	// the stale gpu-oom entry is reported at team.yaml:7.
	assert.Equal(t, []string{"stall", "short-log-long-cpu", "suppression"}, got)
	last := rep.Findings[len(rep.Findings)-1]
	assert.Equal(t, "info", last.Severity)
	require.Len(t, last.Evidence, 1)
	assert.Equal(t, filepath.Join(dir, "team.yaml"), last.Evidence[0].File)
	assert.Equal(t, 7, last.Evidence[0].Line)
	assert.Contains(t, last.Message, "Its reason: a stale entry")
	// The suppressed finding no longer names the cause.
	assert.Equal(t, "hung", rep.Verdict.Outcome)
	for _, c := range rep.Verdict.Causes {
		assert.NotEqual(t, "attention-backend", c.Category)
	}

	// -q keeps stderr quiet.
	code, _, errs = runCLI(t, "", "analyze", "-q", "--fail-on", "never", "--suppress", filepath.Join(dir, "team.yaml"), seedBundle)
	assert.Equal(t, exitOK, code)
	assert.Empty(t, errs)

	code, _, errs = runCLI(t, "", "analyze", "--suppress", filepath.Join(dir, "typo.yaml"), seedBundle)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errs, filepath.Join(dir, "typo.yaml")+`:1:9: suppression: no rule "attention-backnd"`)
	code, _, errs = runCLI(t, "", "analyze", "--suppress", filepath.Join(dir, "noreason.yaml"), seedBundle)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errs, filepath.Join(dir, "noreason.yaml")+":1:3: suppression of stall: missing reason")
}
