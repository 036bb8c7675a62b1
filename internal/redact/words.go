package redact

import "bytes"

// The secret-word policy: which names of settings, variables, flags,
// headers and query parameters hold a secret. It is the one list of the
// project: the parsers and the run comparison ask it too (SecretValue), so
// that what the analyzer hides in a report and what a bundle masks agree.
//
// A name is split into words (at '_', '-', '.', spaces and lower-to-upper
// case changes: admin_api_key, sslKeyfilePassword, X-API-Key) and judged by
// its last word, so that a name ENDING in a secret word is one
// (wandb_api_key, db_password, MYSQL_PWD) and a name merely containing one
// is not (tokenizer_path, max_total_tokens, password_file).

// strength says how sure a name is to hold a secret.
type strength int

const (
	notSecret strength = iota
	// weak names (key, tokens, signature) hold a secret when the value
	// looks like one: long, opaque, of high entropy. cache_key: "ts" and
	// max_tokens: 4096 are settings.
	weak
	// strongText names hold a secret unless the value is a placeholder, a
	// number or a boolean: hf_token, auth, DB_PASS.
	strongText
	// strong names hold a secret whatever the value but a placeholder:
	// password, secret, api_key, cookie, authorization.
	strong
)

// strongLast are last words that make a name a secret, and suffixes of a
// last word that do (dbpassword, clientsecret, xapikey).
var (
	strongLast = map[string]bool{
		"password": true, "passwords": true, "passwd": true, "passphrase": true, "secret": true, "secrets": true,
		"credential": true, "credentials": true, "cookie": true, "cookies": true, "authorization": true,
		"apikey": true, "apikeys": true, "privatekey": true, "accesskey": true, "secretkey": true,
	}
	strongSuffix = []string{"password", "passwd", "passphrase", "secret", "apikey", "credentials", "accesskey", "secretkey", "privatekey"}
	// keyPrefixes make a name ending in "key" strong: api_key,
	// access_key, AccountKey, subscription-key.
	keyPrefixes = map[string]bool{
		"api": true, "access": true, "secret": true, "private": true, "account": true, "master": true, "signing": true,
		"encryption": true, "subscription": true, "license": true, "service": true, "admin": true, "auth": true,
		"session": true, "hmac": true, "client": true, "app": true, "ingest": true, "ingestion": true, "deploy": true,
		"write": true, "shared": true, "sharedaccess": true, "storage": true, "webhook": true, "bot": true,
		"login": true, "root": true, "user": true, "primary": true, "secondary": true, "partner": true,
		"consumer": true, "developer": true, "dev": true, "personal": true, "sas": true, "jwt": true, "cipher": true,
		"crypt": true, "crypto": true, "decryption": true, "wandb": true, "openai": true, "anthropic": true,
		"hf": true, "huggingface": true, "gemini": true, "google": true, "groq": true, "mistral": true,
		"cohere": true, "together": true, "replicate": true, "azure": true, "aws": true, "stripe": true,
		"sendgrid": true, "datadog": true, "dd": true, "sentry": true, "ngc": true, "nvidia": true, "modal": true,
	}
	// tokenNotSecret are words before "token" that make it a tokenizer's or
	// a counter's setting: eos_token, max_new_token, image_token.
	tokenNotSecret = map[string]bool{
		"bos": true, "eos": true, "pad": true, "unk": true, "sep": true, "cls": true, "mask": true, "special": true,
		"image": true, "video": true, "audio": true, "vision": true, "media": true, "start": true, "end": true,
		"stop": true, "additional": true, "added": true, "max": true, "min": true, "num": true, "total": true,
		"new": true, "prefill": true, "decode": true, "input": true, "output": true, "prompt": true,
		"completion": true, "cached": true, "generated": true, "first": true, "last": true, "next": true,
		"per": true, "context": true, "draft": true, "placeholder": true, "default": true, "sink": true,
		"think": true, "thinking": true, "reasoning": true, "tool": true, "eot": true, "eom": true, "im": true,
		"speculative": true, "spec": true, "extra": true, "dummy": true, "boi": true, "eoi": true, "vocab": true,
		"chat": true, "assistant": true, "system": true, "role": true, "box": true, "ref": true, "object": true,
		"point": true, "quad": true, "frame": true, "patch": true, "sentinel": true, "fim": true, "middle": true,
		"prefix": true, "suffix": true, "turn": true, "call": true, "response": true, "answer": true, "eod": true,
		"boundary": true, "word": true, "piece": true, "byte": true, "char": true, "unused": true, "ignore": true,
	}
	// passNotSecret are words before "pass" that make it a count or a
	// stage: first_pass, num_pass.
	passNotSecret = map[string]bool{
		"first": true, "second": true, "last": true, "single": true, "multi": true, "one": true, "two": true,
		"num": true, "max": true, "min": true, "skip": true, "by": true, "fast": true, "slow": true,
		"forward": true, "backward": true, "extra": true, "final": true, "per": true, "each": true,
	}
	// queryWords are parameter names that hold a credential in a URL's
	// query (?sig=, ?code=) though they would not elsewhere.
	queryWords = map[string]bool{
		"sig": true, "signature": true, "code": true, "key": true, "keys": true, "token": true, "tokens": true,
		"auth": true, "pass": true, "pwd": true, "secret": true, "session": true, "sid": true, "sessionid": true,
		"ticket": true, "otp": true, "jwt": true,
	}
)

// lastWords finds the last two words of a name, lower-cased into the
// buffers: words break at any byte that is not a letter or digit, and
// where a lower-case letter or a digit is followed by an upper-case one
// (apiKey), or a run of capitals by a capitalized word (XApiKey: x, api,
// key; HFToken: hf, token). A word longer than a buffer keeps its end,
// which is what the policy compares. n is the number of words.
func lastWords(name []byte, prevBuf, lastBuf *[32]byte) (prev, last []byte, n int) {
	ps, pe, ls, le := -1, -1, -1, -1
	start := -1
	flush := func(end int) {
		if start >= 0 && end > start {
			ps, pe, ls, le = ls, le, start, end
			n++
		}
		start = -1
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !isLower(c) && !isUpper(c) && !isDigit(c) {
			flush(i)
			continue
		}
		if start < 0 {
			start = i
			continue
		}
		p := name[i-1]
		if isUpper(c) && (isLower(p) || isDigit(p)) || isUpper(p) && isUpper(c) && i+1 < len(name) && isLower(name[i+1]) {
			flush(i)
			start = i
		}
	}
	flush(len(name))
	lower := func(buf *[32]byte, s, e int) []byte {
		if s < 0 {
			return nil
		}
		s = max(s, e-len(buf))
		out := buf[:0]
		for _, c := range name[s:e] {
			if isUpper(c) {
				c += 'a' - 'A'
			}
			out = append(out, c)
		}
		return out
	}
	return lower(prevBuf, ps, pe), lower(lastBuf, ls, le), n
}

func isLower(c byte) bool { return 'a' <= c && c <= 'z' }
func isUpper(c byte) bool { return 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// classify judges a name; inQuery is true for a URL's query parameters,
// where weak and query-only words are as sure as strong ones.
func classify(name []byte, inQuery bool) strength {
	var pb, lb [32]byte
	prev, last, n := lastWords(name, &pb, &lb)
	return judge(name, prev, last, n, inQuery)
}

// judge is classify on a name's last two words, lower-cased, and its
// number of words.
func judge(name, prev, last []byte, n int, inQuery bool) strength {
	if n == 0 {
		return notSecret
	}
	// Indexing a map with string(b) does not allocate.
	envStyle := n > 1 && isEnvName(name)
	st := notSecret
	switch {
	case strongLast[string(last)]:
		st = strong
	case string(last) == "key" || string(last) == "keys":
		switch {
		case keyPrefixes[string(prev)] || bytes.HasSuffix(prev, []byte("api")):
			st = strong
		case envStyle:
			st = strongText
		default:
			st = weak
		}
	case string(last) == "token":
		if tokenNotSecret[string(prev)] {
			return notSecret
		}
		st = strongText
	case string(last) == "tokens":
		if tokenNotSecret[string(prev)] {
			return notSecret
		}
		st = weak
	case string(last) == "pwd":
		// PWD alone is the shell's working directory.
		if n > 1 {
			st = strong
		}
	case bytes.HasSuffix(last, []byte("pwd")) && string(last) != "oldpwd":
		st = strong
	case string(last) == "pass":
		if n > 1 && !passNotSecret[string(prev)] {
			st = strongText
		}
	case string(last) == "auth" || string(last) == "basicauth" || string(last) == "httpauth" || string(last) == "proxyauth":
		st = strongText
	case string(last) == "signature" || string(last) == "jwt":
		st = weak
	case hasAnySuffix(last, strongSuffix):
		st = strong
	case len(last) > 5 && bytes.HasSuffix(last, []byte("token")) && !tokenNotSecret[string(last[:len(last)-5])]:
		// authtoken, hftoken, accesstoken: one word.
		st = strongText
	}
	if inQuery {
		if st == notSecret && queryWords[string(last)] {
			st = strongText
		}
		if st == weak {
			st = strongText
		}
	}
	return st
}

// isEnvName reports an environment variable's shape: capitals, digits
// and underscores. Variables named *_KEY and *_TOKEN hold secrets far more
// often than settings do.
func isEnvName(s []byte) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isUpper(c) && !isDigit(c) && c != '_' {
			return false
		}
	}
	return true
}

func hasAnySuffix(s []byte, suffixes []string) bool {
	for _, x := range suffixes {
		if bytes.HasSuffix(s, []byte(x)) {
			return true
		}
	}
	return false
}

// IsSecretName reports a name (a variable, flag, setting or header, any
// case and separator) that holds a secret whatever its value looks like:
// api_key, HF_TOKEN, --ssl-keyfile-password, X-API-Key, MYSQL_PWD. A name
// that only may hold one (cache_key, max_num_batched_tokens) is not:
// SecretValue decides for its value.
func IsSecretName(name string) bool {
	return classify([]byte(name), false) >= strongText
}

// SecretValue reports whether value, found under name, is a secret, as a
// bundle's redaction decides: under a sure name (password, api_key) any
// value but a placeholder (None, "", $VAR, <token>) and, for names of
// tokens and keys, a number; under a name that may hold one (cache_key,
// max_tokens) only a value that looks like a secret by its shape: a known
// token's prefix, or long, opaque and of high entropy.
func SecretValue(name, value string) bool {
	return hides(classify([]byte(name), false), []byte(value))
}

// Conceal reports whether a report may not show value under name: any
// value but the empty one under a sure name (a placeholder too: a report
// has no need of it), and a secret-looking one under a name that may hold
// one. The parsers and the run comparison ask it, so that what a report
// hides and what a bundle masks follow one policy.
func Conceal(name, value string) bool {
	return value != "" && (IsSecretName(name) || SecretValue(name, value))
}

// hides applies a name's strength to its value.
func hides(st strength, v []byte) bool {
	if st == notSecret || isPlaceholder(v) {
		return false
	}
	switch st {
	case strong:
		return true
	case strongText:
		return !isNumberOrBool(v)
	}
	if _, ok, _ := tokenAt(v, 0, 0); ok {
		return true
	}
	return isOpaque(v)
}
