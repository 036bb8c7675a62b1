package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/ulikunitz/xz"

	"github.com/coroner-dev/coroner/internal/redact"

	"github.com/coroner-dev/coroner/parser"
	"github.com/coroner-dev/coroner/parser/bundle"
	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/manifest"
	"github.com/coroner-dev/coroner/parser/runs"
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
	all, err := parser.Parse([]string{path}, parser.Options{Bundle: bundle.Defaults()})
	require.NoError(t, err)
	// As analyze does: the latest run, its nodes named and their clocks lined up.
	f := runs.Latest(all)
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
	assert.Equal(t, "decompressed from gzip", byPath["old.log"].Note)
	assert.Empty(t, byPath["old.log"].Error, "a note is not an error: the collector rule reports errors")

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

// corpus is a folder of evidence with secrets planted in every place a
// bundle carries text: logs, ps arguments, env dumps, YAML and JSON
// configs, ServerArgs dumps, probe bodies, file and member names, link
// targets, nested archives (compressed several times over, zip in tar,
// tar in zip), UTF-16 files, and files coroner cannot read.
type corpus struct {
	dir string
	// secrets must not survive a plain bundle; hosts (host names,
	// addresses, users, e-mail addresses) must not survive one written
	// with --redact-hosts.
	secrets, hosts []planted
}

// planted is one secret and where it was put.
type planted struct{ where, value string }

func (c *corpus) secret(where, v string) string {
	c.secrets = append(c.secrets, planted{where, v})
	return v
}

func (c *corpus) host(where, v string) string {
	c.hosts = append(c.hosts, planted{where, v})
	return v
}

func (c *corpus) write(t *testing.T, name string, data []byte) {
	t.Helper()
	p := filepath.Join(c.dir, filepath.FromSlash(name))
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, data, 0o644))
}

func lines(ls ...string) []byte { return []byte(strings.Join(ls, "\n") + "\n") }

// utf16Bytes encodes s as UTF-16 with a byte order mark.
func utf16Bytes(s string, bigEndian bool) []byte {
	units := utf16.Encode([]rune(s))
	out := []byte{0xff, 0xfe}
	if bigEndian {
		out = []byte{0xfe, 0xff}
	}
	for _, u := range units {
		if bigEndian {
			out = append(out, byte(u>>8), byte(u))
		} else {
			out = append(out, byte(u), byte(u>>8))
		}
	}
	return out
}

func bz2(t *testing.T, data []byte) []byte {
	t.Helper()
	cmd := exec.Command("bzip2", "-c")
	cmd.Stdin = bytes.NewReader(data)
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("bzip2 is needed to build a .bz2 (compress/bzip2 only reads): %v", err)
	}
	return out
}

func plantedCorpus(t *testing.T) *corpus {
	t.Helper()
	c := &corpus{dir: filepath.Join(t.TempDir(), "evidence")}
	s := c.secret
	h := c.host
	jwt := "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJwbGFudGVkIn0.UGxhbnRlZFNpZ25hdHVyZTAx"

	// A server log: settings dumps, headers, URLs, tokens in prose.
	c.write(t, "server.log", lines(
		"[2026-02-10 00:27:58] server_args=ServerArgs(model_path='/models/m', api_key='"+s("ServerArgs", "sa-apikey-7f3a91")+
			"', admin_api_key='"+s("ServerArgs admin_api_key", "sa-admin-9c2b44")+"', ssl_keyfile='/etc/ssl/k.pem', ssl_keyfile_password='"+
			s("ServerArgs ssl_keyfile_password", "sa-sslpw-55e1")+"', wandb_api_key='"+s("ServerArgs wandb_api_key", "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567")+
			"', db_password='"+s("ServerArgs db_password", "sa-dbpw-x81q")+"', redis_password='"+s("ServerArgs redis_password", "sa-redispw-q7z")+
			"', hf_token='"+s("ServerArgs hf_token", "hf_SaHfTokenAAAAAAAAAAAAAAAAAAAAAAAAAA")+"', port=30000)",
		"INFO 02-10 00:27:58 [api_server.py:1090] non-default args: {'api_key': ['"+s("vLLM args list", "vl-apikey-31a7c")+
			"'], 'ssl_keyfile_password': '"+s("vLLM args", "vl-sslpw-0d9k")+"'}",
		"INFO 02-10 00:27:58 args: Namespace(host='0.0.0.0', api_key='"+s("Namespace", "ns-key-8e7d6c")+"', port=8000)",
		"[2026-02-10 00:28:06] Request headers: {'authorization': 'Bearer "+s("header JWT", jwt)+"', 'cookie': 'sessionid="+
			s("cookie", "ck-sess-4d3c2b1a")+"; csrftoken="+s("cookie 2", "ck-csrf-9f8e7d")+"'}",
		"[2026-02-10 00:28:06] upstream X-API-Key: "+s("X-API-Key header", "xk-hdr-1234abcd"),
		"[2026-02-10 00:28:06] Proxy-Authorization: Basic "+s("Proxy-Authorization", "cHJveHktdXNlcjpwcm94eXB3"),
		"[2026-02-10 00:28:06] Set-Cookie: session="+s("Set-Cookie", "setcookie-val-12")+"; Path=/; HttpOnly",
		"[2026-02-10 00:28:07] connecting to postgres://app:"+s("URL password with / and @", "pa/ss@w0rd-Db9")+"@db.internal:5432/app",
		"[2026-02-10 00:28:07] GET https://api.example.com/v1/models?token="+s("?token=", "qt-token-5a6b7c")+"&api_key="+
			s("&api_key=", "qt-apikey-8d9e0f")+"&sig="+s("&sig=", "qt-sig-1a2b3c4d")+"&limit=5",
		"[2026-02-10 00:28:07] notify https://hooks.slack.com/services/T0AAA1111/B0BBB2222/"+s("Slack webhook", "whSlackSecretPath99"),
		"[2026-02-10 00:28:07] storage DefaultEndpointsProtocol=https;AccountName=acct;AccountKey="+s("Azure account key", "azAcctKeyZm9vYmFy+/ZZ==")+
			";EndpointSuffix=core.windows.net",
		"[2026-02-10 00:28:07] blob https://acct.blob.core.windows.net/c/b?sv=2022-11-02&sig="+s("Azure SAS sig", "azSasSigQ1w2E3%2B")+"&se=2030",
		"[2026-02-10 00:28:08] fallback key "+s("Anthropic key", "sk-ant-api03-AnthropicKeyABCDEFGHIJKLMNOP")+" and "+
			s("OpenAI key", "sk-proj-OpenAIKeyABCDEFGHIJKLMNOPQRST"),
		"[2026-02-10 00:28:08] cloned with "+s("GitHub token", "ghp_GithubTokenABCDEFGHIJKLMNOPQRSTUVWX")+" and "+
			s("GitHub PAT", "github_pat_11AAAAAAA0GithubPatABCDEFGHIJKLMNOPQRSTUVWXYZ"),
		"[2026-02-10 00:28:08] s3 client "+s("AWS key id", "AKIAQWERTYUIOPASDF12")+" google "+s("Google key", "AIzaSyGoogleKey0123456789abcdefghijklmn"),
		"[2026-02-10 00:28:08] slack "+s("Slack token", "xoxb-1111111111-2222222222-SlackTokValue")+" gitlab "+
			s("GitLab token", "glpat-GitlabTokenNNNNNNNNNNNN")+" oauth "+s("Google OAuth", "ya29.GoogleOauthTokenPPPPPPPPPPPPPP"),
		"[2026-02-10 00:28:08] + curl -u admin:"+s("curl -u", "cu-curlpw-77z")+" https://registry.example.com/v2/",
		"[2026-02-10 00:28:08] probe body {\"body\":\"{\\\"api_key\\\": \\\""+s("escaped JSON", "esc-json-key-3c")+"\\\"}\"}",
		"[2026-02-10 00:28:08] sa key {\"private_key\": \"-----BEGIN PRIVATE KEY-----\\n"+s("PEM with \\n escapes", "MIIEvLogPemBodyQQQQ")+
			"\\n-----END PRIVATE KEY-----\\n\"}",
		"[2026-02-10 00:28:09] hub login with "+s("HF token in prose", "hf_ProseTokenBBBBBBBBBBBBBBBBBBBBBBBB"),
		"[2026-02-10 00:28:09] clone https://"+s("token as URL userinfo", "ghp_UrlTokenOOOOOOOOOOOOOOOOOOOOOOOOOOOO")+"@github.com/org/repo.git",
		"[2026-02-10 00:28:09] mongo mongodb+srv://user:"+s("mongodb+srv password", "mongo-pw-19x")+"@cluster0.example.net/db",
		"[2026-02-10 00:28:09] presign ?X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20240101%2Fus-east-1%2Fs3&X-Amz-Signature="+
			s("X-Amz-Signature", "amzsig0123456789abcdef"),
		"[2026-02-10 00:28:09] headers {\"api-key\": \""+s("api-key JSON header", "hdr-json-21q")+"\", \"Ocp-Apim-Subscription-Key\": \""+
			s("subscription key", "apim-sub-key-22")+"\"}",
	))
	// The launch script: exports, flags, a continued flag, a key block.
	c.write(t, "launch.sh", lines(
		"#!/bin/bash",
		"export HF_TOKEN="+s("export HF_TOKEN", "hf_LaunchTokCCCCCCCCCCCCCCCCCCCCCCCC"),
		"export WANDB_API_KEY="+s("export WANDB_API_KEY", "wandb-launch-0123456789abcdef"),
		"export DB_PASSWORD=\""+s("quoted with spaces", "spaced pass word")+"\"",
		"export REDIS_PASSWORD="+s("specials", "Xy,9;Qw)e-dbpw"),
		"export OPENAI_API_KEY='"+s("single-quoted", "sk-LaunchOpenAIKeyDDDDDDDDDDDDDDDD")+"'",
		"declare -x SECRET_TOKEN=\""+s("declare -x", "declare-tok-18")+"\"",
		"python3 -m sglang.launch_server --model-path /models/m \\",
		"  --api-key "+s("flag", "la-flag-key-55")+" \\",
		"  --ssl-keyfile-password "+s("flag ssl", "la-sslpw-77")+" \\",
		"  --api-key \\",
		"    "+s("flag value on the next line", "la-cont-key-66")+" \\",
		"  --port 30000",
		"vllm serve /m --api-key="+s("--flag=value", "eq-flag-key-13")+" --port 8000",
		"cat > /root/.ssh/id_ed25519 <<'EOF'",
		"-----BEGIN OPENSSH PRIVATE KEY-----",
		s("key block line 1", "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ"),
		s("key block line 2", "QyNTUxOQAAACBhbGljZXNzc2hrZXlib2R5MDEyMzQ1"),
		"-----END OPENSSH PRIVATE KEY-----",
		"EOF",
	))
	// ps: arguments of the server and an environment shown by ps e.
	c.write(t, "ps_aux.txt", lines(
		"USER         PID %CPU %MEM    VSZ   RSS TTY      STAT START   TIME COMMAND",
		"root           1  0.0  0.0 167744 13056 ?        Ss   00:20   0:01 /sbin/init",
		h("ps user", "alice1")+"     72169 98.9 12.1 999999 99999 pts/0    Rl   00:27  80:01 python3 -m sglang.launch_server --model-path /home/alice1/m --api-key "+
			s("ps flag", "ps-flag-key-aa1")+" --admin-api-key "+s("ps admin flag", "ps-admin-bb2")+" --hf-token "+
			s("ps hf flag", "hf_PsTokenEEEEEEEEEEEEEEEEEEEEEEEEEE")+" HF_TOKEN="+s("ps e environment", "hf_PsEnvFFFFFFFFFFFFFFFFFFFFFFFFFFFFF"),
		"root        9001  0.0  0.0   9999  999 ?        S    00:27   0:00 python -c import subprocess; subprocess.run(['vllm', 'serve', '--api-key', '"+
			s("argv list", "argv-list-key-14")+"'])",
	))
	// An env dump: values run to the end of their line.
	c.write(t, "env.txt", lines(
		"ANTHROPIC_API_KEY="+s("env Anthropic", "sk-ant-api03-EnvAnthropicGGGGGGGGGGGGGGG"),
		"AWS_SECRET_ACCESS_KEY="+s("env AWS secret", "env/awsSecret+Key0123456789abcdefghij"),
		"CUDA_VISIBLE_DEVICES=0,1,2,3",
		"DB_PASSWORD="+s("env value with spaces", "env pass with spaces"),
		"MYSQL_PWD="+s("MYSQL_PWD", "env-mysql-pw-3"),
		"TOKEN="+s("TOKEN=", "env-bare-token-4"),
		"REDIS_URL=redis://:"+s("URL password, no user", "env-redis-pw")+"@cache:6379/0",
		"GH_PAT="+s("env PAT", "github_pat_11BBBBBBB0EnvPatABCDEFGHIJKLMNOPQRSTUVWXYZ01"),
		"SENTRY_DSN=https://"+s("DSN key as userinfo", "3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c")+"@o1.ingest.sentry.io/1",
		"NGC_API_KEY="+s("NGC key", "nvapi-NgcKeyRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRR"),
		"PGPASSWORD="+s("PGPASSWORD", "env-pg-pw-5"),
		"HOSTNAME="+h("env HOSTNAME", "gpu-node-17"),
		"MASTER_ADDR="+h("env MASTER_ADDR", "10.20.30.40"),
		"OWNER_EMAIL="+h("e-mail", "dave.jones@example.org"),
	))
	// YAML: quoting, comments, block scalars, lists, Kubernetes env lists.
	c.write(t, "config.yaml", lines(
		"server:",
		"  api_key: "+s("YAML plain", "yaml-apikey-1x"),
		"  db_password: \""+s("YAML quoted with specials", "yaml db pw, with; stuff)")+"\"",
		"  admin_api_key: '"+s("YAML single-quoted", "yaml-admin-2x")+"'",
		"  redis_password: "+s("YAML with comment", "yaml-redis-7x")+" # rotated monthly",
		"  password: |",
		"    "+s("YAML block line 1", "yaml-block-line-one"),
		"    "+s("YAML block line 2", "yaml-block-line-two"),
		"  token: >-",
		"    "+s("YAML folded", "yaml-folded-tok"),
		"  api_keys:",
		"    - "+s("YAML list 1", "yaml-list-key-1x"),
		"    - "+s("YAML list 2", "yaml-list-key-2x"),
		"  credentials:",
		"    username: bob",
		"    secret: "+s("YAML nested", "yaml-nested-secret-8"),
		"  port: 30000",
		"env:",
		"  - name: HF_TOKEN",
		"    value: "+s("Kubernetes env value", "hf_K8sValueHHHHHHHHHHHHHHHHHHHHHHHH"),
		"  - name: DB_PASSWORD",
		"    value: \""+s("Kubernetes env value 2", "k8s-dbpw-6x")+"\"",
		"secret_key = '"+s("INI", "ini-secret-15")+"'",
		"password = \""+s("TOML", "toml-pw-16")+"\"",
		"Environment=\"API_KEY="+s("systemd", "systemd-key-17")+"\"",
		"set API_KEY="+s("cmd set", "win-set-key-20"),
		"ENV HF_TOKEN "+s("Dockerfile ENV", "hf_DockerEnvMMMMMMMMMMMMMMMMMMMMMMM"),
	))
	// Pretty-printed JSON: values on the next line, lists over lines.
	c.write(t, "config.json", lines(
		"{",
		"  \"api_key\": \""+s("JSON", "json-apikey-1x")+"\",",
		"  \"wandb_api_key\": \""+s("JSON wandb", "json-wandb-2x")+"\",",
		"  \"api_keys\": [",
		"    \""+s("JSON list 1", "json-list-k1x")+"\",",
		"    \""+s("JSON list 2", "json-list-k2x")+"\"",
		"  ],",
		"  \"password\":",
		"    \""+s("JSON value on the next line", "json-nextline-pw")+"\",",
		"  \"client_secret\": \""+s("JSON client secret", "json-client-secret-9")+"\",",
		"  \"Authorization\": \"Basic "+s("JSON Basic", "anNvbi1iYXNpYy11c2VyOnB3")+"\",",
		"  \"env\": [{\"name\": \"API_KEY\", \"value\": \""+s("JSON name/value", "k8s-json-val-23")+"\"}],",
		"  \"home\": \"C:\\\\Users\\\\"+h("Windows user, JSON-escaped", "carolw")+"\\\\models\",",
		"  \"port\": 30000",
		"}",
	))
	// Probe records with headers and bodies.
	c.write(t, "probes.jsonl", lines(
		`{"url": "http://127.0.0.1:30000/v1/models", "request_headers": {"Authorization": "Bearer `+s("probe bearer", "probe-bearer-tok-1a2b")+`"}, "status": 200}`,
		`{"url": "http://127.0.0.1:30000/generate?api_key=`+s("probe query", "probe-query-key-5e6f")+`", "body": "{\"api_key\": \"`+s("probe body", "probe-body-key-3c4d")+`\"}"}`,
	))
	c.write(t, "netrc.txt", lines("machine registry.example.com login robot password "+s(".netrc", "netrc-pw-7g8h")))
	// Hosts, addresses, users and e-mail addresses.
	c.write(t, "nccl.log", lines(
		h("NCCL host", "gpu-node-18")+":41170:41300 [0] NCCL INFO Bootstrap : Using eth0:"+h("IPv4", "192.168.77.5")+"<0>",
		"INFO connecting to http://"+h("internal FQDN", "head01.cluster.internal")+":8265/ from "+h("IPv6", "fd12:3456:789a::17"),
		"INFO model at /data/users/"+h("/data/users/NAME", "bobsmith")+"/llama and C:\\Users\\"+h("C:\\Users\\NAME", "erinq")+"\\cache",
		"INFO mail sent to "+h("e-mail 2", "ops-team@corp.example.com"),
	))
	c.write(t, "df.txt", lines(
		"Filesystem                Type  1K-blocks     Used Available Use% Mounted on",
		h("df server", "nfs-store")+":/export/models nfs4  104857600 52428800  52428800  50% /models",
	))
	// A folder named after a host, which only the manifest's source path
	// and the member names show.
	c.write(t, h("host only in a path", "rack7.corp")+"/server.log", lines("[2026-02-10 00:27:58] Load weight begin."))

	// Secrets in file and folder names.
	c.write(t, "HF_TOKEN="+s("file name", "hf_NameTokenIIIIIIIIIIIIIIIIIIIIIIII")+".log", lines("named"))
	c.write(t, s("folder name", "ghp_FolderTokenJJJJJJJJJJJJJJJJJJJJJJJJJJ")+"/run.log", lines("in a folder"))

	// Nested archives.
	inner := tarBytes(t, []member{
		{name: "inner/a.log", data: lines("api_key=" + s("tar.gz member", "nested-tgz-key-1x"))},
		{name: "member-" + s("member name", "sk-proj-MemberKeyKKKKKKKKKKKKKKKKKKKK") + ".log", data: lines("x")},
		{name: "inner/b.log.gz", data: gz(t, lines("TOKEN="+s("gzip member of a tar.gz", "tgz-gz-tok-11x")))},
		{name: "link", link: "/run/secrets/api_key=" + s("link target", "link-target-key-9x")},
		{name: "deeper.tar", data: tarBytes(t, []member{{name: "d.log", data: lines("password: " + s("tar in tar.gz", "tar-in-tgz-pw-24"))}})},
	})
	c.write(t, "logs.tar.gz", gz(t, inner))
	c.write(t, "x.log.gz.gz", gz(t, gz(t, lines("DB_PASSWORD="+s(".gz.gz", "gzgz-pw-2x")))))
	c.write(t, "y.log.bz2", bz2(t, lines("DB_PASSWORD="+s(".bz2", "bz2-pw-3x"))))
	c.write(t, "w.log.xz", xzb(t, lines("DB_PASSWORD="+s(".xz", "xz-pw-25x"))))
	c.write(t, "v.log.zst", zst(t, lines("DB_PASSWORD="+s(".zst", "zst-pw-26x"))))
	c.write(t, "z.zip", zipBytes(t, []member{
		{name: "cfg.yaml", data: lines("password: " + s("zip member", "zip-pw-4x"))},
		{name: "inner.tar.gz", data: gz(t, tarBytes(t, []member{{name: "i.log", data: lines("api_key=" + s("tar.gz in zip", "zip-in-tgz-5x"))}}))},
	}))
	c.write(t, "outer.tar", tarBytes(t, []member{
		{name: "in.zip", data: zipBytes(t, []member{{name: "e.log", data: lines("api_key=" + s("zip in tar", "zip-in-tar-27x"))}})},
	}))
	// UTF-16 text with a byte order mark.
	c.write(t, "win-le.txt", utf16Bytes("DB_PASSWORD="+s("UTF-16LE", "utf16-pw-7x")+"\r\nHF_TOKEN="+s("UTF-16LE token", "hf_Utf16TokenLLLLLLLLLLLLLLLLLLLLLL")+"\r\n", false))
	c.write(t, "win-be.txt", utf16Bytes("api_key="+s("UTF-16BE", "utf16be-key-8x")+"\n", true))
	// What coroner cannot read as text: left out, never packed.
	c.write(t, "a.log.lz4", append([]byte{0x04, 0x22, 0x4d, 0x18}, lines("DB_PASSWORD="+s("lz4 (left out)", "lz4-pw-6x"))...))
	c.write(t, "b.7z", append([]byte("7z\xbc\xaf\x27\x1c"), lines("api_key="+s("7z (left out)", "seven-z-key-28"))...))
	c.write(t, "core.bin", append(append([]byte{0x7f, 'E', 'L', 'F'}, make([]byte, 2048)...), "api_key="+s("binary (left out)", "bin-key-10x")...))
	return c
}

// bundleTexts returns every text a written bundle carries: the tar stream
// itself (names, headers, content), each member, and, recursively, the
// content of every member that is compressed, archived or UTF-16.
func bundleTexts(t *testing.T, path string) [][]byte {
	t.Helper()
	raw, files, _ := untar(t, path)
	out := [][]byte{raw}
	for name, data := range files {
		out = append(out, []byte(name))
		out = append(out, expandAll(t, data, 0)...)
	}
	return out
}

// expandAll opens data the way an attacker reading the bundle would:
// every compression, archive and UTF-16 encoding, to any depth.
func expandAll(t *testing.T, data []byte, depth int) [][]byte {
	out := [][]byte{data}
	if depth > 8 {
		return out
	}
	open := func(r io.Reader, err error) {
		if err != nil {
			return
		}
		if d, err := io.ReadAll(io.LimitReader(r, 64<<20)); err == nil || len(d) > 0 {
			out = append(out, expandAll(t, d, depth+1)...)
		}
	}
	switch {
	case bytes.HasPrefix(data, []byte{0x1f, 0x8b}):
		open(gzip.NewReader(bytes.NewReader(data)))
	case bytes.HasPrefix(data, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		d, err := zstd.NewReader(bytes.NewReader(data))
		if err == nil {
			open(d, nil)
			d.Close()
		}
	case bytes.HasPrefix(data, []byte("\xfd7zXZ\x00")):
		open(xz.NewReader(bytes.NewReader(data)))
	case bytes.HasPrefix(data, []byte("BZh")):
		open(bzip2.NewReader(bytes.NewReader(data)), nil)
	case bytes.HasPrefix(data, []byte("PK\x03\x04")):
		if zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data))); err == nil {
			for _, f := range zr.File {
				out = append(out, []byte(f.Name))
				open(f.Open())
			}
		}
	case bytes.HasPrefix(data, []byte{0xff, 0xfe}) || bytes.HasPrefix(data, []byte{0xfe, 0xff}):
		be := data[0] == 0xfe
		var u []uint16
		for i := 2; i+1 < len(data); i += 2 {
			if be {
				u = append(u, uint16(data[i])<<8|uint16(data[i+1]))
			} else {
				u = append(u, uint16(data[i+1])<<8|uint16(data[i]))
			}
		}
		out = append(out, []byte(string(utf16.Decode(u))))
	case len(data) > 262 && string(data[257:262]) == "ustar":
		tr := tar.NewReader(bytes.NewReader(data))
		for {
			h, err := tr.Next()
			if err != nil {
				break
			}
			out = append(out, []byte(h.Name), []byte(h.Linkname))
			open(tr, nil)
		}
	}
	return out
}

// survivors lists the planted values found in any of the texts, as they
// are or encoded as UTF-16.
func survivors(texts [][]byte, planted []planted) []string {
	var out []string
	for _, p := range planted {
		forms := [][]byte{[]byte(p.value), utf16Bytes(p.value, false)[2:], utf16Bytes(p.value, true)[2:]}
	search:
		for _, text := range texts {
			for _, f := range forms {
				if bytes.Contains(text, f) {
					out = append(out, p.where+": "+p.value)
					break search
				}
			}
		}
	}
	return out
}

// TestBundlePlantedSecrets is the acceptance test of issue 19: every
// planted secret is gone from a plain bundle, and every planted host,
// address, user and e-mail address too with --redact-hosts, searched in
// the bundle's bytes, names and manifest and in everything nested in it;
// each was there in a --no-redact bundle (or is in a file coroner cannot
// read, which even --no-redact leaves as is).
func TestBundlePlantedSecrets(t *testing.T) {
	c := plantedCorpus(t)
	require.GreaterOrEqual(t, len(c.secrets), 80, "the corpus is at least as varied as the issue's list")
	out := t.TempDir()
	raw, red, hosts := filepath.Join(out, "raw.tar.zst"), filepath.Join(out, "red.tar.zst"), filepath.Join(out, "hosts.tar.zst")
	for _, args := range [][]string{
		{"bundle", c.dir, "--no-redact", "-o", raw},
		{"bundle", c.dir, "-o", red},
		{"bundle", c.dir, "--redact-hosts", "-o", hosts},
	} {
		code, _, stderr := runCLI(t, "", args...)
		require.Equal(t, exitOK, code, "%v: %s", args, stderr)
	}
	// Without redaction every planted value is in the bundle: the search
	// below can find what it looks for.
	all := append(append([]planted(nil), c.secrets...), c.hosts...)
	rawTexts := bundleTexts(t, raw)
	assert.Len(t, survivors(rawTexts, all), len(all), "each planted value is in the --no-redact bundle")

	assert.Empty(t, survivors(bundleTexts(t, red), c.secrets), "secrets that survived a plain bundle")
	hostTexts := bundleTexts(t, hosts)
	assert.Empty(t, survivors(hostTexts, c.secrets), "secrets that survived --redact-hosts")
	assert.Empty(t, survivors(hostTexts, c.hosts), "hosts, addresses, users and e-mail addresses that survived --redact-hosts")

	// What could not be read is listed in the manifest, with why.
	_, files, _ := untar(t, red)
	m := readManifest(t, files)
	skipped := map[string]string{}
	for _, a := range m.Artifacts {
		if a.Skipped != "" {
			skipped[strings.TrimPrefix(a.Command, "pack ")] = a.Skipped
		}
	}
	assert.Contains(t, skipped["a.log.lz4"], "lz4 stream: coroner has no lz4 decoder")
	assert.Contains(t, skipped["b.7z"], "7z archive")
	assert.Contains(t, skipped["core.bin"], "binary content")
	assert.Contains(t, skipped["logs.tar.gz/link"], "a link in logs.tar.gz (to /run/secrets/api_key=*")
	for k := range m.Redaction.Counts {
		assert.Contains(t, redact.Kinds(), k)
	}
	// Each redacted file keeps the raw file's length and lines.
	_, rawFiles, _ := untar(t, raw)
	for name, data := range files {
		if name == manifest.Name || strings.ContainsAny(name, "*") {
			continue
		}
		require.Contains(t, rawFiles, name)
		assert.Len(t, data, len(rawFiles[name]), name)
		assert.Equal(t, bytes.Count(rawFiles[name], []byte("\n")), bytes.Count(data, []byte("\n")), name)
	}
}

// hostsRenamed writes the nodes of a run as node1, node2, ... in the
// order of their names, in a copy of the findings.
func hostsRenamed(f *facts.Facts, findings []string) []string {
	var hosts []string
	for _, l := range f.Logs {
		if l.Host != "" && !slices.Contains(hosts, l.Host) {
			hosts = append(hosts, l.Host)
		}
	}
	slices.Sort(hosts)
	out := slices.Clone(findings)
	for i, h := range hosts {
		for j := range out {
			out[j] = strings.ReplaceAll(out[j], h, fmt.Sprintf("node%d", i+1))
		}
	}
	return out
}

// fixtureBundles are the bundles under fixtures/ that have a .want: the
// ones the rules' tests read.
func fixtureBundles(t *testing.T) []string {
	t.Helper()
	wants, _ := filepath.Glob("../../fixtures/*/*.want")
	more, _ := filepath.Glob("../../fixtures/corpus/*/*.want")
	var out []string
	for _, w := range append(wants, more...) {
		if p := strings.TrimSuffix(w, ".want"); fileExists(p) {
			out = append(out, p)
		}
	}
	require.NotEmpty(t, out)
	return out
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// TestBundleKeepsFindingsOnEveryFixture packs every fixture bundle raw,
// redacted and with --redact-hosts: the analyzer finds the same (rule,
// title, message, evidence file:line) in all three, and a redacted bundle
// reads without a parse issue the raw one does not have.
func TestBundleKeepsFindingsOnEveryFixture(t *testing.T) {
	total := 0
	for _, fx := range fixtureBundles(t) {
		t.Run(strings.TrimPrefix(fx, "../../fixtures/"), func(t *testing.T) {
			out := t.TempDir()
			raw, red, hosts := filepath.Join(out, "raw.tar.zst"), filepath.Join(out, "red.tar.zst"), filepath.Join(out, "hosts.tar.zst")
			for _, args := range [][]string{
				{"bundle", fx, "--no-redact", "-o", raw},
				{"bundle", fx, "-o", red},
				{"bundle", fx, "--redact-hosts", "-o", hosts},
			} {
				code, _, stderr := runCLI(t, "", args...)
				require.Equal(t, exitOK, code, "%v: %s", args, stderr)
			}
			// A healthy run has no findings: the same none is the check.
			rawFindings, rawFacts, rawRes := analyzeBundle(t, raw)
			total += len(rawFindings)
			for _, p := range []string{red, hosts} {
				findings, f, res := analyzeBundle(t, p)
				// --redact-hosts renames the nodes, in their folders too:
				// the findings are the same up to the names.
				assert.Equal(t, hostsRenamed(rawFacts, rawFindings), hostsRenamed(f, findings), filepath.Base(p))
				assert.Equal(t, rawRes.Verdict.Outcome, res.Verdict.Outcome, filepath.Base(p))
				assert.Equal(t, rawRes.Verdict.Phase, res.Verdict.Phase, filepath.Base(p))
				assert.Equal(t, len(rawFacts.Issues()), len(f.Issues()), filepath.Base(p))
			}
		})
	}
	assert.Greater(t, total, 30, "the fixtures have findings to compare")
}

// TestBundleNestedArchiveKeepsFindings packs a folder holding the seed
// bundle as a .tar.gz whose member names carry secrets. Redaction used to
// rewrite those bytes inside the decompressed tar, which broke its header
// checksums: the analyzer then lost every member of the redacted bundle.
// Now the members are packed one by one, redacted, under the archive's
// name, and the findings are the raw bundle's.
func TestBundleNestedArchiveKeepsFindings(t *testing.T) {
	ms := dirMembers(t, seedBundle)
	ms = append(ms, member{name: "notes/HF_TOKEN=hf_MemberNameTokenZZZZZZZZZZZZZZZZZZZZ.txt", data: lines("see the run log")})
	dir := filepath.Join(t.TempDir(), "in")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "seed.tar.gz"), gz(t, tarBytes(t, ms)), 0o644))
	out := t.TempDir()
	raw, red := filepath.Join(out, "raw.tar.zst"), filepath.Join(out, "red.tar.zst")
	for _, args := range [][]string{{"bundle", dir, "--no-redact", "-o", raw}, {"bundle", dir, "-o", red}} {
		code, _, stderr := runCLI(t, "", args...)
		require.Equal(t, exitOK, code, "%v: %s", args, stderr)
	}
	rawFindings, _, _ := analyzeBundle(t, raw)
	findings, f, res := analyzeBundle(t, red)
	require.NotEmpty(t, rawFindings)
	// The planted file is cited (an unrecognized file) under its name,
	// which is redacted: the same findings, but for that name.
	const rawName = "HF_TOKEN=hf_MemberNameTokenZZZZZZZZZZZZZZZZZZZZ.txt"
	redName := "HF_TOKEN=hf_" + strings.Repeat("*", len(rawName)-len("HF_TOKEN=hf_"))
	for i := range rawFindings {
		rawFindings[i] = strings.ReplaceAll(rawFindings[i], rawName, redName)
	}
	assert.Equal(t, rawFindings, findings)
	assert.Equal(t, rules.OutcomeHung, res.Verdict.Outcome)
	assert.Equal(t, facts.KindSGLangLog, f.Source("seed.tar.gz/server.log").Kind, "the archive's members are read as the bundle's files")
	_, _, names := untar(t, red)
	assert.Contains(t, names, "seed.tar.gz/notes/"+redName)
	for _, name := range names {
		assert.NotContains(t, name, "MemberNameToken")
	}
}
