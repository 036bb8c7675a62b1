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

// strongSuffix are endings of a last word that make a name a secret
// (dbpassword, clientsecret, xapikey); the whole words are in judge.
var (
	strongSuffix = []string{"password", "passwd", "passphrase", "secret", "apikey", "credentials", "accesskey", "secretkey", "privatekey"}
)

// keyPrefix reports a word before "key" that makes the name sure to hold
// a secret: api_key, access_key, AccountKey, subscription-key.
func keyPrefix(w []byte) bool {
	switch string(w) {
	case
		"api", "access", "secret", "private", "account", "master", "signing", "encryption", "subscription",
		"license", "service", "admin", "auth", "session", "hmac", "client", "app", "ingest", "ingestion", "deploy",
		"write", "shared", "sharedaccess", "storage", "webhook", "bot", "login", "root", "user", "primary",
		"secondary", "partner", "consumer", "developer", "dev", "personal", "sas", "jwt", "cipher", "crypt",
		"crypto", "decryption", "wandb", "openai", "anthropic", "hf", "huggingface", "gemini", "google", "groq",
		"mistral", "cohere", "together", "replicate", "azure", "aws", "stripe", "sendgrid", "datadog", "dd",
		"sentry", "ngc", "nvidia", "modal":
		return true
	}
	return false
}

// tokenNotSecret reports a word before "token" that makes it a
// tokenizer's or a counter's setting: eos_token, max_new_token, image_token.
func tokenNotSecret(w []byte) bool {
	switch string(w) {
	case
		"bos", "eos", "pad", "unk", "sep", "cls", "mask", "special", "image", "video", "audio", "vision", "media",
		"start", "end", "stop", "additional", "added", "max", "min", "num", "total", "new", "prefill", "decode",
		"input", "output", "prompt", "completion", "cached", "generated", "first", "last", "next", "per",
		"context", "draft", "placeholder", "default", "sink", "think", "thinking", "reasoning", "tool", "eot",
		"eom", "im", "speculative", "spec", "extra", "dummy", "boi", "eoi", "vocab", "chat", "assistant", "system",
		"role", "box", "ref", "object", "point", "quad", "frame", "patch", "sentinel", "fim", "middle", "prefix",
		"suffix", "turn", "call", "response", "answer", "eod", "boundary", "word", "piece", "byte", "char",
		"unused", "ignore":
		return true
	}
	return false
}

// passNotSecret reports a word before "pass" that makes it a count or a
// stage: first_pass, num_pass.
func passNotSecret(w []byte) bool {
	switch string(w) {
	case
		"first", "second", "last", "single", "multi", "one", "two", "num", "max", "min", "skip", "by", "fast",
		"slow", "forward", "backward", "extra", "final", "per", "each":
		return true
	}
	return false
}

// queryWord reports a parameter name that holds a credential in a URL's
// query (?sig=, ?code=) though it would not elsewhere.
func queryWord(w []byte) bool {
	switch string(w) {
	case
		"sig", "signature", "code", "key", "keys", "token", "tokens", "auth", "pass", "pwd", "secret", "session",
		"sid", "sessionid", "ticket", "otp", "jwt":
		return true
	}
	return false
}

// lastWords finds the last two words of a name, lower-cased into the
// buffers: words break at any byte that is not a letter or digit, and
// where a lower-case letter or a digit is followed by an upper-case one
// (apiKey), or a run of capitals by a capitalized word (XApiKey: x, api,
// key; HFToken: hf, token). A word longer than a buffer keeps its end,
// which is what the policy compares. n is the number of words, counted up
// to 2. The scan runs from the name's end and stops after two words.
func lastWords(name []byte, prevBuf, lastBuf *[32]byte) (prev, last []byte, n int) {
	ls, le := wordBefore(name, len(name))
	if ls < 0 {
		return nil, nil, 0
	}
	last = lowerInto32(lastBuf, name[ls:le])
	ps, pe := wordBefore(name, ls)
	if ps < 0 {
		return nil, last, 1
	}
	return lowerInto32(prevBuf, name[ps:pe]), last, 2
}

// wordBefore finds the word of name that ends at or before end, or -1.
func wordBefore(name []byte, end int) (int, int) {
	for end > 0 && !isAlnum(name[end-1]) {
		end--
	}
	if end == 0 {
		return -1, -1
	}
	start := end - 1
	for start > 0 && isAlnum(name[start-1]) && !wordBreak(name, start) {
		start--
	}
	return start, end
}

// wordBreak reports a break between name[i-1] and name[i], both letters
// or digits: apiKey, XApiKey.
func wordBreak(name []byte, i int) bool {
	p, c := name[i-1], name[i]
	return isUpper(c) && (isLower(p) || isDigit(p)) || isUpper(p) && isUpper(c) && i+1 < len(name) && isLower(name[i+1])
}

func isAlnum(c byte) bool { return isLower(c) || isUpper(c) || isDigit(c) }

// lowerInto32 lower-cases w's last 32 bytes into buf.
func lowerInto32(buf *[32]byte, w []byte) []byte {
	w = w[max(0, len(w)-len(buf)):]
	out := buf[:len(w)]
	for i, c := range w {
		if isUpper(c) {
			c += 'a' - 'A'
		}
		out[i] = c
	}
	return out
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
	// A switch on the word compares, where a map would hash every name
	// of a log; indexing a map with string(b) does not allocate.
	st := notSecret
	switch string(last) {
	case "password", "passwords", "passwd", "passphrase", "secret", "secrets", "credential", "credentials",
		"cookie", "cookies", "authorization", "apikey", "apikeys", "privatekey", "accesskey", "secretkey":
		st = strong
	case "key", "keys":
		switch {
		case keyPrefix(prev) || bytes.HasSuffix(prev, []byte("api")):
			st = strong
		case n > 1 && isEnvName(name):
			st = strongText
		default:
			st = weak
		}
	case "token":
		if tokenNotSecret(prev) {
			return notSecret
		}
		st = strongText
	case "tokens":
		if tokenNotSecret(prev) {
			return notSecret
		}
		st = weak
	case "pwd":
		// PWD alone is the shell's working directory.
		if n > 1 {
			st = strong
		}
	case "oldpwd":
	case "pass":
		if n > 1 && !passNotSecret(prev) {
			st = strongText
		}
	case "auth", "basicauth", "httpauth", "proxyauth":
		st = strongText
	case "signature", "jwt":
		st = weak
	default:
		switch {
		case bytes.HasSuffix(last, []byte("pwd")) || hasAnySuffix(last, strongSuffix):
			st = strong
		case len(last) > 5 && bytes.HasSuffix(last, []byte("token")) && !tokenNotSecret(last[:len(last)-5]):
			// authtoken, hftoken, accesstoken: one word.
			st = strongText
		}
	}
	if inQuery {
		if st == notSecret && queryWord(last) {
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

// ConcealQuery is Conceal for a parameter of a URL's query, where a bundle's
// redaction judges names more strictly: a weak name (?signature=) and a
// word that holds a credential only there (?sig=, ?code=, ?session=) are as
// sure as ?api_key=. The report's values follow it (parser/envinfo).
func ConcealQuery(name, value string) bool {
	return value != "" && classify([]byte(name), true) >= strongText
}

// hides applies a name's strength to its value. The shape tests come
// before the placeholder test, which costs more and is seldom needed.
func hides(st strength, v []byte) bool {
	switch st {
	case notSecret:
		return false
	case weak:
		if _, ok, _ := tokenAt(v, 0, 0); !ok && !isOpaque(v) {
			return false
		}
	case strongText:
		if isNumberOrBool(v) {
			return false
		}
	}
	return !isPlaceholder(v)
}
