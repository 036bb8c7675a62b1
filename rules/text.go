package rules

import "strings"

// period ends a sentence that ends with quoted text, without doubling the
// text's own final punctuation.
func period(s string) string {
	s = strings.TrimRight(s, " ")
	if s == "" {
		return s
	}
	switch s[len(s)-1] {
	case '.', '!', '?':
		return s
	}
	return s + "."
}

// capitalize upper-cases the first letter of a sentence.
func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
