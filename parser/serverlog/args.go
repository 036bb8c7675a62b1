package serverlog

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/coroner-dev/coroner/internal/redact"
	"github.com/coroner-dev/coroner/parser/facts"
)

// redacted replaces the value of a secret setting.
const redacted = "<set>"

// pyPairs walks the top-level items of a Python repr: "Name(k=v, ...)",
// "{'k': v, ...}", or a bare "k=v, k2=v2" list, and calls fn with each key
// and the value's text. sep is '=' or ':'. Quotes and brackets are tracked so
// that values holding ", " stay whole.
func pyPairs(b []byte, sep byte, fn func(key, val []byte)) {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '{' {
		b = b[1:]
		sep = ':'
	} else if k := bytes.IndexByte(b, '('); k > 0 && k < 64 && isIdent(b[:k]) {
		b = b[k+1:]
	}
	// Drop the closing bracket of the whole repr, if the line was not cut.
	if n := len(b); n > 0 && (b[n-1] == ')' || b[n-1] == '}') {
		b = b[:n-1]
	}
	for len(b) > 0 {
		end := itemEnd(b)
		item := b[:end]
		if end < len(b) {
			b = b[end+1:]
			for len(b) > 0 && b[0] == ' ' {
				b = b[1:]
			}
		} else {
			b = nil
		}
		var k int
		if sep == ':' {
			k = quotedKeyEnd(item)
		} else {
			k = bytes.IndexByte(item, '=')
		}
		if k <= 0 {
			continue
		}
		key := bytes.TrimSpace(item[:k])
		if sep == ':' {
			key = unquote(key)
		}
		val := bytes.TrimSpace(item[k+1:])
		if len(key) == 0 || len(key) > 128 {
			continue
		}
		fn(key, val)
	}
}

func isIdent(b []byte) bool {
	for _, c := range b {
		if !(c == '_' || c == '.' || isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'z')) {
			return false
		}
	}
	return len(b) > 0
}

// itemEnd returns the index of the ',' that ends the first item, or len(b).
func itemEnd(b []byte) int {
	depth := 0
	var quote byte
	for i := 0; i < len(b); i++ {
		c := b[i]
		if quote != 0 {
			switch c {
			case '\\':
				i++
			case quote:
				quote = 0
			}
			continue
		}
		switch c {
		case '\'', '"':
			quote = c
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			if depth > 0 {
				depth--
			}
		case ',':
			if depth == 0 {
				return i
			}
		}
	}
	return len(b)
}

// quotedKeyEnd returns the index of the ':' after a dict key.
func quotedKeyEnd(item []byte) int {
	if len(item) > 0 && (item[0] == '\'' || item[0] == '"') {
		q := item[0]
		for i := 1; i < len(item); i++ {
			if item[i] == '\\' {
				i++
				continue
			}
			if item[i] == q {
				if j := bytes.IndexByte(item[i:], ':'); j >= 0 {
					return i + j
				}
				return -1
			}
		}
		return -1
	}
	return bytes.IndexByte(item, ':')
}

// unquote removes Python string quotes and the common escapes.
func unquote(b []byte) []byte {
	if len(b) >= 2 && (b[0] == '\'' || b[0] == '"') && b[len(b)-1] == b[0] {
		in := b[1 : len(b)-1]
		if bytes.IndexByte(in, '\\') < 0 {
			return in
		}
		out := make([]byte, 0, len(in))
		for i := 0; i < len(in); i++ {
			if in[i] == '\\' && i+1 < len(in) {
				i++
				switch in[i] {
				case 'n':
					out = append(out, '\n')
				case 't':
					out = append(out, '\t')
				default:
					out = append(out, in[i])
				}
				continue
			}
			out = append(out, in[i])
		}
		return out
	}
	return b
}

// pyValue converts a Python literal for Fields: strings unquoted, numbers as
// float64, True/False as bool. None is absent (ok false); lists, dicts and
// object reprs stay text.
func pyValue(v []byte) (any, bool) {
	switch {
	case len(v) == 0:
		return "", true
	case bytes.Equal(v, []byte("None")):
		return nil, false
	case bytes.Equal(v, []byte("True")):
		return true, true
	case bytes.Equal(v, []byte("False")):
		return false, true
	case v[0] == '\'' || v[0] == '"':
		return string(unquote(v)), true
	}
	if x, n := parseNum(v); n == len(v) && bytes.IndexByte(v, ',') < 0 {
		return x, true
	}
	return string(v), true
}

// settingText is a value as the setting records it: strings unquoted, the
// rest as printed.
func settingText(v []byte) string {
	if len(v) > 0 && (v[0] == '\'' || v[0] == '"') {
		return string(unquote(v))
	}
	return string(v)
}

// secret reports a setting whose value must not be kept: the policy is
// internal/redact's, the one a bundle's redaction follows (api_key,
// admin_api_key, ssl_keyfile_password, hf_token; a cache_key only when its
// value looks like a key). "tokenizer_path" and "max_total_tokens" are not
// secrets.
func secret(key, value string) bool {
	return redact.Conceal(key, value)
}

// argsDump records a settings dump (SGLang's server_args=ServerArgs(...),
// vLLM's non-default args {...} or args: Namespace(...)) as one event with
// every key and one setting per key. Secret values become "<set>".
func (p *parser) argsDump(ps *procState, lvl facts.Level, line, dump []byte, from string, typ facts.EventType, all bool) *facts.LogEvent {
	f := &facts.Settings{Values: map[string]any{}}
	src := facts.Source{File: p.in.Path, Line: p.lineNo}
	n := 0
	sep := byte('=')
	if len(dump) > 0 && dump[0] == '{' {
		sep = ':'
	}
	pyPairs(dump, sep, func(key, val []byte) {
		if n >= maxSettings {
			return
		}
		n++
		k := p.text(key)
		if _, dup := f.Values[k]; dup {
			return
		}
		text := settingText(val)
		if p.bad {
			text = strings.ToValidUTF8(text, "\uFFFD")
		}
		if text != "True" && text != "False" && (redact.IsSecretName(k) || secret(k, text)) {
			if text == "None" || text == "" {
				f.Values[k] = false
			} else {
				f.Values[k] = redacted
				text = redacted
			}
			p.out.Settings = append(p.out.Settings, &facts.Setting{Src: src, Key: k, Value: text, From: from})
			return
		}
		if v, ok := pyValue(val); ok {
			if s, isStr := v.(string); isStr && p.bad {
				v = strings.ToValidUTF8(s, "\uFFFD")
			}
			f.Values[k] = v
		}
		p.out.Settings = append(p.out.Settings, &facts.Setting{Src: src, Key: k, Value: text, From: from})
	})
	if all {
		f.AllArgs = true
	}
	// The raw dump holds secrets in clear text: the message only names it.
	name := line[:len(line)-len(dump)]
	msg := make([]byte, 0, len(name)+32)
	msg = append(msg, name...)
	msg = append(msg, "<"...)
	msg = strconv.AppendInt(msg, int64(n), 10)
	msg = append(msg, " settings>"...)
	return p.emit(ps, typ, lvl, msg, f)
}

// cmdline records a launch command pasted into the log ("python3.12 -m
// sglang.launch_server --model ...", "Executing command: vllm serve ...").
func (p *parser) cmdline(ps *procState, b []byte) *facts.LogEvent {
	if p.lineNo > 50 || len(b) > 8192 {
		return nil
	}
	var rest []byte
	switch {
	case contains(b, "sglang.launch_server") || contains(b, "sglang serve"):
		k := bytes.Index(b, []byte("sglang.launch_server"))
		if k >= 0 {
			rest = b[k+len("sglang.launch_server"):]
		} else {
			rest = b[bytes.Index(b, []byte("sglang serve"))+len("sglang serve"):]
		}
	case contains(b, "vllm serve "):
		rest = b[bytes.Index(b, []byte("vllm serve "))+len("vllm serve"):]
	case contains(b, "vllm.entrypoints.openai.api_server"):
		rest = b[bytes.Index(b, []byte("vllm.entrypoints.openai.api_server"))+len("vllm.entrypoints.openai.api_server"):]
	default:
		return nil
	}
	toks := shellFields(rest)
	f := &facts.Settings{Values: map[string]any{}}
	src := facts.Source{File: p.in.Path, Line: p.lineNo}
	add := func(k, v string) {
		if v != "true" && secret(k, v) {
			v = redacted
		}
		k, v = strings.ToValidUTF8(k, "\uFFFD"), strings.ToValidUTF8(v, "\uFFFD")
		if len(p.out.Settings) < 1<<20 {
			p.out.Settings = append(p.out.Settings, &facts.Setting{Src: src, Key: k, Value: v, From: "cmdline"})
		}
		f.Values[k] = v
	}
	for i := 0; i < len(toks) && i < maxSettings; i++ {
		t := toks[i]
		if !strings.HasPrefix(t, "--") {
			if i == 0 {
				add("model", t) // vllm serve MODEL
			}
			continue
		}
		name := strings.ReplaceAll(strings.TrimPrefix(t, "--"), "-", "_")
		if eq := strings.IndexByte(name, '='); eq > 0 {
			add(name[:eq], t[2+eq+1:])
			continue
		}
		if i+1 < len(toks) && !strings.HasPrefix(toks[i+1], "--") {
			add(name, toks[i+1])
			i++
		} else {
			add(name, "true")
		}
	}
	if len(f.Values) == 0 {
		return nil
	}
	// The command may hold a secret: keep only the program part.
	msg := b
	if k := bytes.Index(b, []byte(" --")); k > 0 {
		msg = b[:k]
	}
	return p.emit(ps, facts.EventCmdline, facts.LevelNone, msg, f)
}

// shellFields splits a command line on spaces, honouring simple quotes.
func shellFields(b []byte) []string {
	var out []string
	var cur []byte
	var quote byte
	in := false
	for _, c := range b {
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				cur = append(cur, c)
			}
		case c == '\'' || c == '"':
			quote = c
			in = true
		case c == ' ' || c == '\t':
			if in {
				out = append(out, string(cur))
				cur = cur[:0]
				in = false
			}
		default:
			cur = append(cur, c)
			in = true
		}
	}
	if in {
		out = append(out, string(cur))
	}
	return out
}
