// Package issuetest builds GitHub issues out of incident folders (the
// layout of fixtures/incidents: server.log, launch.txt, env.txt, ps.txt,
// dmesg.txt, nvidia-smi.txt), the way reporters write them: the engine's
// issue template, the log in a fence, the environment folded in a
// <details>, the command in a fence, prose around them. The same case is
// built as a markdown file, as the JSON of `gh issue view --json
// title,body,comments` (evidence spread over the body and two comments) and
// as Actions event payloads, so that tests can check that each form gets
// the folder's verdict.
package issuetest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Case is an incident folder's evidence, by file name.
type Case struct {
	Name  string
	Files map[string]string
}

// Evidence are the file names a case folder may hold, in the order an
// issue shows them.
var Evidence = []string{"env.txt", "launch.txt", "server.log", "nvidia-smi.txt", "ps.txt", "dmesg.txt"}

// Load reads a case folder (case.md, the story, is never read).
func Load(dir string) (Case, error) {
	c := Case{Name: filepath.Base(dir), Files: map[string]string{}}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return c, err
	}
	for _, e := range ents {
		if e.IsDir() || e.Name() == "case.md" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return c, err
		}
		c.Files[e.Name()] = string(b)
	}
	return c, nil
}

// Extra lists the case's files an issue built from it leaves out (none
// for the layout of fixtures/incidents).
func (c Case) Extra() []string {
	var out []string
	for name := range c.Files {
		known := false
		for _, e := range Evidence {
			known = known || e == name
		}
		if !known {
			out = append(out, name)
		}
	}
	return out
}

// template is how an engine's bug report is laid out.
type template struct {
	title, env, envSummary, bug, repro string
}

var (
	vllmTemplate = template{
		title: "[Bug]: ", env: "### Your current environment",
		envSummary: "The output of <code>python collect_env.py</code>",
		bug:        "### 🐛 Describe the bug", repro: "",
	}
	sglangTemplate = template{
		title: "[Bug] ", env: "### Environment", envSummary: "python3 -m sglang.check_env",
		bug: "### Describe the bug", repro: "### Reproduction",
	}
	plainTemplate = template{
		title: "", env: "**Environment**", envSummary: "Environment", bug: "**Describe the bug**", repro: "**To reproduce**",
	}
)

func (c Case) template() template {
	switch {
	case strings.HasPrefix(c.Name, "vllm"):
		return vllmTemplate
	case strings.HasPrefix(c.Name, "sglang"):
		return sglangTemplate
	}
	return plainTemplate
}

// Title is the issue's title.
func (c Case) Title() string {
	return c.template().title + c.Name + " fails"
}

// fenced puts text in a fence longer than any backtick run inside it.
func fenced(info, text string) string {
	n, run := 3, 0
	for _, r := range text {
		if r == '`' {
			run++
			n = max(n, run+1)
		} else {
			run = 0
		}
	}
	f := strings.Repeat("`", n)
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return f + info + "\n" + text + f + "\n"
}

// part is one piece of evidence as an issue shows it.
func (c Case) part(name string) string {
	t := c.template()
	text := c.Files[name]
	switch name {
	case "env.txt":
		return t.env + "\n\n<details>\n<summary>" + t.envSummary + "</summary>\n\n" + fenced("text", text) + "\n</details>\n"
	case "launch.txt":
		s := ""
		if t.repro != "" {
			s = t.repro + "\n\n"
		}
		return s + c.pick(launchWords) + fenced(c.pick([]string{"bash", "", "shell", "bash"}), text)
	case "server.log":
		return c.pick(logWords) + fenced(c.pick([]string{"", "text", "", "log"}), text)
	case "nvidia-smi.txt":
		return "Output of `nvidia-smi` at that time:\n\n" + fenced("", text)
	case "ps.txt":
		return "`ps aux` while it is stuck:\n\n" + fenced("", text)
	case "dmesg.txt":
		return "And `dmesg` shows:\n\n" + fenced("", text)
	}
	return ""
}

// The words reporters put before a command and a log, one picked per
// case so that the set of cases exercises them all. An empty one leaves
// the block to its fence's info string, or to the default.
var (
	launchWords = []string{"I start the server with:\n\n", "Command:\n\n", "Steps to reproduce:\n\n",
		"The launch command I use\n\n", "", "Run it like this:\n\n"}
	logWords = []string{"It fails with this log:\n\n", "Error:\n\n", "", "Full traceback below.\n\n",
		"The output:\n\n", "Here is what it prints before it dies\n\n", "Logs\n\n"}
)

// pick chooses one of the variants by the case's name.
func (c Case) pick(v []string) string {
	h := 0
	for _, r := range c.Name {
		h = h*31 + int(r)
	}
	if h < 0 {
		h = -h
	}
	return v[h%len(v)]
}

// Markdown is the whole issue as one markdown document: the template's
// environment section, the bug's description with the command and the log,
// and the snapshots after, with prose around them.
func (c Case) Markdown() string {
	return c.body(Evidence)
}

func (c Case) body(names []string) string {
	t := c.template()
	var b strings.Builder
	wroteBug := false
	for _, name := range names {
		if _, ok := c.Files[name]; !ok {
			continue
		}
		if name != "env.txt" && !wroteBug {
			fmt.Fprintf(&b, "%s\n\nI am running into a problem with %s and would be glad of any help.\n\n", t.bug, c.Name)
			wroteBug = true
		}
		b.WriteString(c.part(name))
		b.WriteString("\n")
	}
	if !wroteBug {
		fmt.Fprintf(&b, "%s\n\nIt does not work.\n", t.bug)
	}
	b.WriteString("Thanks for looking into it!\n")
	return b.String()
}

// Unfenced is Markdown with the log pasted straight into the text, no
// fence around it, as reporters often do.
func (c Case) Unfenced() string {
	u := c
	u.Files = map[string]string{}
	for k, v := range c.Files {
		u.Files[k] = v
	}
	log, ok := u.Files["server.log"]
	if !ok {
		return c.Markdown()
	}
	delete(u.Files, "server.log")
	md := u.Markdown()
	i := strings.LastIndex(md, "Thanks for looking into it!")
	return md[:i] + "It fails with this log:\n\n" + log + "\n" + md[i:]
}

// split divides the evidence between the body (environment and command)
// and two comments (the log, then the snapshots).
func (c Case) split() (body string, comments []string) {
	body = c.body([]string{"env.txt", "launch.txt"})
	if _, ok := c.Files["server.log"]; ok {
		comments = append(comments, "Here is the full log, sorry for leaving it out:\n\n"+fenced("", c.Files["server.log"]))
	}
	var more []string
	for _, name := range []string{"nvidia-smi.txt", "ps.txt", "dmesg.txt"} {
		if _, ok := c.Files[name]; ok {
			more = append(more, c.part(name))
		}
	}
	if len(more) > 0 {
		comments = append(comments, "More from the machine:\n\n"+strings.Join(more, "\n"))
	}
	return body, comments
}

type ghAuthor struct {
	Login string `json:"login"`
}

type ghComment struct {
	Author            ghAuthor `json:"author"`
	AuthorAssociation string   `json:"authorAssociation"`
	Body              string   `json:"body"`
	CreatedAt         string   `json:"createdAt"`
}

// GHJSON is `gh issue view N --json title,body,comments` of the issue,
// with the evidence spread over the body and its comments.
func (c Case) GHJSON() []byte {
	body, comments := c.split()
	out := struct {
		Body     string      `json:"body"`
		Comments []ghComment `json:"comments"`
		Title    string      `json:"title"`
	}{Body: crlf(body), Title: c.Title(), Comments: []ghComment{}}
	for i, cm := range comments {
		out.Comments = append(out.Comments, ghComment{Author: ghAuthor{Login: "reporter"}, AuthorAssociation: "NONE",
			Body: crlf(cm), CreatedAt: fmt.Sprintf("2025-01-0%dT10:00:00Z", i+2)})
	}
	b, _ := json.MarshalIndent(out, "", "  ")
	return append(b, '\n')
}

// crlf is what GitHub stores of text typed in its web form.
func crlf(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }

// Event is an Actions event payload. "opened" is an issues event whose
// body holds all the evidence; "created" is an issue_comment event whose
// body holds the environment and command and whose new comment holds the
// log and snapshots.
func (c Case) Event(action string) []byte {
	user := map[string]any{"login": "reporter", "type": "User"}
	repo := map[string]any{"full_name": "example/engine", "name": "engine", "owner": map[string]any{"login": "example"}}
	issue := map[string]any{"number": 1, "title": c.Title(), "user": user, "state": "open", "comments": 0,
		"labels": []any{}, "html_url": "https://github.com/example/engine/issues/1"}
	ev := map[string]any{"action": action, "repository": repo, "sender": user}
	switch action {
	case "created":
		body, comments := c.split()
		issue["body"] = crlf(body)
		issue["comments"] = 1
		ev["comment"] = map[string]any{"id": 11, "body": crlf(strings.Join(comments, "\n\n")), "user": user}
	default:
		issue["body"] = crlf(c.Markdown())
	}
	ev["issue"] = issue
	b, _ := json.MarshalIndent(ev, "", "  ")
	return append(b, '\n')
}
