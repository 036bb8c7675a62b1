package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runCLI runs coroner in-process and returns its exit code and output.
func runCLI(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, env{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errb})
	return code, out.String(), errb.String()
}

const seedBundle = "../../fixtures/seed/flashinfer-sm120-hang"
const idleBundle = "../../fixtures/corpus/h200-x2/00-idle"

// incompleteBundle is a real log that ends mid-startup: a warning, no error.
const incompleteBundle = "../../fixtures/corpus/fulllogs/sglang-qwen3-14b-tp2-a4500-incomplete"

func TestExitCodes(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		out  string // substring of stdout
		err  string // substring of stderr
	}{
		{"version", []string{"version"}, exitOK, "coroner " + version, ""},
		{"--version, as the command says it (issue 18, item 9)", []string{"--version"}, exitOK, "coroner " + version + "\n", ""},
		{"help", []string{"--help"}, exitOK, "analyze", ""},
		{"no command", []string{}, exitUsage, "", "expected one of"},
		{"unknown flag", []string{"analyze", "--nope", idleBundle}, exitUsage, "", "unknown flag --nope"},
		{"bad format", []string{"analyze", "--format", "pdf", idleBundle}, exitUsage, "", "--format"},
		{"bad size", []string{"analyze", "--max-bytes", "lots", idleBundle}, exitUsage, "", "--max-bytes"},
		{"bad zone", []string{"analyze", "--tz", "Mars/Olympus", idleBundle}, exitUsage, "", "--tz"},
		{"missing bundle", []string{"analyze", "does/not/exist"}, exitInput, "", "cannot read bundle does/not/exist"},
		{"idle machine is fine", []string{"analyze", idleBundle}, exitOK, "# coroner postmortem", ""},
		{"warnings pass by default", []string{"analyze", incompleteBundle}, exitOK, "# coroner postmortem", ""},
		{"fail-on warning trips on warnings", []string{"analyze", "--fail-on", "warning", incompleteBundle}, exitFindings, "# coroner postmortem", ""},
		{"seed hang is a failure", []string{"analyze", seedBundle}, exitFindings, "hung", ""},
		{"fail-on never", []string{"analyze", "--fail-on", "never", seedBundle}, exitOK, "hung", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runCLI(t, "", tc.args...)
			assert.Equal(t, tc.code, code, "stdout:\n%s\nstderr:\n%s", out, errs)
			assert.Contains(t, out, tc.out)
			assert.Contains(t, errs, tc.err)
		})
	}
}

func TestAnalyzeJSONContract(t *testing.T) {
	code, out, errs := runCLI(t, "", "analyze", "--format", "json", "--fail-on", "never", idleBundle)
	require.Equal(t, exitOK, code, errs)
	var rep map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.EqualValues(t, 1, rep["schema_version"])
	bundle := rep["bundle"].(map[string]any)
	sources := bundle["sources"].([]any)
	// Every file of the bundle is listed.
	var files []string
	require.NoError(t, filepath.WalkDir(idleBundle, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(idleBundle, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return err
	}))
	var listed []string
	for _, s := range sources {
		listed = append(listed, s.(map[string]any)["path"].(string))
		assert.NotEmpty(t, s.(map[string]any)["kind"])
	}
	sort.Strings(files)
	assert.Equal(t, files, listed)
}

// TestWritesOnlyTheOutput runs analyze with -o and checks that the bundle is
// untouched and that the output file is the only new file anywhere under the
// temporary tree.
func TestWritesOnlyTheOutput(t *testing.T) {
	root := t.TempDir()
	bundleDir := filepath.Join(root, "bundle")
	require.NoError(t, os.CopyFS(bundleDir, os.DirFS(seedBundle)))
	before := treeDigest(t, root)
	outFile := filepath.Join(root, "out", "report.md")
	require.NoError(t, os.MkdirAll(filepath.Dir(outFile), 0o755))
	before[filepath.Join("out")] = "dir"

	code, stdout, errs := runCLI(t, "", "analyze", "-o", outFile, "--fail-on", "never", bundleDir)
	require.Equal(t, exitOK, code, errs)
	assert.Empty(t, stdout, "with -o nothing goes to stdout")

	after := treeDigest(t, root)
	delete(after, filepath.Join("out", "report.md"))
	assert.Equal(t, before, after)
	data, err := os.ReadFile(outFile)
	require.NoError(t, err)
	assert.Contains(t, string(data), "# coroner postmortem")
}

func treeDigest(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == "." {
			return nil
		}
		if d.IsDir() {
			out[rel] = "dir"
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out[rel] = fmt.Sprintf("%x", sha256.Sum256(data))
		return nil
	}))
	return out
}

func TestDeterministic(t *testing.T) {
	for _, format := range []string{"md", "json"} {
		_, a, _ := runCLI(t, "", "analyze", "--format", format, "--fail-on", "never", seedBundle)
		_, b, _ := runCLI(t, "", "analyze", "--format", format, "--fail-on", "never", seedBundle)
		assert.Equal(t, a, b, format)
	}
}

func TestSourcesCommand(t *testing.T) {
	code, out, errs := runCLI(t, "", "sources", seedBundle)
	require.Equal(t, exitOK, code, errs)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Greater(t, len(lines), 1)
	assert.Regexp(t, `^PATH\s+KIND\s+BYTES\s+LINES\s+CAPTURED\s+ISSUES$`, lines[0])
	assert.Contains(t, out, "server.log")
}
