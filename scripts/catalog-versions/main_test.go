package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/rules"
)

// gitRepo makes a repository whose releases print "widget lost" from
// v1.1.0 to v1.2.0 and no longer in v2.0.0; the fix commit is first
// released in v1.2.1rc1.
func gitRepo(t *testing.T) (dir, fix string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir = t.TempDir()
	run := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
		return string(out)
	}
	write := func(path, text string) {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, filepath.Dir(path)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, path), []byte(text), 0o644))
	}
	run("init", "-q")
	write("src/widget.c", "void ok() {}\n")
	write("tests/widget_test.c", "// expects \"widget lost\"\n")
	run("add", ".")
	run("commit", "-q", "-m", "1.0")
	run("tag", "v1.0.0")
	write("src/widget.c", "void f() {\n  WARN(\"widget lost on %d\", n);\n}\n")
	run("commit", "-q", "-am", "1.1")
	run("tag", "v1.1.0")
	run("tag", "nightly-v1.1.0-20250101")
	run("tag", "v1.2.0-1")
	write("src/other.c", "int x;\n")
	run("add", ".")
	run("commit", "-q", "-m", "the fix")
	fix = run("rev-parse", "HEAD")[:12]
	run("tag", "v1.2.1rc1")
	write("src/widget.c", "void f() {}\n")
	run("commit", "-q", "-am", "2.0")
	run("tag", "v2.0.0")
	return dir, fix
}

func TestDerivesRangesFromTags(t *testing.T) {
	repo, fix := gitRepo(t)
	tmp := t.TempDir()
	catalog := filepath.Join(tmp, "signatures.yaml")
	require.NoError(t, os.WriteFile(catalog, []byte(`- id: widget-lost
  source:
    - {repo: acme/widget, text: 'widget lost on %d', fixed_by: `+fix+`}
- id: widget-never
  source:
    - {repo: acme/widget, text: 'no such text'}
- id: other-repo
  source:
    - {repo: acme/other, text: 'x'}
`), 0o644))
	out := filepath.Join(tmp, "versions.yaml")
	// What the file already says of another repository stays.
	require.NoError(t, os.WriteFile(out, []byte("- id: other-repo\n  repo: acme/other\n  package: other\n  tags: 3\n  affected: \"other >=1.0\"\n"), 0o644))
	require.NoError(t, run(map[string]string{"acme/widget": repo}, catalog, out, false, false))
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	ds, err := rules.ParseDerived(data, out)
	require.NoError(t, err)
	byID := map[string]*rules.DerivedRange{}
	for _, d := range ds {
		byID[d.ID] = d
	}
	w := byID["widget-lost"]
	require.NotNil(t, w, string(data))
	assert.Equal(t, 4, w.Tags, "v1.0.0, v1.1.0, v1.2.0-1, v2.0.0: no rc, no nightly")
	assert.Equal(t, "1.1.0", w.First)
	assert.Equal(t, "1.2.0", w.Last, "NCCL-style packaging revisions are dropped")
	assert.Equal(t, "2.0.0", w.Gone)
	assert.Equal(t, "widget >=1.1.0, <2.0.0", w.Affected)
	assert.Equal(t, "widget 1.2.1rc1", w.Fixed)
	assert.Equal(t, "https://github.com/acme/widget/blob/v1.2.0-1/src/widget.c#L2", w.At, "the test file's quote is no release's source")
	assert.Empty(t, byID["widget-never"].Affected)
	assert.Equal(t, "other >=1.0", byID["other-repo"].Affected)
}

func TestReleaseNames(t *testing.T) {
	for _, c := range []struct {
		name   string
		folder bool
		want   string
	}{
		{"v2.18.3-1", false, "2.18.3"},
		{"v0.2.0.post1", false, "0.2.0.post1"},
		{"v0.6.18rc4", false, ""},
		{"nightly-v0.6.18-20260819", false, ""},
		{"nccl4py-v0.3.1", false, ""},
		{"vllm-0.8.5", true, "0.8.5"},
		{"vllm-0.8.5", false, ""},
	} {
		v, ok := versionOf(c.name, false, c.folder)
		if c.want == "" {
			assert.False(t, ok, c.name)
			continue
		}
		require.True(t, ok, c.name)
		assert.Equal(t, c.want, v.Text, c.name)
	}
}
