package envinfo

import "strings"

// word is one shell word after quote removal, or an operator.
type word struct {
	s    string
	line int  // the physical line the word starts on
	op   bool // |, ||, &, &&, ;, a newline, or a redirection (>, >>, 2>, <, >&, <<)
	// quoted is set when any part of the word was quoted: NAME="x" is still
	// an assignment, but "NAME=x" is not.
	quotedName bool
}

// lexer splits shell text into words the way sh would, across lines: it
// keeps quotes open over newlines, joins backslash-newline continuations,
// drops comments, and turns newlines into separators. It does no expansion.
type lexer struct {
	words []word
	cur   strings.Builder
	has   bool // cur holds a word (possibly empty: "")
	start int  // line of cur
	quote byte // the open quote, if any
	// nameQuoted records a quote seen before the first '=' of cur.
	nameQuoted bool
	sawEq      bool
	// heredoc is the delimiter of an open here-document.
	heredoc     string
	wantHeredoc bool
}

func (lx *lexer) add(c byte, line int) {
	if !lx.has {
		lx.has, lx.start = true, line
	}
	if c == '=' {
		lx.sawEq = true
	}
	if lx.cur.Len() < maxValue {
		lx.cur.WriteByte(c)
	}
}

func (lx *lexer) flush() {
	if !lx.has {
		return
	}
	w := word{s: lx.cur.String(), line: lx.start, quotedName: lx.nameQuoted}
	if lx.wantHeredoc {
		lx.heredoc, lx.wantHeredoc = w.s, false
	}
	lx.words = append(lx.words, w)
	lx.cur.Reset()
	lx.has, lx.nameQuoted, lx.sawEq = false, false, false
}

func (lx *lexer) emitOp(op string, line int) {
	lx.flush()
	lx.words = append(lx.words, word{s: op, line: line, op: true})
	if op == "<<" || op == "<<-" {
		lx.wantHeredoc = true
	}
}

// line feeds one physical line. It returns true when the line ends a
// command (no open quote, no continuation).
func (lx *lexer) line(l string, n int) bool {
	if lx.heredoc != "" {
		if strings.TrimSpace(l) == lx.heredoc {
			lx.heredoc = ""
		}
		return true
	}
	for i := 0; i < len(l); i++ {
		c := l[i]
		switch lx.quote {
		case '\'':
			if c == '\'' {
				lx.quote = 0
			} else {
				lx.add(c, n)
			}
			continue
		case '"':
			switch {
			case c == '"':
				lx.quote = 0
			case c == '\\' && i+1 < len(l) && strings.IndexByte("\"\\$`", l[i+1]) >= 0:
				i++
				lx.add(l[i], n)
			case c == '\\' && i+1 == len(l):
				return false // continuation inside double quotes
			default:
				lx.add(c, n)
			}
			continue
		}
		switch c {
		case ' ', '\t', '\r':
			lx.flush()
		case '\'', '"':
			if !lx.has {
				lx.has, lx.start = true, n
			}
			if !lx.sawEq {
				lx.nameQuoted = true
			}
			lx.quote = c
		case '\\':
			if i+1 == len(l) {
				return false // continuation
			}
			i++
			lx.add(l[i], n)
		case '#':
			if !lx.has {
				lx.flush()
				i = len(l) // a comment
			} else {
				lx.add(c, n)
			}
		case '|', '&', ';', '(', ')':
			op := string(c)
			if i+1 < len(l) && (l[i+1] == c && c != '(' && c != ')' || c == '&' && l[i+1] == '>') {
				op += string(l[i+1])
				i++
			}
			if op == "&>" {
				lx.emitOp(op, n)
				continue
			}
			if c == '(' || c == ')' {
				op = ";"
			}
			lx.emitOp(op, n)
		case '<', '>':
			// A word of digits right before is a file descriptor: 2>, 1>>.
			prefix := ""
			if lx.has && lx.quote == 0 && isDigits(lx.cur.String()) {
				prefix = lx.cur.String()
				lx.cur.Reset()
				lx.has = false
			}
			op := prefix + string(c)
			for i+1 < len(l) && (l[i+1] == '>' || l[i+1] == '<' || l[i+1] == '&' || l[i+1] == '|' || l[i+1] == '-' && op == "<<") {
				op += string(l[i+1])
				i++
			}
			lx.emitOp(op, n)
		case '$', '`':
			// $(...) and `...` stay inside the word, parentheses and all.
			end := substitutionEnd(l, i)
			for ; i < end; i++ {
				lx.add(l[i], n)
			}
			i--
		default:
			lx.add(c, n)
		}
	}
	if lx.quote != 0 {
		lx.add('\n', n)
		return false
	}
	lx.flush()
	lx.words = append(lx.words, word{s: "\n", line: n, op: true})
	return true
}

// take returns the words lexed so far and starts afresh.
func (lx *lexer) take() []word {
	w := lx.words
	lx.words = nil
	return w
}

// substitutionEnd returns the index after a $(...) or `...` starting at
// i, or i+1 when there is none (a plain $NAME).
func substitutionEnd(l string, i int) int {
	if l[i] == '`' {
		if j := strings.IndexByte(l[i+1:], '`'); j >= 0 {
			return i + j + 2
		}
		return len(l)
	}
	if i+1 >= len(l) || l[i+1] != '(' {
		return i + 1
	}
	depth := 0
	for j := i + 1; j < len(l); j++ {
		switch l[j] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return j + 1
			}
		}
	}
	return len(l)
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// isRedirect reports an operator that takes the next word as its target.
func isRedirect(op string) bool {
	return strings.ContainsAny(op, "<>")
}

// splitCommands cuts words into simple commands at separators, dropping
// redirections and their targets.
func splitCommands(ws []word) [][]word {
	var out [][]word
	var cur []word
	for i := 0; i < len(ws); i++ {
		w := ws[i]
		if !w.op {
			cur = append(cur, w)
			continue
		}
		if isRedirect(w.s) {
			// "2>&1", ">&2" carry their target in the operator or the next word.
			if i+1 < len(ws) && !ws[i+1].op {
				i++
			}
			continue
		}
		if len(cur) > 0 {
			out = append(out, cur)
			cur = nil
		}
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// splitWords lexes a string (bash -c '...') into simple commands.
func splitWords(s string, line int) [][]word {
	var lx lexer
	for _, l := range strings.Split(s, "\n") {
		lx.line(l, line)
	}
	lx.flush()
	for i := range lx.words {
		lx.words[i].line = line
	}
	return splitCommands(lx.words)
}

// isAssignment reports NAME=value with an unquoted name.
func isAssignment(w word) bool {
	if w.op || w.quotedName {
		return false
	}
	i := strings.IndexByte(w.s, '=')
	return i > 0 && isName(w.s[:i])
}
