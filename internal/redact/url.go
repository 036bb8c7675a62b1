package redact

import "bytes"

// maxURLHead bounds how far past "://" the scanner looks for a URL's
// userinfo and webhook path: a URL's head is short, and a bound keeps a
// line of "://" repeated linear.
const maxURLHead = 512

// urlStop ends a URL: white space, quotes and the bytes a URL cannot hold
// unescaped. A password may hold / @ : ) , ; and the scanner allows them.
var urlStop = setOf(" \t\r\n\x00\"'<>`\\|^{}")

// url handles scheme://...: it masks the password of the userinfo (the
// text up to the last @ before the host: passwords holding / or @ are
// masked whole), a token standing alone as the userinfo, and the secret
// path of a webhook. The scheme is b[i:j]; scanning goes on after "://",
// or after the userinfo, so that the query's parameters are still seen.
func (s *Stream) url(b []byte, i, j int) int {
	a := j + 3
	limit := min(len(b), a+maxURLHead)
	e, query, lastAt := a, -1, -1
	for e < limit && !urlStop[b[e]] {
		// Another URL ends this one's head: a password does not hold
		// "://", and each byte is then scanned for one head only.
		if b[e] == ':' && e+2 < len(b) && b[e+1] == '/' && b[e+2] == '/' {
			break
		}
		switch b[e] {
		case '@':
			if query < 0 {
				lastAt = e
			}
		case '?', '#':
			if query < 0 {
				query = e
			}
		}
		e++
	}
	if query < 0 {
		query = e
	}
	next := a
	hostStart := a
	if lastAt > a && lastAt+1 < len(b) && (isWordByte(b[lastAt+1]) || b[lastAt+1] == '[') {
		if s.userinfo(b, a, lastAt) {
			next, hostStart = lastAt+1, lastAt+1
		}
	}
	s.webhook(b, hostStart, query)
	return next
}

// userinfo masks the secret in b[a:at], the userinfo of a URL, and
// reports whether it was one (and not a path holding an @).
func (s *Stream) userinfo(b []byte, a, at int) bool {
	ui := b[a:at]
	colon := bytes.IndexByte(ui, ':')
	if colon < 0 {
		// https://TOKEN@github.com: a token is the userinfo; a user name
		// (git@, ssh://alice@) is left to --redact-hosts.
		if bytes.IndexByte(ui, '/') >= 0 {
			return false
		}
		if m, ok, _ := tokenAt(ui, 0, 0); ok {
			s.mask(b, a+m.shape.keep, at, m.shape.kind)
		} else if isOpaque(ui) {
			s.mask(b, a, at, kindUserinfo)
		}
		return true
	}
	user, pass := ui[:colon], ui[colon+1:]
	if bytes.IndexByte(user, '/') >= 0 || isPort(pass) {
		return false // host:8080/path/@x: a port and a path, no userinfo
	}
	if len(pass) == 0 || isPlaceholder(pass) {
		return true
	}
	kind, keep := kindUserinfo, 0
	if m, ok, _ := tokenAt(pass, 0, 0); ok {
		kind, keep = m.shape.kind, m.shape.keep
	}
	s.mask(b, a+colon+1+keep, at, kind)
	return true
}

// isPort reports digits followed by nothing or a path: the port of
// host:8080/... rather than a password.
func isPort(p []byte) bool {
	n := 0
	for n < len(p) && isDigit(p[n]) {
		n++
	}
	return n > 0 && n <= 5 && (n == len(p) || p[n] == '/')
}

// webhooks are hosts whose URL path after a prefix is the secret itself.
var webhooks = []struct{ host, path string }{
	{"hooks.slack.com", "/services/"},
	{"hooks.slack.com", "/workflows/"},
	{"hooks.slack.com", "/triggers/"},
	{"discord.com", "/api/webhooks/"},
	{"discordapp.com", "/api/webhooks/"},
	{"api.telegram.org", "/bot"},
	{"outlook.office.com", "/webhook/"},
}

// webhook masks the secret path of a webhook URL whose host starts at
// b[h]; the path ends at end (the query or the URL's end).
func (s *Stream) webhook(b []byte, h, end int) {
	if end-h < 8 || b[h] != 'h' && b[h] != 'd' && b[h] != 'a' && b[h] != 'o' {
		return
	}
	for _, w := range webhooks {
		if end-h < len(w.host)+len(w.path) || !eqFold(b[h:h+len(w.host)], w.host) {
			continue
		}
		p := h + len(w.host)
		if !bytes.HasPrefix(b[p:end], []byte(w.path)) {
			continue
		}
		s.mask(b, p+len(w.path), end, kindWebhook)
		return
	}
}
