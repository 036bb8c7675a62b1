// Command action is the script of coroner's GitHub Action (action.yml at
// the repository's root). On an `issues` event (opened, edited) or an
// `issue_comment` event (created) it reads the issue's text and every
// comment (the REST API; the event payload holds only the body and the new
// comment), runs `coroner analyze` on them as gh's issue JSON, and writes
// the brief as ONE comment of the issue: the comment it wrote before,
// found by a hidden marker, is updated in place, never a second one. With
// apply-labels it adds the labels the verdict maps to (a label table:
// built in for sgl-project/sglang and vllm-project/vllm, or the
// repository's own) that exist in the repository and the issue lacks; it
// never removes one.
//
// The issue is data, never code: its text goes to coroner as a file, no
// shell sees it, and nothing of the issue is checked out, built or run.
// Pull requests' comments, bots' comments and the action's own comment are
// ignored.
//
// Configuration comes from the environment, as action.yml sets it:
// GITHUB_EVENT_NAME, GITHUB_EVENT_PATH, GITHUB_REPOSITORY, GITHUB_API_URL,
// GITHUB_WORKSPACE, RUNNER_TEMP, GITHUB_OUTPUT (outputs: comment-id,
// labels, outcome), INPUT_GITHUB_TOKEN, INPUT_APPLY_LABELS,
// INPUT_LABEL_TABLE (auto, none, sglang, vllm, or a YAML file in the
// workspace) and CORONER (the coroner binary).
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Marker is the hidden line that marks the action's comment.
const Marker = "<!-- coroner-triage: this comment is written by the coroner GitHub Action and updated in place -->"

// commentLimit is the most characters GitHub takes in a comment.
const commentLimit = 65536

type config struct {
	EventName, EventPath string
	Repo, APIURL, Token  string
	Workspace, Temp      string
	OutputFile           string
	Coroner              string
	ApplyLabels          bool
	LabelTable           string
	HTTP                 *http.Client
}

func fromEnv() config {
	c := config{
		EventName: os.Getenv("GITHUB_EVENT_NAME"), EventPath: os.Getenv("GITHUB_EVENT_PATH"),
		Repo: os.Getenv("GITHUB_REPOSITORY"), APIURL: os.Getenv("GITHUB_API_URL"), Token: os.Getenv("INPUT_GITHUB_TOKEN"),
		Workspace: os.Getenv("GITHUB_WORKSPACE"), Temp: os.Getenv("RUNNER_TEMP"), OutputFile: os.Getenv("GITHUB_OUTPUT"),
		Coroner: os.Getenv("CORONER"), LabelTable: os.Getenv("INPUT_LABEL_TABLE"),
	}
	c.ApplyLabels, _ = strconv.ParseBool(strings.TrimSpace(os.Getenv("INPUT_APPLY_LABELS")))
	return c
}

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := run(ctx, fromEnv(), os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "::error::coroner action: %s\n", oneLine(err.Error()))
		os.Exit(1)
	}
}

// oneLine keeps a message from forging workflow commands: GitHub reads a
// line that starts with "::" as one.
func oneLine(s string) string {
	return strings.NewReplacer("\r", " ", "\n", " ", "::", ": :").Replace(s)
}

type user struct {
	Login string `json:"login"`
	Type  string `json:"type"`
}

type ghLabel struct {
	Name string `json:"name"`
}

type ghIssue struct {
	Number      int             `json:"number"`
	Title       string          `json:"title"`
	Body        *string         `json:"body"`
	User        user            `json:"user"`
	Labels      []ghLabel       `json:"labels"`
	PullRequest json.RawMessage `json:"pull_request"`
}

type ghComment struct {
	ID   int64  `json:"id"`
	Body string `json:"body"`
	User user   `json:"user"`
}

type event struct {
	Action  string     `json:"action"`
	Issue   *ghIssue   `json:"issue"`
	Comment *ghComment `json:"comment"`
}

// Result is what a run did, for the step's outputs and the tests.
type Result struct {
	Skipped   string // why nothing was done, if so
	CommentID int64
	Updated   bool // an existing comment was edited (or left as it was)
	Labels    []string
	Added     []string // labels added to the issue
	Outcome   string
}

func run(ctx context.Context, c config, log io.Writer) error {
	res, err := handle(ctx, c)
	if err != nil {
		return err
	}
	if res.Skipped != "" {
		fmt.Fprintf(log, "coroner action: nothing to do: %s\n", res.Skipped)
		return nil
	}
	verb := "wrote"
	if res.Updated {
		verb = "updated"
	}
	fmt.Fprintf(log, "coroner action: %s comment %d (outcome %s; labels %s; added %s)\n", verb, res.CommentID, res.Outcome,
		orNone(res.Labels), orNone(res.Added))
	if c.OutputFile != "" {
		f, err := os.OpenFile(c.OutputFile, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		fmt.Fprintf(f, "comment-id=%d\nlabels=%s\noutcome=%s\n", res.CommentID, strings.Join(res.Labels, ","), res.Outcome)
	}
	return nil
}

func orNone(v []string) string {
	if len(v) == 0 {
		return "none"
	}
	return strings.Join(v, ", ")
}

// handle does the work of one event.
func handle(ctx context.Context, c config) (*Result, error) {
	data, err := os.ReadFile(c.EventPath)
	if err != nil {
		return nil, fmt.Errorf("read the event payload: %w", err)
	}
	var ev event
	if err := json.Unmarshal(data, &ev); err != nil {
		return nil, fmt.Errorf("the event payload is not JSON: %w", err)
	}
	if why := skip(c.EventName, &ev); why != "" {
		return &Result{Skipped: why}, nil
	}
	if c.Repo == "" || !strings.Contains(c.Repo, "/") {
		return nil, errors.New("GITHUB_REPOSITORY is not owner/name")
	}
	gh := &api{base: strings.TrimRight(orDefault(c.APIURL, "https://api.github.com"), "/"), token: c.Token, repo: c.Repo, http: c.HTTP}
	if gh.http == nil {
		gh.http = &http.Client{Timeout: 30 * time.Second}
	}
	comments, err := gh.comments(ctx, ev.Issue.Number)
	if err != nil {
		return nil, err
	}
	var ours *ghComment
	doc := issueDoc{Title: ev.Issue.Title, Body: deref(ev.Issue.Body), Comments: []docComment{}}
	for i := range comments {
		cm := &comments[i]
		if isOurs(cm) {
			if ours == nil {
				ours = cm
			}
			continue
		}
		doc.Comments = append(doc.Comments, docComment{Body: cm.Body})
	}
	if ev.Comment != nil && !containsComment(comments, ev.Comment.ID) {
		// The list may lag behind the event that announced the comment.
		doc.Comments = append(doc.Comments, docComment{Body: ev.Comment.Body})
	}
	dir, err := os.MkdirTemp(orDefault(c.Temp, os.TempDir()), "coroner-issue-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	issueFile := filepath.Join(dir, fmt.Sprintf("issue-%d.json", ev.Issue.Number))
	b, _ := json.MarshalIndent(doc, "", "  ")
	if err := os.WriteFile(issueFile, b, 0o600); err != nil {
		return nil, err
	}
	table, err := labelTable(c)
	if err != nil {
		return nil, err
	}
	brief, err := coroner(ctx, c.Coroner, issueFile, "github", table)
	if err != nil {
		return nil, err
	}
	js, err := coroner(ctx, c.Coroner, issueFile, "json", table)
	if err != nil {
		return nil, err
	}
	var rep struct {
		Verdict struct {
			Outcome string `json:"outcome"`
		} `json:"verdict"`
		Labels []string `json:"labels"`
	}
	if err := json.Unmarshal(js, &rep); err != nil {
		return nil, fmt.Errorf("coroner's JSON report: %w", err)
	}
	body := Marker + "\n" + string(brief)
	if n := len([]rune(body)); n > commentLimit {
		return nil, fmt.Errorf("the brief has %d characters, more than a comment holds", n)
	}
	res := &Result{Labels: rep.Labels, Outcome: rep.Verdict.Outcome}
	if ours != nil {
		res.CommentID, res.Updated = ours.ID, true
		if ours.Body != body {
			if err := gh.editComment(ctx, ours.ID, body); err != nil {
				return nil, err
			}
		}
	} else {
		id, err := gh.createComment(ctx, ev.Issue.Number, body)
		if err != nil {
			return nil, err
		}
		res.CommentID = id
	}
	if c.ApplyLabels && len(rep.Labels) > 0 {
		have := map[string]bool{}
		for _, l := range ev.Issue.Labels {
			have[strings.ToLower(l.Name)] = true
		}
		var add []string
		for _, l := range rep.Labels {
			if have[strings.ToLower(l)] {
				continue
			}
			ok, err := gh.labelExists(ctx, l)
			if err != nil {
				return nil, err
			}
			if ok {
				add = append(add, l) // a label the repository lacks is not created
			}
		}
		if len(add) > 0 {
			if err := gh.addLabels(ctx, ev.Issue.Number, add); err != nil {
				return nil, err
			}
		}
		res.Added = add
	}
	return res, nil
}

// skip says why an event is not one to answer, or "".
func skip(name string, ev *event) string {
	switch {
	case ev.Issue == nil:
		return "the event is about no issue"
	case len(ev.Issue.PullRequest) > 0 && string(ev.Issue.PullRequest) != "null":
		return "a pull request, not an issue"
	case name == "issues" && (ev.Action == "opened" || ev.Action == "edited"):
		return ""
	case name == "issue_comment" && ev.Action == "created":
		switch {
		case ev.Comment == nil:
			return "the event holds no comment"
		case isOurs(ev.Comment):
			return "the action's own comment"
		case ev.Comment.User.Type == "Bot":
			return "a bot's comment"
		}
		return ""
	}
	return fmt.Sprintf("%s %s events are not answered (issues opened or edited, issue_comment created are)", name, ev.Action)
}

// isOurs: the action's comment is a bot's and starts with the marker.
func isOurs(c *ghComment) bool {
	return c.User.Type == "Bot" && strings.HasPrefix(strings.TrimLeft(c.Body, " \r\n"), Marker)
}

func containsComment(cs []ghComment, id int64) bool {
	for _, c := range cs {
		if c.ID == id {
			return true
		}
	}
	return false
}

// issueDoc is the issue as `gh issue view --json title,body,comments`
// writes it, which coroner reads.
type issueDoc struct {
	Title    string       `json:"title"`
	Body     string       `json:"body"`
	Comments []docComment `json:"comments"`
}

type docComment struct {
	Body string `json:"body"`
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// labelTable resolves the label-table input to a --labels value ("" for
// none): auto picks the built-in table of a repository that has one.
func labelTable(c config) (string, error) {
	t := strings.TrimSpace(c.LabelTable)
	switch t {
	case "", "auto":
		switch strings.ToLower(c.Repo) {
		case "sgl-project/sglang":
			return "sglang", nil
		case "vllm-project/vllm":
			return "vllm", nil
		}
		return "", nil
	case "none":
		return "", nil
	case "sglang", "vllm":
		return t, nil
	}
	p := t
	if !filepath.IsAbs(p) {
		p = filepath.Join(c.Workspace, p)
	}
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("label-table %s: %w (check the repository out first, or use auto, none, sglang or vllm)", t, err)
	}
	return p, nil
}

// coroner runs `coroner analyze` on the issue file in a format and returns
// what it wrote. Findings are no failure here (--fail-on never).
func coroner(ctx context.Context, bin, file, format, table string) ([]byte, error) {
	if bin == "" {
		bin = "coroner"
	}
	args := []string{"analyze", file, "--format", format, "--fail-on", "never", "-q"}
	if table != "" {
		args = append(args, "--labels", table)
	}
	var out, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("coroner analyze --format %s: %v: %s", format, err, strings.TrimSpace(stderr.String()))
	}
	return out.Bytes(), nil
}

// api is the little of GitHub's REST API the action uses.
type api struct {
	base, token, repo string
	http              *http.Client
}

func (a *api) do(ctx context.Context, method, path string, in, out any) (int, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return 0, err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, body)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("X-GitHub-Api-Version", "2022-11-28")
	req.Header.Set("User-Agent", "coroner-action")
	if a.token != "" {
		req.Header.Set("Authorization", "Bearer "+a.token)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := a.http.Do(req)
	if err != nil {
		return 0, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return resp.StatusCode, fmt.Errorf("%s %s: %w", method, path, err)
	}
	if resp.StatusCode == http.StatusNotFound && method == http.MethodGet && out == nil {
		return resp.StatusCode, nil
	}
	if resp.StatusCode/100 != 2 {
		return resp.StatusCode, fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, strings.TrimSpace(string(data[:min(len(data), 300)])))
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return resp.StatusCode, fmt.Errorf("%s %s: %w", method, path, err)
		}
	}
	return resp.StatusCode, nil
}

// comments lists every comment of an issue, oldest first.
func (a *api) comments(ctx context.Context, n int) ([]ghComment, error) {
	var all []ghComment
	for page := 1; page <= 30; page++ {
		var cs []ghComment
		if _, err := a.do(ctx, http.MethodGet, fmt.Sprintf("/repos/%s/issues/%d/comments?per_page=100&page=%d", a.repo, n, page), nil, &cs); err != nil {
			return nil, err
		}
		all = append(all, cs...)
		if len(cs) < 100 {
			break
		}
	}
	return all, nil
}

func (a *api) createComment(ctx context.Context, n int, body string) (int64, error) {
	var c ghComment
	_, err := a.do(ctx, http.MethodPost, fmt.Sprintf("/repos/%s/issues/%d/comments", a.repo, n), map[string]string{"body": body}, &c)
	return c.ID, err
}

func (a *api) editComment(ctx context.Context, id int64, body string) error {
	var c ghComment
	_, err := a.do(ctx, http.MethodPatch, fmt.Sprintf("/repos/%s/issues/comments/%d", a.repo, id), map[string]string{"body": body}, &c)
	return err
}

func (a *api) labelExists(ctx context.Context, name string) (bool, error) {
	code, err := a.do(ctx, http.MethodGet, fmt.Sprintf("/repos/%s/labels/%s", a.repo, url.PathEscape(name)), nil, nil)
	return code/100 == 2, err
}

func (a *api) addLabels(ctx context.Context, n int, labels []string) error {
	var out []ghLabel
	_, err := a.do(ctx, http.MethodPost, fmt.Sprintf("/repos/%s/issues/%d/labels", a.repo, n), map[string][]string{"labels": labels}, &out)
	return err
}
