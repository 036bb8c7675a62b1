// Package envinfo reads what a bundle says about the software around the
// server: `python -m torch.utils.collect_env` and `vllm collect-env` (old
// and new layouts), `python -m sglang.check_env`, environment dumps (`env`,
// `export -p`, `declare -x`, .env files), launch commands (a shell line or
// script, `docker run`), and system descriptions (uname, os-release,
// lsb_release, tool version lines).
//
// Secret values never reach the facts: values of variables and flags
// whose names end in a secret word (internal/redact's policy, the one a
// bundle's redaction follows), credentials inside URLs and Hugging Face or
// OpenAI style tokens are replaced by "<redacted>".
package envinfo

import (
	"bytes"
	"regexp"
	"strings"

	"github.com/coroner-dev/coroner/internal/redact"
	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/serverlog"
	"github.com/coroner-dev/coroner/parser/textio"
)

// Redacted replaces a secret value.
const Redacted = "<redacted>"

// maxValue bounds a kept value (an env var, a flag).
const maxValue = 4096

// Sniff returns the best of the five kinds this package reads.
func Sniff(name string, head []byte) (facts.Kind, int) {
	n := strings.ToLower(name)
	raw := headLines(head, 400)
	// Reports pasted from a container's log carry its prefixes; a shell
	// script is read as written (a pipe is no compose prefix there).
	lines := make([]string, len(raw))
	for i, l := range raw {
		lines[i] = string(serverlog.Unwrap([]byte(l)))
	}
	best, bestScore := facts.Kind(""), 0
	try := func(k facts.Kind, s int) {
		if s > bestScore {
			best, bestScore = k, s
		}
	}
	try(facts.KindCollectEnv, sniffCollectEnv(head, n))
	try(facts.KindCheckEnv, sniffCheckEnv(lines, n))
	try(facts.KindSystem, sniffSystem(lines, n))
	try(facts.KindCmdline, sniffCmdline(raw, n))
	try(facts.KindEnv, sniffEnv(lines, n))
	try(facts.KindPipList, sniffPipList(lines, n))
	return best, bestScore
}

// Parse reads one of the six kinds, as sniffed.
func Parse(in *textio.Input, kind facts.Kind, out *facts.Facts) {
	switch kind {
	case facts.KindCollectEnv:
		parseCollectEnv(in, out)
	case facts.KindCheckEnv:
		parseCheckEnv(in, out)
	case facts.KindEnv:
		parseEnv(in, out)
	case facts.KindCmdline:
		parseCmdline(in, out)
	case facts.KindSystem:
		parseSystem(in, out)
	case facts.KindPipList:
		parsePipList(in, out)
	default:
		in.IssueAt(0, facts.IssueUnrecognized, "the envinfo parser does not read kind %q", kind)
	}
}

// headLines splits the first lines of head; a last line cut by the head
// limit is dropped unless it is the only one.
func headLines(head []byte, max int) []string {
	var out []string
	for len(head) > 0 && len(out) < max {
		i := bytes.IndexByte(head, '\n')
		if i < 0 {
			if len(out) == 0 || len(head) < 8<<10 {
				out = append(out, strings.TrimRight(string(head), "\r"))
			}
			break
		}
		out = append(out, strings.TrimRight(string(head[:i]), "\r"))
		head = head[i+1:]
	}
	return out
}

// IsSecretName reports a name (env var or flag, any case) that holds a
// secret. The policy is internal/redact's, the one a bundle's redaction
// follows: a name ending in a secret word (HF_TOKEN, APIKEY, --api-key,
// MYSQL_PWD), not one merely holding it (tokenizer_path, max_total_tokens,
// num_draft_tokens are settings, not secrets).
func IsSecretName(name string) bool {
	return redact.IsSecretName(name)
}

var (
	urlCredRe = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://)[^/@\s:]+:[^/@\s]+@`)
	queryRe   = regexp.MustCompile(`([?&][^=&\s]*=)([^&\s#]+)`)
)

// Redact returns value as it may be kept for a variable or flag named name.
func Redact(name, value string) string {
	if redact.Conceal(name, value) {
		return Redacted
	}
	return RedactValue(value)
}

// RedactValue removes credentials embedded in a value whatever its name.
func RedactValue(v string) string {
	if strings.Contains(v, "://") && strings.Contains(v, "@") {
		v = urlCredRe.ReplaceAllString(v, "${1}"+Redacted+"@")
	}
	if strings.IndexByte(v, '?') >= 0 && strings.IndexByte(v, '=') >= 0 {
		// A query parameter is hidden by internal/redact's policy, the
		// one a bundle's redaction follows (?api_key=, ?sig=, ?code=).
		v = queryRe.ReplaceAllStringFunc(v, func(m string) string {
			eq := strings.IndexByte(m, '=')
			if redact.ConcealQuery(m[1:eq], m[eq+1:]) {
				return m[:eq+1] + Redacted
			}
			return m
		})
	}
	// Tokens by their shape: internal/redact's table, the one a bundle's
	// redaction masks (Hugging Face, OpenAI, GitHub, AWS, JWT ...).
	v = redact.ReplaceTokens(v, Redacted)
	return cut(v)
}

// cut bounds a kept value.
func cut(v string) string {
	if len(v) <= maxValue {
		return v
	}
	k := maxValue
	for k > 0 && v[k]&0xC0 == 0x80 {
		k--
	}
	return v[:k]
}

// text copies a line for keeping, repairing invalid UTF-8.
// unwrapped is the current line without a container's or a collector's
// prefix (serverlog.Unwrap), as text.
func unwrapped(in *textio.Input) string {
	return text(in, serverlog.Unwrap(in.Bytes()))
}

func text(in *textio.Input, b []byte) string {
	if !in.CheckUTF8() {
		return strings.ToValidUTF8(string(b), "\uFFFD")
	}
	return string(b)
}

var ansiRe = regexp.MustCompile(`\x1b\[[0-9;]*[A-Za-z]`)

func stripANSI(s string) string {
	if strings.IndexByte(s, 0x1b) < 0 {
		return s
	}
	return ansiRe.ReplaceAllString(s, "")
}

// startsAssignment reports NAME= at the start of a line.
func startsAssignment(l string) bool {
	i := strings.IndexByte(l, '=')
	return i > 0 && isName(l[:i])
}

// isMissing reports the words the reports print for an absent value.
func isMissing(v string) bool {
	switch strings.TrimSpace(v) {
	case "", "N/A", "Could not collect", "None", "Not Available", "Module Not Found", "No CUDA", "Not Set":
		return true
	}
	return false
}

// setter fills an EnvReport's Versions and Where, letting explicit report
// lines win over values read from package lists.
type setter struct {
	r      *facts.EnvReport
	strong map[string]bool
}

func newReport(src facts.Source, kind facts.Kind) *setter {
	return &setter{r: &facts.EnvReport{Src: src, Format: kind, Versions: map[string]string{}, Where: map[string]facts.Source{}},
		strong: map[string]bool{}}
}

// set records key=v from src; a weak value never replaces a strong one.
func (s *setter) set(key, v string, src facts.Source, strong bool) {
	v = strings.TrimSpace(v)
	if isMissing(v) {
		return
	}
	if _, ok := s.r.Versions[key]; ok && (s.strong[key] || !strong) {
		return
	}
	s.r.Versions[key] = cut(v)
	s.r.Where[key] = src
	s.strong[key] = strong
}
