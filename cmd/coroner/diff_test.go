package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	slowRun  = "../../fixtures/runtime/sglang-k25-baseline-63tps"
	tunedRun = "../../fixtures/runtime/sglang-k25-tuned-90tps"
	vllmRun  = "../../fixtures/runtime/vllm-k25-82tps"
	readyRun = "../../fixtures/seed/triton-sm120-ready"
	hangRun  = "../../fixtures/seed/flashinfer-sm120-hang"
)

func TestDiffCommand(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		out  []string // substrings of stdout
		err  string   // substring of stderr
	}{
		{"slow against tuned", []string{"diff", slowRun, tunedRun}, exitOK,
			[]string{"# coroner diff", "63.6 tok/s (A) against 90.0 tok/s (B), +41.5%", "`attention_backend`", "`NCCL_PROTO`", "`num_continuous_decode_steps`"}, ""},
		{"across engines", []string{"diff", vllmRun, slowRun}, exitOK,
			[]string{"vLLM 0.11.0", "SGLang 0.5.8", "82.5 tok/s (A) against 63.6 tok/s (B), -22.9%", "the engines differ"}, ""},
		{"markdown alias", []string{"diff", "--format", "markdown", slowRun, tunedRun}, exitOK, []string{"## Settings that differ"}, ""},
		{"one bundle", []string{"diff", slowRun}, exitUsage, nil, "expected \"<b>\""},
		{"bad format", []string{"diff", "-f", "html", slowRun, tunedRun}, exitUsage, nil, "--format"},
		{"missing bundle", []string{"diff", slowRun, "does/not/exist"}, exitInput, nil, "cannot read bundle does/not/exist"},
		{"stdin twice", []string{"diff", "-", "-"}, exitUsage, nil, "only one of the two bundles"},
		// Issue 18, item 9: a text format and --fail-on.
		{"text", []string{"diff", "-f", "text", slowRun, tunedRun}, exitOK,
			[]string{"CORONER DIFF\n", "\nSETTINGS THAT DIFFER\n", "  attention_backend "}, ""},
		{"fail-on: B hangs where A was ready", []string{"diff", "--fail-on", "error", readyRun, hangRun}, exitFindings,
			[]string{"# coroner diff"}, "B has "},
		{"fail-on: B is ready where A hung", []string{"diff", "--fail-on", "error", hangRun, readyRun}, exitOK, []string{"# coroner diff"}, ""},
		{"fail-on: never by default", []string{"diff", readyRun, hangRun}, exitOK, []string{"# coroner diff"}, ""},
		{"fail-on: bad severity", []string{"diff", "--fail-on", "fatal", readyRun, hangRun}, exitUsage, nil, "--fail-on"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runCLI(t, "", tc.args...)
			assert.Equal(t, tc.code, code, "stdout:\n%s\nstderr:\n%s", out, errs)
			for _, want := range tc.out {
				assert.Contains(t, out, want)
			}
			assert.Contains(t, errs, tc.err)
		})
	}
}

func TestDiffJSON(t *testing.T) {
	code, out, errs := runCLI(t, "", "diff", "--format", "json", slowRun, tunedRun)
	require.Equal(t, exitOK, code, errs)
	var d struct {
		SchemaVersion int `json:"schema_version"`
		A, B          struct {
			Path, Engine, Version, Outcome string
		}
		Throughput struct {
			Rows []struct {
				ID     string   `json:"id"`
				A      *float64 `json:"a"`
				B      *float64 `json:"b"`
				Change *float64 `json:"change_pct"`
			}
		}
		Settings []struct {
			Key, Kind string
		}
		Env []struct {
			Name string
			A    *struct{ Value string }
			B    *struct{ Value string }
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &d))
	assert.Equal(t, 1, d.SchemaVersion)
	assert.Equal(t, slowRun, d.A.Path)
	assert.Equal(t, "0.5.8", d.B.Version)
	require.NotEmpty(t, d.Throughput.Rows)
	ss := d.Throughput.Rows[0]
	assert.Equal(t, "single_stream", ss.ID)
	assert.Equal(t, 63.6, *ss.A)
	assert.Equal(t, 90.0, *ss.B)
	assert.Equal(t, 41.5, *ss.Change)
	kinds := map[string]string{}
	for _, s := range d.Settings {
		kinds[s.Key] = s.Kind
	}
	assert.Equal(t, map[string]string{"attention_backend": "explicit", "num_continuous_decode_steps": "differs"}, kinds)
	env := map[string]string{}
	for _, v := range d.Env {
		require.Nil(t, v.A, v.Name)
		env[v.Name] = v.B.Value
	}
	assert.Equal(t, map[string]string{"CUDA_DEVICE_MAX_CONNECTIONS": "1", "NCCL_ALGO": "Ring", "NCCL_IB_DISABLE": "1",
		"NCCL_MIN_NCHANNELS": "4", "NCCL_P2P_LEVEL": "SYS", "NCCL_PROTO": "LL"}, env)
}

func TestDiffOutputFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "diff.md")
	code, out, errs := runCLI(t, "", "diff", "-o", path, slowRun, tunedRun)
	require.Equal(t, exitOK, code, errs)
	assert.Empty(t, out)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Contains(t, string(data), "# coroner diff")

	code, _, errs = runCLI(t, "", "diff", "-o", filepath.Join(t.TempDir(), "no", "such", "dir", "x.md"), slowRun, tunedRun)
	assert.Equal(t, exitInternal, code)
	assert.Contains(t, errs, "write")
}
