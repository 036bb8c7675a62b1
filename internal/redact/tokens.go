package redact

// A tokenShape recognizes a secret by its shape alone: a service's prefix
// and a body of enough bytes of its alphabet. The same table classifies a
// value found under a secret name, which is then counted under the
// token's kind and keeps the prefix readable (hf_****), so that a reader
// sees which kind of token was there.
type tokenShape struct {
	kind   string
	prefix string
	set    *byteSet
	// min is the least body length after the prefix; exact, when set,
	// wants exactly min bytes of the alphabet and no more (an AWS key id
	// is 20 characters, followed by a boundary).
	min   int
	exact bool
	keep  int
	jwt   bool // three base64url parts: a JWT
}

type byteSet [256]bool

func setOf(ranges ...string) *byteSet {
	var s byteSet
	for _, r := range ranges {
		if len(r) == 3 && r[1] == '-' {
			for c := int(r[0]); c <= int(r[2]); c++ {
				s[c] = true
			}
			continue
		}
		for i := 0; i < len(r); i++ {
			s[r[i]] = true
		}
	}
	return &s
}

var (
	setAlnum    = setOf("a-z", "A-Z", "0-9")
	setAlnumU   = setOf("a-z", "A-Z", "0-9", "_")
	setAlnumUD  = setOf("a-z", "A-Z", "0-9", "_-")
	setAlnumD   = setOf("a-z", "A-Z", "0-9", "-")
	setAlnumUDD = setOf("a-z", "A-Z", "0-9", "_-.")
	setUpperNum = setOf("A-Z", "0-9")
	setHexLower = setOf("a-f", "0-9")
)

// tokenShapes are tried longest prefix first within one first byte.
var tokenShapes = []tokenShape{
	{kind: "hf-token", prefix: "hf_", set: setAlnum, min: 30, keep: 3},
	{kind: "anthropic-key", prefix: "sk-ant-", set: setAlnumUD, min: 20, keep: 7},
	{kind: "openai-key", prefix: "sk-", set: setAlnumUD, min: 20, keep: 3},
	{kind: "stripe-key", prefix: "sk_live_", set: setAlnum, min: 20, keep: 8},
	{kind: "stripe-key", prefix: "sk_test_", set: setAlnum, min: 20, keep: 8},
	{kind: "stripe-key", prefix: "rk_live_", set: setAlnum, min: 20, keep: 8},
	{kind: "github-token", prefix: "github_pat_", set: setAlnumU, min: 22, keep: 11},
	{kind: "github-token", prefix: "ghp_", set: setAlnum, min: 30, keep: 4},
	{kind: "github-token", prefix: "gho_", set: setAlnum, min: 30, keep: 4},
	{kind: "github-token", prefix: "ghu_", set: setAlnum, min: 30, keep: 4},
	{kind: "github-token", prefix: "ghs_", set: setAlnum, min: 30, keep: 4},
	{kind: "github-token", prefix: "ghr_", set: setAlnum, min: 30, keep: 4},
	{kind: "gitlab-token", prefix: "glpat-", set: setAlnumUD, min: 20, keep: 6},
	{kind: "aws-access-key", prefix: "AKIA", set: setUpperNum, min: 16, exact: true, keep: 4},
	{kind: "aws-access-key", prefix: "ASIA", set: setUpperNum, min: 16, exact: true, keep: 4},
	{kind: "aws-access-key", prefix: "ABIA", set: setUpperNum, min: 16, exact: true, keep: 4},
	{kind: "aws-access-key", prefix: "ACCA", set: setUpperNum, min: 16, exact: true, keep: 4},
	{kind: "slack-token", prefix: "xoxa-", set: setAlnumD, min: 10, keep: 5},
	{kind: "slack-token", prefix: "xoxb-", set: setAlnumD, min: 10, keep: 5},
	{kind: "slack-token", prefix: "xoxp-", set: setAlnumD, min: 10, keep: 5},
	{kind: "slack-token", prefix: "xoxo-", set: setAlnumD, min: 10, keep: 5},
	{kind: "slack-token", prefix: "xoxs-", set: setAlnumD, min: 10, keep: 5},
	{kind: "slack-token", prefix: "xoxr-", set: setAlnumD, min: 10, keep: 5},
	{kind: "slack-token", prefix: "xapp-", set: setAlnumD, min: 10, keep: 5},
	{kind: "google-api-key", prefix: "AIza", set: setAlnumUD, min: 35, keep: 4},
	{kind: "google-oauth-token", prefix: "ya29.", set: setAlnumUDD, min: 20, keep: 5},
	{kind: "google-oauth-token", prefix: "GOCSPX-", set: setAlnumUD, min: 20, keep: 7},
	{kind: "nvidia-api-key", prefix: "nvapi-", set: setAlnumUD, min: 40, keep: 6},
	{kind: "npm-token", prefix: "npm_", set: setAlnum, min: 36, keep: 4},
	{kind: "pypi-token", prefix: "pypi-", set: setAlnumUD, min: 50, keep: 5},
	{kind: "groq-key", prefix: "gsk_", set: setAlnum, min: 40, keep: 4},
	{kind: "xai-key", prefix: "xai-", set: setAlnum, min: 40, keep: 4},
	{kind: "replicate-token", prefix: "r8_", set: setAlnum, min: 30, keep: 3},
	{kind: "perplexity-key", prefix: "pplx-", set: setAlnum, min: 40, keep: 5},
	{kind: "databricks-token", prefix: "dapi", set: setHexLower, min: 32, keep: 4},
	{kind: "digitalocean-token", prefix: "dop_v1_", set: setHexLower, min: 64, keep: 7},
	{kind: "sendgrid-key", prefix: "SG.", set: setAlnumUDD, min: 60, keep: 3},
	{kind: "jwt", prefix: "eyJ", jwt: true, keep: 3},
}

// tokensByFirst indexes the shapes by their prefix's first byte, longest
// prefix first (sk-ant- before sk-).
var tokensByFirst = func() (idx [256][]*tokenShape) {
	for i := range tokenShapes {
		t := &tokenShapes[i]
		c := t.prefix[0]
		idx[c] = append(idx[c], t)
		for j := len(idx[c]) - 1; j > 0 && len(idx[c][j].prefix) > len(idx[c][j-1].prefix); j-- {
			idx[c][j], idx[c][j-1] = idx[c][j-1], idx[c][j]
		}
	}
	return idx
}()

// tokenMatch is a token found at some offset: its shape and its end.
type tokenMatch struct {
	shape *tokenShape
	end   int
}

// tokenAt recognizes a token starting at b[i], which the caller has found
// at a word boundary. The work is bounded by the token's length when it
// matches and by the shape's minimum when it does not, so scanning a line
// for tokens stays linear. A JWT's parts have no bound: jwtFrom, when
// greater than i, says that a JWT cannot start before it (an earlier try
// in the same run of base64 failed, and every start in that run fails the
// same way); tokenAt returns the new bound.
func tokenAt(b []byte, i, jwtFrom int) (tokenMatch, bool, int) {
	if i >= len(b) {
		return tokenMatch{}, false, jwtFrom // an empty value holds no token
	}
	for _, t := range tokensByFirst[b[i]] {
		if len(b)-i < len(t.prefix) || string(b[i:i+len(t.prefix)]) != t.prefix {
			continue
		}
		start := i + len(t.prefix)
		if t.jwt {
			if i < jwtFrom {
				continue
			}
			end, ok := jwtEnd(b, i)
			if ok {
				return tokenMatch{t, end}, true, jwtFrom
			}
			jwtFrom = end
			continue
		}
		end := start
		for end < len(b) && t.set[b[end]] {
			end++
			if t.exact && end-start > t.min {
				break
			}
		}
		n := end - start
		if n < t.min || t.exact && (n != t.min || end < len(b) && isWordByte(b[end])) {
			continue
		}
		return tokenMatch{t, end}, true, jwtFrom
	}
	return tokenMatch{}, false, jwtFrom
}

// jwtEnd matches eyJ<8+>.eyJ<8+>.<8+> of base64url at b[i]. On a failure
// it returns the end of the first part's run.
func jwtEnd(b []byte, i int) (int, bool) {
	part := func(p int, head bool) (int, bool) {
		if head {
			if len(b)-p < 3 || string(b[p:p+3]) != "eyJ" {
				return p, false
			}
		}
		q := p
		for q < len(b) && setAlnumUD[b[q]] {
			q++
		}
		return q, q-p >= 8
	}
	first, ok := part(i, true)
	if !ok || first >= len(b) || b[first] != '.' {
		return first, false
	}
	p, ok := part(first+1, true)
	if !ok || p >= len(b) || b[p] != '.' {
		return first, false
	}
	p, ok = part(p+1, false)
	if !ok {
		return first, false
	}
	return p, true
}

// ReplaceTokens replaces, whole, each token of a known shape that starts a
// word of s with repl: the report hides the tokens a bundle's redaction
// masks, by the same table (parser/envinfo, for values it keeps).
func ReplaceTokens(s, repl string) string {
	var b []byte
	var out []byte
	last, jwtFrom := 0, 0
	for k := 0; k < len(s); k++ {
		if k > 0 && isWordByte(s[k-1]) || len(tokensByFirst[s[k]]) == 0 {
			continue
		}
		if b == nil {
			b = []byte(s)
		}
		m, ok, from := tokenAt(b, k, jwtFrom)
		jwtFrom = from
		if !ok {
			continue
		}
		out = append(append(out, s[last:k]...), repl...)
		last = m.end
		k = m.end - 1
	}
	if out == nil {
		return s
	}
	return string(append(out, s[last:]...))
}
