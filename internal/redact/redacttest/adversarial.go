// Package redacttest builds inputs for the redactor's tests and benchmarks:
// text made to be slow to redact, shared by the Go benchmarks and
// bench/gen.
package redacttest

import (
	"bytes"
	"sort"
	"strings"
)

// An Adversarial input is text built around what the redactor looks for:
// long runs after the words that start a secret, and those words over and
// over, on long lines and on short ones.
type Adversarial struct {
	Name string
	Data []byte
}

// adversarialUnits are the repeated pieces of each input. A line of
// repeats is cut at lineLen bytes when lineLen > 0, else the input is one
// line.
var adversarialUnits = []struct {
	name    string
	unit    string
	lineLen int
}{
	// The words that start a secret, back to back on one long line: every
	// occurrence is a candidate whose value never comes.
	{"api_key-repeated", "api_key ", 0},
	{"authorization-repeated", "Authorization: ", 0},
	{"bearer-repeated", "Bearer ", 0},
	{"password-repeated", "password", 0},
	{"x-api-key-repeated", "X-API-Key:", 0},
	{"url-repeated", "https://u:", 0},
	{"token-prefix-repeated", "hf_sk-ghp_", 0},
	{"secret-env-repeated", "A_TOKEN", 0},
	{"flag-repeated", "--api-key ", 0},
	// Names that may hold a secret, each the start of the last one's
	// value: every value must be judged once, not again for each name.
	{"weak-name-chain", "cache_key=", 0},
	{"weak-name-quoted", "key: 'ts ", 0},
	{"weak-name-list", "keys: [ts, ", 1 << 12},
	// The same words with a separator and no value, on lines of 4 KB.
	{"api_key=-lines", "api_key=", 4096},
	{"authorization-lines", "Authorization:", 4096},
	{"quote-lines", `"password": "`, 4096},
	{"mixed-lines", `api_key Authorization: Bearer password X-API-Key: --token hf_ sk- ://a:b `, 1 << 14},
}

// adversarialRuns are a secret word followed by one long run of a byte:
// a value, or white space before a separator that never comes.
var adversarialRuns = []struct{ name, word, run string }{
	{"api_key-spaces", "api_key", " "},
	{"api_key-value", "api_key=", "a"},
	{"authorization-value", "Authorization: Bearer ", "A"},
	{"bearer-spaces", "Bearer", " "},
	{"password-spaces", "password", " "},
	{"x-api-key-value", "X-API-Key: ", "k"},
}

// AdversarialInputs returns the inputs, each about size bytes, sorted by
// name.
func AdversarialInputs(size int) []Adversarial {
	var out []Adversarial
	for _, u := range adversarialUnits {
		var b bytes.Buffer
		line := 0
		for b.Len() < size {
			b.WriteString(u.unit)
			line += len(u.unit)
			if u.lineLen > 0 && line >= u.lineLen {
				b.WriteByte('\n')
				line = 0
			}
		}
		b.WriteByte('\n')
		out = append(out, Adversarial{Name: u.name, Data: b.Bytes()})
	}
	for _, r := range adversarialRuns {
		// Runs of 64 KB: a few per input, each a word and its run.
		var b bytes.Buffer
		for b.Len() < size {
			b.WriteString(r.word)
			b.WriteString(strings.Repeat(r.run, 64<<10))
			b.WriteByte('\n')
		}
		out = append(out, Adversarial{Name: r.name, Data: b.Bytes()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
