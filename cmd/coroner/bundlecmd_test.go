package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/parser"
	"github.com/coroner-dev/coroner/parser/bundle"
	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/manifest"
	"github.com/coroner-dev/coroner/rules"
)

// untar decompresses a bundle: the whole tar stream (names, headers and
// content) and its entries.
func untar(t *testing.T, path string) ([]byte, map[string][]byte, []string) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	dec, err := zstd.NewReader(f)
	require.NoError(t, err)
	defer dec.Close()
	raw, err := io.ReadAll(dec)
	require.NoError(t, err)
	tr := tar.NewReader(bytes.NewReader(raw))
	files := map[string][]byte{}
	var order []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		data, err := io.ReadAll(tr)
		require.NoError(t, err)
		files[h.Name] = data
		order = append(order, h.Name)
	}
	return raw, files, order
}

func readManifest(t *testing.T, files map[string][]byte) *manifest.Manifest {
	t.Helper()
	data, ok := files[manifest.Name]
	require.True(t, ok, "the bundle has a manifest")
	var m manifest.Manifest
	require.NoError(t, json.Unmarshal(data, &m))
	var withArts struct {
		Artifacts []manifest.Artifact `json:"artifacts"`
	}
	require.NoError(t, json.Unmarshal(data, &withArts))
	m.Artifacts = withArts.Artifacts
	return &m
}

// analyzeBundle returns the findings of every rule on a bundle, as
// "rule | title | message | file:line ...", and the facts.
func analyzeBundle(t *testing.T, path string) ([]string, *facts.Facts, *rules.Result) {
	t.Helper()
	f, err := parser.Parse([]string{path}, parser.Options{Bundle: bundle.Defaults()})
	require.NoError(t, err)
	res := rules.Run(f, rules.Options{})
	var out []string
	for _, fd := range res.Findings {
		var ev []string
		for _, e := range fd.Evidence {
			ev = append(ev, e.Src.String())
		}
		out = append(out, fmt.Sprintf("%s | %s | %s | %s", fd.Rule, fd.Title, fd.Message, strings.Join(ev, " ")))
	}
	return out, f, res
}

// plantedSeed copies the seed bundle and plants secrets of every kind in
// its log, launch script, ps listing, probe transcript and an env dump. It
// returns the folder and the secrets.
func plantedSeed(t *testing.T) (string, []string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "flashinfer-sm120-hang")
	require.NoError(t, os.CopyFS(dir, os.DirFS(seedBundle)))
	s := map[string]string{
		"hf":        "hf_Q9wErTyUiOpAsDfGhJkLzXcVbNm123456789",
		"hf2":       "hf_ZyXwVuTsRqPoNmLkJiHgFeDcBa987654321",
		"openai":    "sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56",
		"anthropic": "sk-ant-api03-QwErTyUiOpAsDfGhJkLzXcVb-nm0987",
		"ghp":       "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
		"ghpat":     "github_pat_11AAAAAAA0bbbbbbbbbbbb_cccccccccccccccccccccccccccccccc",
		"akia":      "AKIA2E0A8F3B244C9986",
		"awssecret": "kWcrlUX5JEDGM/LtmEENI/aVmYvHNif5zB+d9+ct",
		"apikey":    "sglang-local-key-5f0e3c1a",
		"apiflag":   "vllm-flag-key-77a1b2c3d4",
		"bearer":    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJjb3JvbmVyIn0.c2lnbmF0dXJlLXZhbHVl",
		"bearer2":   "Tok3nForProbe-9d8c7b6a",
		"urlpass":   "S3cretDbPass",
		"dbpass":    "hunter2-on-the-db",
		"wandb":     "0123456789abcdef0123456789abcdef01234567",
		"vllmkey":   "vllm-api-key-in-env-0a9b8c",
		"ray":       "ray-redis-password-4f4f",
		"slack":     "xoxb-2233445566-7788990011-AbCdEfGhIjKl",
		"keybody1":  "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7",
		"keybody2":  "q1w2e3r4t5y6u7i8o9p0a1s2d3f4g5h6j7k8l9z0x1c2v3b4n5m6",
		"jsonkey":   "json-probe-body-key-31337",
	}
	edit := func(name string, fn func(string) string) {
		p := filepath.Join(dir, name)
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(p, []byte(fn(string(data))), 0o644))
	}
	// The server log: server args, a request with a bearer token, a JSON body.
	edit("server.log", func(s0 string) string {
		require.Contains(t, s0, "api_key=None")
		s0 = strings.Replace(s0, "api_key=None", "api_key='"+s["apikey"]+"'", 1)
		lines := strings.SplitAfter(s0, "\n")
		extra := []string{
			"[2026-02-10 00:28:06] Request headers: {'authorization': 'Bearer " + s["bearer"] + "'}\n",
			"[2026-02-10 00:28:06] hub login with token " + s["hf2"] + " for gated weights\n",
			"[2026-02-10 00:28:06] probe body {\"api_key\": \"" + s["jsonkey"] + "\"}\n",
			"[2026-02-10 00:28:06] notify " + s["slack"] + "\n",
		}
		return strings.Join(lines[:5], "") + strings.Join(extra, "") + strings.Join(lines[5:], "")
	})
	// The launch script: exports and flags.
	edit("launch.sh", func(s0 string) string {
		s0 = strings.Replace(s0, "export NCCL_PROTO=LL\n", "export NCCL_PROTO=LL\nexport HF_TOKEN="+s["hf"]+"\nexport WANDB_API_KEY="+s["wandb"]+
			"\nexport VLLM_API_KEY="+s["vllmkey"]+"\n", 1)
		s0 = strings.Replace(s0, "  --tp 8 \\\n", "  --tp 8 \\\n  --api-key "+s["apiflag"]+" \\\n", 1)
		return s0 + "cat > /root/.ssh/deploy_key <<'EOF'\n-----BEGIN OPENSSH PRIVATE KEY-----\n" + s["keybody1"] + "\n" + s["keybody2"] +
			"\n-----END OPENSSH PRIVATE KEY-----\nEOF\n"
	})
	// The ps listing: the launcher's args (the last column).
	edit("ps_aux.txt", func(s0 string) string {
		i := strings.Index(s0, "python3 -m sglang.launch_server --model-path /models/Kimi-K2.5-INT4 --tp 8")
		require.Positive(t, i)
		j := i + strings.IndexByte(s0[i:], '\n')
		return s0[:j] + " --api-key " + s["apiflag"] + " --admin-api-key " + s["openai"] + s0[j:]
	})
	// The probe transcript.
	edit("health.txt", func(s0 string) string {
		return strings.Replace(s0, "curl -s -m 5 ", "curl -s -m 5 -H \"Authorization: Bearer "+s["bearer2"]+"\" ", 1)
	})
	// An env dump.
	env := strings.Join([]string{
		"ANTHROPIC_API_KEY=" + s["anthropic"],
		"AWS_ACCESS_KEY_ID=" + s["akia"],
		"AWS_SECRET_ACCESS_KEY=" + s["awssecret"],
		"CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
		"DATABASE_URL=postgres://sglang:" + s["urlpass"] + "@db.internal:5432/runs",
		"GITHUB_TOKEN=" + s["ghp"],
		"GH_PAT=" + s["ghpat"],
		"NCCL_P2P_LEVEL=SYS",
		"POSTGRES_PASSWORD=" + s["dbpass"],
		"RAY_REDIS_PASSWORD=" + s["ray"],
	}, "\n") + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "env.txt"), []byte(env), 0o644))
	var secrets []string
	for _, v := range s {
		secrets = append(secrets, v)
	}
	sort.Strings(secrets)
	return dir, secrets
}

// TestBundleRedactsAndKeepsTheDiagnosis is the acceptance test of the
// redaction: 21 planted secrets of every kind, none of them in the bytes of
// the redacted bundle, and the same findings (rule, title, message,
// evidence file:line) on the raw and the redacted bundle.
func TestBundleRedactsAndKeepsTheDiagnosis(t *testing.T) {
	dir, secrets := plantedSeed(t)
	require.GreaterOrEqual(t, len(secrets), 20)
	out := t.TempDir()
	raw, red, hosts := filepath.Join(out, "raw.tar.zst"), filepath.Join(out, "red.tar.zst"), filepath.Join(out, "hosts.tar.zst")
	for _, args := range [][]string{
		{"bundle", dir, "--no-redact", "-o", raw},
		{"bundle", dir, "-o", red},
		{"bundle", dir, "--redact-hosts", "-o", hosts},
	} {
		code, stdout, stderr := runCLI(t, "", args...)
		require.Equal(t, exitOK, code, "%v: %s", args, stderr)
		assert.Empty(t, stdout)
		assert.Empty(t, stderr, "quiet when stderr is not a terminal")
	}

	rawBytes, _, _ := untar(t, raw)
	for _, s := range secrets {
		assert.True(t, bytes.Contains(rawBytes, []byte(s)), "%s was planted", s)
	}
	for _, p := range []string{red, hosts} {
		redBytes, files, order := untar(t, p)
		for _, s := range secrets {
			assert.False(t, bytes.Contains(redBytes, []byte(s)), "%s survived in %s", s, filepath.Base(p))
		}
		assert.Equal(t, manifest.Name, order[len(order)-1], "the manifest comes last")
		m := readManifest(t, files)
		assert.True(t, m.Redaction.Enabled)
		assert.GreaterOrEqual(t, m.Redaction.Counts["credential"]+m.Redaction.Counts["hf-token"], 3)
		for k := range m.Redaction.Counts {
			assert.NotContains(t, secrets, k)
		}
	}
	_, rawFiles, _ := untar(t, raw)
	_, redFiles, _ := untar(t, red)
	for name, data := range rawFiles {
		if name == manifest.Name {
			continue
		}
		// Same length, same lines: only secrets changed.
		assert.Len(t, redFiles[name], len(data), name)
		assert.Equal(t, bytes.Count(data, []byte("\n")), bytes.Count(redFiles[name], []byte("\n")), name)
	}
	// The ps columns stay aligned: the launcher's row keeps its shape.
	assert.Contains(t, string(redFiles["ps_aux.txt"]), " --api-key ************************ --admin-api-key sk-*************************************")

	rawFindings, _, rawRes := analyzeBundle(t, raw)
	require.NotEmpty(t, rawFindings)
	for _, p := range []string{red, hosts} {
		findings, f, res := analyzeBundle(t, p)
		assert.Equal(t, rawFindings, findings, filepath.Base(p))
		assert.Equal(t, rawRes.Verdict.Outcome, res.Verdict.Outcome)
		assert.Equal(t, rawRes.Verdict.Phase, res.Verdict.Phase)
		assert.Equal(t, rawRes.Verdict.Causes, res.Verdict.Causes)
		assert.Empty(t, f.Issues(), "a redacted bundle reads without parse issues")
	}
	assert.Equal(t, rules.OutcomeHung, rawRes.Verdict.Outcome)
	_, hostFiles, _ := untar(t, hosts)
	assert.NotContains(t, string(hostFiles["ps_aux.txt"]), "ubuntu ", "the user of the ps listing is a pseudonym with --redact-hosts")
	assert.Contains(t, string(hostFiles["ps_aux.txt"]), "user01   72169")
}

func TestBundleManifestAndKinds(t *testing.T) {
	dir := t.TempDir()
	ev := filepath.Join(dir, "evidence")
	require.NoError(t, os.CopyFS(ev, os.DirFS(idleBundle)))
	// A compressed log is packed decompressed; a link is recorded, not followed.
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write([]byte("[2026-11-30 04:24:37] server_args=ServerArgs(model_path='/m', api_key='abcdef123456')\n"))
	require.NoError(t, zw.Close())
	require.NoError(t, os.WriteFile(filepath.Join(ev, "old.log.gz"), gz.Bytes(), 0o644))
	secret := filepath.Join(dir, "secret.txt")
	require.NoError(t, os.WriteFile(secret, []byte("HF_TOKEN=hf_ShouldNeverBeBundledAtAll0123456789\n"), 0o644))
	require.NoError(t, os.Symlink(secret, filepath.Join(ev, "link.txt")))
	require.NoError(t, os.WriteFile(filepath.Join(ev, "core.bin"), append([]byte{0x7f, 'E', 'L', 'F'}, make([]byte, 4096)...), 0o644))
	out := filepath.Join(ev, "bundle.tar.zst") // inside the folder being packed

	code, _, stderr := runCLI(t, "", "bundle", ev, "-o", out)
	require.Equal(t, exitOK, code, stderr)
	raw, files, order := untar(t, out)
	assert.False(t, bytes.Contains(raw, []byte("ShouldNeverBeBundled")))
	assert.NotContains(t, order, "bundle.tar.zst", "the bundle does not pack itself")
	assert.NotContains(t, order, "link.txt")
	assert.NotContains(t, order, "core.bin", "binary content cannot be redacted, so it stays out")
	assert.Equal(t, "[2026-11-30 04:24:37] server_args=ServerArgs(model_path='/m', api_key='************')\n", string(files["old.log"]))

	m := readManifest(t, files)
	assert.Equal(t, "bundle", m.Command)
	byPath := map[string]manifest.Artifact{}
	var skipped []string
	for _, a := range m.Artifacts {
		if a.Skipped != "" {
			skipped = append(skipped, a.Skipped)
			continue
		}
		byPath[a.Path] = a
	}
	assert.Len(t, skipped, 2)
	assert.Contains(t, strings.Join(skipped, "\n"), "a symbolic link (to "+secret+"): links are recorded, never followed")
	assert.Contains(t, strings.Join(skipped, "\n"), "binary content: it cannot be read as text, so it cannot be redacted")
	want := map[string]facts.Kind{
		"ps_eo.txt": facts.KindPS, "ps_auxf.txt": facts.KindPS, "nvidia-smi-q.xml": facts.KindNvidiaSMIXML, "query-gpu.csv": facts.KindNvidiaSMICSV,
		"meminfo.txt": facts.KindMeminfo, "captured_at.txt": facts.KindCaptureTime, "old.log": facts.KindSGLangLog,
	}
	for name, kind := range want {
		a, ok := byPath[name]
		require.True(t, ok, name)
		assert.Equal(t, string(kind), a.Kind, name)
		assert.Len(t, a.SHA256, 64)
		assert.EqualValues(t, len(files[name]), a.Bytes)
	}
	assert.Equal(t, "decompressed from gzip", byPath["old.log"].Error)

	// The analyzer reads the bundle with the same kinds and no issue.
	_, f, _ := analyzeBundle(t, out)
	assert.Empty(t, f.Issues())
	for _, s := range f.Sources {
		if k, ok := want[s.Path]; ok {
			assert.Equal(t, k, s.Kind, s.Path)
		}
	}
	assert.Equal(t, facts.KindManifest, f.Source(manifest.Name).Kind)
}

func TestBundleSizeCap(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := 0; b.Len() < 3<<20; i++ {
		fmt.Fprintf(&b, "[2026-11-30 04:%02d:%02d TP0] Decode batch. #running-req: %d, #token: %d, token usage: 0.%02d, gen throughput (token/s): %d.%02d, #queue-req: 0\n",
			i/60%60, i%60, i%97, i*7919%100000, i%100, i*31%4000, i%100)
	}
	log := filepath.Join(dir, "server.log")
	require.NoError(t, os.WriteFile(log, []byte(b.String()), 0o644))
	out := filepath.Join(dir, "b.tar.zst")
	code, _, stderr := runCLI(t, "", "bundle", log, "--max-size", "100KB", "-o", out)
	require.Equal(t, exitOK, code, stderr)
	st, err := os.Stat(out)
	require.NoError(t, err)
	assert.LessOrEqual(t, st.Size(), int64(100_000))
	_, files, _ := untar(t, out)
	m := readManifest(t, files)
	require.Len(t, m.Artifacts, 1)
	tr := m.Artifacts[0].Trimmed
	require.NotNil(t, tr)
	assert.EqualValues(t, b.Len(), tr.OriginalBytes)
	assert.Equal(t, "to fit --max-size 100KB", tr.Reason)
	data := string(files["server.log"])
	assert.True(t, strings.HasPrefix(b.String(), data[:tr.HeadBytes]))
	assert.True(t, strings.HasSuffix(b.String(), data[len(data)-int(tr.TailBytes):]))
	assert.Equal(t, &manifest.SizeCap{MaxBytes: 100_000}, m.SizeCap)
}

func TestBundleUsage(t *testing.T) {
	dir := t.TempDir()
	code, _, stderr := runCLI(t, "", "bundle", filepath.Join(dir, "nope"), "-o", filepath.Join(dir, "b.tar.zst"))
	assert.Equal(t, exitInput, code)
	assert.Contains(t, stderr, "cannot read")
	code, _, stderr = runCLI(t, "", "bundle", dir, "-o", dir)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "is a directory")
	code, _, stderr = runCLI(t, "", "bundle", dir, "--no-redact", "--redact-hosts", "-o", filepath.Join(dir, "b"))
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "contradict")
	code, _, stderr = runCLI(t, "", "bundle", dir, "--max-size", "lots", "-o", filepath.Join(dir, "b"))
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "--max-size")
}

func TestBundleDeterministic(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.tar.zst"), filepath.Join(dir, "b.tar.zst")
	for _, out := range []string{a, b} {
		code, _, stderr := runCLI(t, "", "bundle", seedBundle, "--redact-hosts", "-o", out)
		require.Equal(t, exitOK, code, stderr)
	}
	da, err := os.ReadFile(a)
	require.NoError(t, err)
	db, err := os.ReadFile(b)
	require.NoError(t, err)
	assert.Equal(t, da, db, "the same files make the same bundle, byte for byte")
}
