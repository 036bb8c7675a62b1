package envinfo

import (
	"strings"

	"github.com/coroner-dev/coroner/internal/envpolicy"
	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/textio"
)

// An environment dump is `env` / `printenv` (NAME=value, raw), `export -p`
// (bash: declare -x NAME="value"; dash: export NAME='value'), or a .env
// file. A value may span lines (a BASH_FUNC_ or a multi-line value): the
// lines that follow an assignment and are not one belong to it.

// osReleaseKeys mark /etc/os-release, which has the same syntax.
var osReleaseKeys = []string{"PRETTY_NAME=", "VERSION_ID=", "ID_LIKE=", "VERSION_CODENAME=", "HOME_URL="}

// assignment splits "export NAME=value", "declare -x NAME=\"value\"" and
// "NAME=value"; bare is set for "declare -x NAME" (declared, no value).
func assignment(l string) (name, val string, ok, bare bool) {
	for _, p := range []string{"export ", "declare -x ", "declare -rx ", "typeset -x "} {
		if strings.HasPrefix(l, p) {
			l = strings.TrimLeft(l[len(p):], " ")
			if !strings.Contains(l, "=") && isName(l) {
				return l, "", true, true
			}
			break
		}
	}
	if !startsAssignment(l) {
		// Bash exports functions as BASH_FUNC_name%%=() { ... }.
		if strings.HasPrefix(l, "BASH_FUNC_") {
			if i := strings.Index(l, "%%="); i > 0 {
				return l[:i+2], l[i+3:], true, false
			}
		}
		return "", "", false, false
	}
	name, val, _ = strings.Cut(l, "=")
	return name, val, true, false
}

func isName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// unquote removes the shell quotes export -p and .env files put around a value.
func unquote(v string) string {
	if len(v) < 2 {
		return v
	}
	switch {
	case v[0] == '"' && v[len(v)-1] == '"':
		inner := v[1 : len(v)-1]
		if !strings.Contains(inner, `\`) {
			return inner
		}
		var b strings.Builder
		for i := 0; i < len(inner); i++ {
			if inner[i] == '\\' && i+1 < len(inner) && strings.IndexByte("\"\\$`", inner[i+1]) >= 0 {
				i++
			}
			b.WriteByte(inner[i])
		}
		return b.String()
	case v[0] == '\'' && v[len(v)-1] == '\'':
		return strings.ReplaceAll(v[1:len(v)-1], `'\''`, `'`)
	}
	return v
}

func sniffEnv(lines []string, name string) int {
	n, match, typical, osr := 0, 0, 0, 0
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		n++
		if _, _, ok, _ := assignment(t); ok {
			match++
			// The names that make a dump look like a process's
			// environment are envpolicy's (Sniff).
			if envpolicy.SetsSniffed(strings.TrimPrefix(strings.TrimPrefix(t, "export "), "declare -x ")) {
				typical++
			}
			for _, p := range osReleaseKeys {
				if strings.HasPrefix(t, p) {
					osr++
				}
			}
		}
	}
	nameHint := name == "env" || strings.HasPrefix(name, "env.") || strings.HasPrefix(name, "env-") || strings.HasPrefix(name, "env_") ||
		strings.Contains(name, "environ") || strings.HasSuffix(name, ".env") || strings.Contains(name, "printenv")
	score := 0
	switch {
	case osr >= 2 && typical == 0:
		return 0 // /etc/os-release: a system description
	case match >= 3 && match*10 >= n*9:
		score = 70
		if typical > 0 {
			score = 80
		}
	case match >= 3 && match*10 >= n*6 && typical > 0:
		score = 50
	}
	if nameHint {
		if score == 0 {
			return 20
		}
		score += 5
	}
	return score
}

func parseEnv(in *textio.Input, out *facts.Facts) {
	var last *facts.EnvVar
	var vars varCap
	defer vars.report(in)
	for in.Scan() {
		raw := in.Bytes()
		// /proc/PID/environ separates entries with NUL bytes.
		parts := []string{text(in, raw)}
		if strings.IndexByte(parts[0], 0) >= 0 {
			parts = strings.Split(parts[0], "\x00")
		}
		for _, l := range parts {
			t := strings.TrimSpace(l)
			if t == "" || strings.HasPrefix(t, "#") {
				continue
			}
			name, val, ok, bare := assignment(t)
			if !ok {
				if last != nil && last.Value != Redacted && len(last.Value) < maxValue {
					last.Value = cut(last.Value + "\n" + RedactValue(l))
					continue
				}
				in.Issuef(facts.IssueMalformed, "not an environment assignment (NAME=value)")
				continue
			}
			if bare {
				last = nil
				continue
			}
			if !vars.keep(name) {
				last = nil
				continue
			}
			last = &facts.EnvVar{Src: in.Src(), Name: name, Value: Redact(name, unquote(val)), From: "env"}
			out.Env = append(out.Env, last)
		}
	}
}
