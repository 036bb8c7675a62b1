package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The action's script is tested against a fake GitHub API (httptest), with
// event payloads in testdata shaped as GitHub sends them, and the coroner
// binary built from this tree: the comment it writes, the labels it adds,
// and that a second event updates the comment instead of adding one. No
// test reaches the network.

var coronerBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "coroner-action-test-")
	if err != nil {
		panic(err)
	}
	coronerBin = filepath.Join(dir, "coroner")
	build := exec.Command("go", "build", "-o", coronerBin, "../../cmd/coroner")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build coroner: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// fakeGitHub is the part of the REST API the action uses, in memory.
type fakeGitHub struct {
	mu       sync.Mutex
	comments map[int][]ghComment // by issue number
	labels   map[int][]string    // labels added, by issue
	exists   map[string]bool     // the repository's labels
	nextID   int64
	calls    []string
	token    string
}

func newFake() *fakeGitHub {
	return &fakeGitHub{comments: map[int][]ghComment{}, labels: map[int][]string{}, nextID: 9000,
		exists: map[string]bool{"bug": true, "usage": true, "installation": true, "torch.compile": true, "rocm": true}}
}

var (
	commentsRe = regexp.MustCompile(`^/repos/([^/]+/[^/]+)/issues/(\d+)/comments$`)
	commentRe  = regexp.MustCompile(`^/repos/([^/]+/[^/]+)/issues/comments/(\d+)$`)
	labelsRe   = regexp.MustCompile(`^/repos/([^/]+/[^/]+)/issues/(\d+)/labels$`)
	labelRe    = regexp.MustCompile(`^/repos/([^/]+/[^/]+)/labels/(.+)$`)
)

func (f *fakeGitHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, r.Method+" "+r.URL.Path)
	f.token = r.Header.Get("Authorization")
	var in map[string]any
	if r.Body != nil {
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &in)
	}
	num := func(s string) int { var n int; fmt.Sscan(s, &n); return n }
	switch p := r.URL.Path; {
	case commentsRe.MatchString(p) && r.Method == http.MethodGet:
		n := num(commentsRe.FindStringSubmatch(p)[2])
		cs := f.comments[n]
		if cs == nil {
			cs = []ghComment{}
		}
		if r.URL.Query().Get("page") != "1" {
			cs = []ghComment{}
		}
		_ = json.NewEncoder(w).Encode(cs)
	case commentsRe.MatchString(p) && r.Method == http.MethodPost:
		n := num(commentsRe.FindStringSubmatch(p)[2])
		f.nextID++
		c := ghComment{ID: f.nextID, Body: in["body"].(string), User: user{Login: "github-actions[bot]", Type: "Bot"}}
		f.comments[n] = append(f.comments[n], c)
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(c)
	case commentRe.MatchString(p) && r.Method == http.MethodPatch:
		id := int64(num(commentRe.FindStringSubmatch(p)[2]))
		for n, cs := range f.comments {
			for i := range cs {
				if cs[i].ID == id {
					cs[i].Body = in["body"].(string)
					f.comments[n] = cs
					_ = json.NewEncoder(w).Encode(cs[i])
					return
				}
			}
		}
		http.Error(w, `{"message":"Not Found"}`, http.StatusNotFound)
	case labelRe.MatchString(p) && r.Method == http.MethodGet:
		name := labelRe.FindStringSubmatch(p)[2]
		if !f.exists[name] {
			http.Error(w, `{"message":"Not Found"}`, http.StatusNotFound)
			return
		}
		_ = json.NewEncoder(w).Encode(ghLabel{Name: name})
	case labelsRe.MatchString(p) && r.Method == http.MethodPost:
		n := num(labelsRe.FindStringSubmatch(p)[2])
		for _, l := range in["labels"].([]any) {
			f.labels[n] = append(f.labels[n], l.(string))
		}
		_ = json.NewEncoder(w).Encode([]ghLabel{})
	default:
		http.Error(w, `{"message":"unexpected call"}`, http.StatusTeapot)
	}
}

// writes are the calls that change the repository.
func (f *fakeGitHub) writes() []string {
	var out []string
	for _, c := range f.calls {
		if !strings.HasPrefix(c, "GET ") {
			out = append(out, c)
		}
	}
	return out
}

func (f *fakeGitHub) reset() { f.calls = nil }

func cfg(t *testing.T, srv *httptest.Server, event, payload string) config {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", payload))
	require.NoError(t, err)
	var ev struct {
		Repository struct {
			FullName string `json:"full_name"`
		} `json:"repository"`
	}
	require.NoError(t, json.Unmarshal(data, &ev))
	return config{EventName: event, EventPath: filepath.Join("testdata", payload), Repo: ev.Repository.FullName,
		APIURL: srv.URL, Token: "t0ken", Temp: t.TempDir(), Coroner: coronerBin, LabelTable: "auto",
		OutputFile: filepath.Join(t.TempDir(), "output"), HTTP: srv.Client()}
}

// TestOpenedThenEdited: an opened issue gets one comment, with the marker,
// the diagnosis and the suggested labels; the edit that follows updates
// that comment instead of adding one, and labels are left alone without
// apply-labels.
func TestOpenedThenEdited(t *testing.T) {
	fake := newFake()
	srv := httptest.NewServer(fake)
	defer srv.Close()

	c := cfg(t, srv, "issues", "issues-opened.json")
	var log bytes.Buffer
	require.NoError(t, run(context.Background(), c, &log))
	assert.Equal(t, []string{"POST /repos/vllm-project/vllm/issues/23278/comments"}, fake.writes())
	assert.Equal(t, "Bearer t0ken", fake.token)
	require.Len(t, fake.comments[23278], 1)
	body := fake.comments[23278][0].Body
	assert.True(t, strings.HasPrefix(body, Marker+"\n### coroner: crashed in kv-cache"), body[:min(len(body), 300)])
	assert.Contains(t, body, "(kv-cache-insufficient)")
	assert.Contains(t, body, "the issue's text, lines ")
	assert.Contains(t, body, "**Suggested labels:** `bug`")
	assert.Less(t, len([]rune(body)), commentLimit)
	assert.Empty(t, fake.labels, "labels only with apply-labels")
	out, err := os.ReadFile(c.OutputFile)
	require.NoError(t, err)
	assert.Equal(t, "comment-id=9001\nlabels=bug\noutcome=crashed\n", string(out))
	assert.Contains(t, log.String(), "wrote comment 9001")

	// The edit: same issue, same verdict: the comment is found by its
	// marker and left as it is, not written twice.
	fake.reset()
	c = cfg(t, srv, "issues", "issues-edited.json")
	log.Reset()
	require.NoError(t, run(context.Background(), c, &log))
	assert.Empty(t, fake.writes(), "an unchanged comment is not rewritten")
	assert.Len(t, fake.comments[23278], 1)
	assert.Contains(t, log.String(), "updated comment 9001")

	// A comment that changed (another table, another text) is edited in place.
	fake.mu.Lock()
	fake.comments[23278][0].Body = Marker + "\nan older answer"
	fake.mu.Unlock()
	fake.reset()
	require.NoError(t, run(context.Background(), c, &log))
	assert.Equal(t, []string{"PATCH /repos/vllm-project/vllm/issues/comments/9001"}, fake.writes())
	assert.Len(t, fake.comments[23278], 1)
	assert.Equal(t, body, fake.comments[23278][0].Body)
}

// TestCommentWithLogAndLabels: the log arrives in a comment; the analysis
// reads the body and every comment, and with apply-labels the labels the
// repository has and the issue lacks are added, no other.
func TestCommentWithLogAndLabels(t *testing.T) {
	fake := newFake()
	srv := httptest.NewServer(fake)
	defer srv.Close()
	// The reporter's comment is already listed by the API; another
	// person's comment is too.
	data, err := os.ReadFile("testdata/issue-comment-created.json")
	require.NoError(t, err)
	var ev event
	require.NoError(t, json.Unmarshal(data, &ev))
	fake.comments[23279] = []ghComment{*ev.Comment, {ID: 5, Body: "Same here, @reporter.", User: user{Login: "other", Type: "User"}}}

	c := cfg(t, srv, "issue_comment", "issue-comment-created.json")
	c.ApplyLabels = true
	c.LabelTable = "vllm"
	fake.exists["bug"] = true
	require.NoError(t, run(context.Background(), c, io.Discard))
	require.Len(t, fake.comments[23279], 3)
	body := fake.comments[23279][2].Body
	assert.Contains(t, body, "### coroner: crashed in kv-cache")
	assert.Contains(t, body, "comment 1, lines ", "the log is quoted where it is: the first comment")
	// "bug" is on the issue already; the rest of the verdict's labels are
	// added only if the repository has them.
	out, _ := os.ReadFile(c.OutputFile)
	assert.Contains(t, string(out), "outcome=crashed")
	for _, l := range fake.labels[23279] {
		assert.True(t, fake.exists[l], "added a label the repository lacks: %s", l)
		assert.NotEqual(t, "bug", l, "added a label the issue had")
	}
}

// TestLabelsApplied: with apply-labels, a label the issue lacks is added;
// one the repository lacks is not created.
func TestLabelsApplied(t *testing.T) {
	fake := newFake()
	srv := httptest.NewServer(fake)
	defer srv.Close()
	dir := t.TempDir()
	table := filepath.Join(dir, "labels.yaml")
	require.NoError(t, os.WriteFile(table, []byte("outcome:\n  crashed: [bug, crash]\ncause:\n  kv-cache-insufficient: [usage, memory]\n"), 0o644))
	c := cfg(t, srv, "issues", "issues-opened.json")
	c.ApplyLabels = true
	c.Workspace = dir
	c.LabelTable = "labels.yaml"
	require.NoError(t, run(context.Background(), c, io.Discard))
	assert.Equal(t, []string{"usage"}, fake.labels[23278], "bug is on the issue, crash and memory are not labels of the repository")
	assert.Contains(t, fake.comments[23278][0].Body, "**Suggested labels:** `bug` `crash` `memory` `usage`")

	c.LabelTable = "missing.yaml"
	err := run(context.Background(), c, io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "label-table missing.yaml")
}

// TestThinIssue: an issue with nothing to diagnose gets the request for
// evidence, which pings nobody.
func TestThinIssue(t *testing.T) {
	fake := newFake()
	srv := httptest.NewServer(fake)
	defer srv.Close()
	c := cfg(t, srv, "issues", "issues-opened-thin.json")
	c.ApplyLabels = true
	require.NoError(t, run(context.Background(), c, io.Discard))
	require.Len(t, fake.comments[9001], 1)
	body := fake.comments[9001][0].Body
	assert.Contains(t, body, "nothing to diagnose yet")
	assert.Contains(t, body, "`python -m sglang.check_env`")
	assert.NotContains(t, body, "@maintainer")
	assert.Empty(t, fake.labels)
}

// TestIgnored: the action's own comment, a pull request's comment and
// other actions write nothing.
func TestIgnored(t *testing.T) {
	fake := newFake()
	srv := httptest.NewServer(fake)
	defer srv.Close()
	for _, tc := range []struct{ event, payload, why string }{
		{"issue_comment", "issue-comment-own.json", "the action's own comment"},
		{"issue_comment", "issue-comment-pr.json", "a pull request"},
		{"issues", "issues-labeled.json", "issues labeled events are not answered"},
		{"issue_comment", "issues-opened.json", "issue_comment opened events are not answered"},
	} {
		var log bytes.Buffer
		require.NoError(t, run(context.Background(), cfg(t, srv, tc.event, tc.payload), &log), tc.payload)
		assert.Contains(t, log.String(), tc.why, tc.payload)
	}
	assert.Empty(t, fake.calls, "no call to the API at all")
}

// TestAPIErrors: a failing API is an error that says which call failed,
// in one line that cannot forge a workflow command.
func TestAPIErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "{\"message\":\"Resource not accessible by integration\"}\n::set-output name=x::y", http.StatusForbidden)
	}))
	defer srv.Close()
	err := run(context.Background(), cfg(t, srv, "issues", "issues-opened.json"), io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "403")
	assert.NotContains(t, oneLine(err.Error()), "::")
	assert.NotContains(t, oneLine(err.Error()), "\n")
}

// TestActionYAML checks action.yml: a composite action whose scripts never
// expand the event or the inputs (GitHub would paste them into the shell
// script: the classic injection), labels off by default, and the tools
// built from the action's own source.
func TestActionYAML(t *testing.T) {
	data, err := os.ReadFile("../../action.yml")
	require.NoError(t, err)
	var a struct {
		Inputs map[string]struct {
			Default string `yaml:"default"`
		} `yaml:"inputs"`
		Runs struct {
			Using string `yaml:"using"`
			Steps []struct {
				Uses string            `yaml:"uses"`
				Run  string            `yaml:"run"`
				Env  map[string]string `yaml:"env"`
			} `yaml:"steps"`
		} `yaml:"runs"`
	}
	require.NoError(t, yaml.Unmarshal(data, &a))
	assert.Equal(t, "composite", a.Runs.Using)
	assert.Equal(t, "false", a.Inputs["apply-labels"].Default)
	assert.Equal(t, "auto", a.Inputs["label-table"].Default)
	for _, s := range a.Runs.Steps {
		assert.NotContains(t, s.Run, "${{", "a run script expands an expression: %q", s.Run)
		if s.Uses != "" {
			assert.Regexp(t, `@[0-9a-f]{40}$`, s.Uses, "actions are pinned by commit")
		}
	}
	assert.NotContains(t, string(data), "github.event.", "the action reads the event from its file, not from expressions")
	assert.Contains(t, string(data), "./cmd/coroner")
	assert.Contains(t, string(data), "./scripts/action")
}
