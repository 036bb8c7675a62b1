package issue

import (
	"regexp"
	"strings"
)

// A block's hint is the file name it would have had in a bundle, taken
// from what the issue says around it. The engines' issue templates name
// their sections: vLLM's "Your current environment" (with the <details>
// "The output of python collect_env.py") and "Describe the bug"; SGLang's
// "Describe the bug", "Reproduction" ("Command/script run and model used")
// and "Environment" ("python3 -m sglang.check_env"). Reporters add their
// own words: "the command I ran:", "full log:", "nvidia-smi output".
//
// The nearest words decide: the sentence just before the block, then the
// <summary> of the <details> it is in, then a fence's info string when it
// names a language (python, bash, yaml), then the heading it is under,
// then an info string that only says text or log. Nothing said: server.log, since what people
// paste into a bug report without a word is mostly what the program
// printed.

// hintRule maps words of the context to a file name.
type hintRule struct {
	re   *regexp.Regexp
	name string
}

// hintRules are tried in order on each piece of context; the first match
// wins. Specific evidence first (nvidia-smi, ps, dmesg), then
// environment, command and log words.
var hintRules = []hintRule{
	{regexp.MustCompile(`(?i)nvidia-smi|gpu (status|state|info)`), "nvidia-smi.txt"},
	{regexp.MustCompile(`(?i)\bps (aux|-e)|process(es)? (list|tree)|\btop\b`), "ps.txt"},
	{regexp.MustCompile(`(?i)dmesg|kernel log|syslog|journalctl|\bxid\b`), "dmesg.txt"},
	{regexp.MustCompile(`(?i)environment|collect_env|collect-env|check_env|check-env|\benv\b|pip (list|freeze)|\bversions\b|system info|hardware`), "env.txt"},
	{regexp.MustCompile(`(?i)command|reproduc|launch|how (to|i|we) (run|start|serve)|(run|ran|start(ed)?|serv(e|ing)) (it |the server |vllm |sglang )?(with|using|by)|script|docker|steps|how you are installing`), "launch.sh"},
	{regexp.MustCompile(`(?i)\blogs?\b|error|traceback|stack ?trace|output|crash|fail|exception|message|hang|stuck|describe the bug|what happened|result|prints?\b|printed|\bdie[sd]?\b|shows|says|(got|get|see) (this|the following)`), "server.log"},
}

// infoHints map a fence's info string (lower case) to a file name.
var infoHints = map[string]string{
	"bash": "launch.sh", "sh": "launch.sh", "shell": "launch.sh", "zsh": "launch.sh", "console": "launch.sh",
	"shellsession": "launch.sh", "cmd": "launch.sh", "powershell": "launch.ps1", "dockerfile": "Dockerfile",
	"python": "snippet.py", "py": "snippet.py", "python3": "snippet.py", "pycon": "snippet.py",
	"yaml": "config.yaml", "yml": "config.yaml", "json": "data.json", "toml": "config.toml", "diff": "change.diff",
	"log": "server.log", "text": "server.log", "txt": "server.log", "plaintext": "server.log",
}

// hint names a block that opens on line at (0-based) from its context:
// the info string of its fence and the summary of its <details>, if any;
// body is the block's text, which overrules the section's title.
func (s *splitter) hint(at int, info, summary string, body []string) string {
	info = strings.ToLower(info)
	for _, c := range []string{s.ctx.near(at), summary} {
		if h := hintFor(c); h != "" {
			return h
		}
	}
	if h, ok := infoHints[info]; ok && !genericInfo[info] {
		return h // a fence that says what it holds: python, bash, yaml ...
	}
	if h := hintFor(s.ctx.heading); h != "" {
		// A section holds more than its title says (the error under
		// "Reproduction"): a block whose lines are a log's is a log.
		if h != "server.log" && looksLog(body) {
			return "server.log"
		}
		return h
	}
	if h, ok := infoHints[info]; ok {
		return h
	}
	return "server.log"
}

// genericInfo are info strings that say only "text": the section a fence
// is in says more.
var genericInfo = map[string]bool{"text": true, "txt": true, "plaintext": true, "log": true}

func hintFor(text string) string {
	if text == "" {
		return ""
	}
	if len(text) > 300 {
		text = text[len(text)-300:] // the end of a long sentence is what leads into the block
	}
	for _, r := range hintRules {
		if r.re.MatchString(text) {
			return r.name
		}
	}
	return ""
}

// near is the prose said just before line at: the last line of prose, if
// at most two blank lines lie between it and line at.
func (c context) near(at int) string {
	if c.prose == "" || at-c.proseAt > 3 {
		return ""
	}
	return c.prose
}

// looksLog reports a block of lines most of whose evidence lines are a
// log's, not a command's or an environment report's.
func looksLog(body []string) bool {
	var n [4]int
	for i, l := range body {
		if i == 64 {
			break
		}
		if c := classify(l); c.strong() {
			n[c]++
		}
	}
	return n[lineLog] > 0 && n[lineLog] > n[lineCmd] && n[lineLog] > n[lineEnv]
}
