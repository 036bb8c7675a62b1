package reports

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tag is one start or end tag found in an HTML document.
type tag struct {
	name  string
	end   bool
	attrs map[string]string
	text  string // the raw tag, for messages
}

// scanTags walks an HTML document and returns its tags and its text (what
// lies between tags, entities left as they are). It knows just enough of
// HTML for documents this package writes: a "<" followed by a letter, "/"
// or "!" opens a tag, attribute values may be quoted, and the content of
// <style> is raw text. Escaped evidence never holds a raw "<", so every tag
// found is markup a browser would build.
func scanTags(doc string) ([]tag, string, error) {
	var tags []tag
	var text strings.Builder
	for i := 0; i < len(doc); {
		if doc[i] != '<' || i+1 >= len(doc) || !(isLetter(doc[i+1]) || doc[i+1] == '/' || doc[i+1] == '!') {
			text.WriteByte(doc[i])
			i++
			continue
		}
		j := i + 1
		var quote byte
		for ; j < len(doc); j++ {
			c := doc[j]
			if quote != 0 {
				if c == quote {
					quote = 0
				}
				continue
			}
			if c == '"' || c == '\'' {
				quote = c
			} else if c == '>' {
				break
			}
		}
		if j >= len(doc) {
			return nil, "", fmt.Errorf("unterminated tag at byte %d", i)
		}
		tg := parseTag(doc[i : j+1])
		tags = append(tags, tg)
		i = j + 1
		if (tg.name == "style" || tg.name == "script") && !tg.end {
			k := strings.Index(strings.ToLower(doc[i:]), "</"+tg.name)
			if k < 0 {
				return nil, "", fmt.Errorf("unterminated <%s>", tg.name)
			}
			tags = append(tags, tag{name: "#" + tg.name + "-content", text: doc[i : i+k]})
			i += k
		}
	}
	return tags, text.String(), nil
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func parseTag(raw string) tag {
	tg := tag{attrs: map[string]string{}, text: raw}
	s := strings.TrimSuffix(strings.TrimPrefix(raw, "<"), ">")
	if strings.HasPrefix(s, "/") {
		tg.end = true
		s = s[1:]
	}
	n := 0
	for n < len(s) && s[n] != ' ' && s[n] != '\n' && s[n] != '/' {
		n++
	}
	tg.name = strings.ToLower(s[:n])
	s = s[n:]
	for {
		s = strings.TrimLeft(s, " \n\t/")
		if s == "" {
			break
		}
		k := 0
		for k < len(s) && s[k] != '=' && s[k] != ' ' {
			k++
		}
		name := strings.ToLower(s[:k])
		s = s[k:]
		val := ""
		if strings.HasPrefix(s, "=") {
			s = s[1:]
			if s != "" && (s[0] == '"' || s[0] == '\'') {
				q := s[0]
				e := strings.IndexByte(s[1:], q)
				if e < 0 {
					e = len(s) - 1
				}
				val, s = s[1:1+e], s[min(len(s), e+2):]
			} else {
				e := strings.IndexAny(s, " ")
				if e < 0 {
					e = len(s)
				}
				val, s = s[:e], s[e:]
			}
		}
		tg.attrs[name] = val
	}
	return tg
}

// allowedTags is all the markup the HTML report may hold.
var allowedTags = map[string]bool{
	"!doctype": true, "html": true, "head": true, "meta": true, "title": true, "style": true, "#style-content": true,
	"body": true, "main": true, "h1": true, "h2": true, "h3": true, "h4": true, "p": true, "ul": true, "ol": true,
	"li": true, "table": true, "thead": true, "tbody": true, "tr": true, "th": true, "td": true, "pre": true,
	"code": true, "details": true, "summary": true, "strong": true, "em": true, "del": true, "hr": true, "br": true,
	"figure": true, "svg": true, "defs": true, "pattern": true, "rect": true, "line": true, "text": true, "a": true,
}

// inertProblems lists anything in a page that could run or fetch: tags
// outside the allowed set, event handler attributes, URLs other than
// in-page "#..." references, stylesheet imports, a meta refresh.
func inertProblems(page string) (problems []string, text string) {
	tags, text, err := scanTags(page)
	if err != nil {
		return []string{err.Error()}, ""
	}
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	for _, tg := range tags {
		if !allowedTags[tg.name] {
			bad("tag not allowed: %s", tg.text)
		}
		if tg.name == "#style-content" {
			if strings.Contains(tg.text, "@import") || strings.Contains(tg.text, "url(") {
				bad("the stylesheet loads something")
			}
			continue
		}
		for name, val := range tg.attrs {
			v := strings.ToLower(val)
			switch {
			case strings.HasPrefix(name, "on"):
				bad("event handler: %s", tg.text)
			case name == "src" || name == "srcset" || name == "xlink:href" || name == "action" || name == "formaction" ||
				name == "background" || name == "poster" || name == "data":
				bad("attribute %s loads something: %s", name, tg.text)
			case name == "href" && !strings.HasPrefix(val, "#"):
				bad("link out of the page: %s", tg.text)
			case strings.Contains(v, "javascript:"):
				bad("javascript: URL: %s", tg.text)
			case strings.Contains(v, "url(") && !strings.Contains(v, "url(#"):
				bad("url() out of the page: %s", tg.text)
			case tg.name == "meta" && name == "http-equiv" && v != "content-security-policy":
				bad("meta http-equiv other than the CSP: %s", tg.text)
			}
		}
	}
	return problems, text
}

func assertInert(t *testing.T, page string) (text string) {
	t.Helper()
	problems, text := inertProblems(page)
	assert.Empty(t, problems)
	return text
}

// TestInertProblems checks the checker: each of these pages does something
// the report must never do, and the checker says so.
func TestInertProblems(t *testing.T) {
	for _, page := range []string{
		`<p>x</p><script>alert(1)</script>`,
		`<img src=x onerror=alert(2)>`,
		`<p onclick="alert(1)">x</p>`,
		`<a href="javascript:alert(3)">x</a>`,
		`<a href="https://example.com/">x</a>`,
		`<style>@import url(https://example.com/x.css);</style>`,
		`<p style="background:url(https://example.com/i.png)">x</p>`,
		`<meta http-equiv="refresh" content="0;url=https://example.com/">`,
		`<iframe src="https://example.com/"></iframe>`,
		`<svg><image xlink:href="https://example.com/i.png"/></svg>`,
		`<link rel="stylesheet" href="https://example.com/x.css">`,
	} {
		problems, _ := inertProblems(page)
		assert.NotEmpty(t, problems, page)
	}
	problems, text := inertProblems(`<p>&lt;script&gt;alert(1)&lt;/script&gt; <a href="#x">in page</a></p><svg><rect fill="url(#hatch)"/></svg>`)
	assert.Empty(t, problems)
	assert.Contains(t, text, "&lt;script&gt;")
}

// TestHTMLHostileEvidence renders a bundle whose log, launch command and
// file names carry HTML, script, javascript: links, markdown and Mermaid
// syntax, and checks that the page holds none of it as live markup, loads
// nothing, and still shows it as text.
func TestHTMLHostileEvidence(t *testing.T) {
	r := analyze(t, "hostile", "testdata/hostile")
	var buf bytes.Buffer
	require.NoError(t, HTML(&buf, r))
	page := buf.String()
	text := assertInert(t, page)

	// Neither payload exists as markup anywhere in the page (assertInert
	// has checked every tag and attribute) ...
	assert.NotContains(t, page, "<script")
	assert.NotContains(t, page, "<img")
	assert.NotContains(t, page, "<iframe")
	// ... yet the reader sees the evidence, escaped, as text.
	assert.Contains(t, text, "&lt;script&gt;alert(1)&lt;/script&gt;")
	assert.Contains(t, text, "&lt;img src=x onerror=alert(2)&gt;")
	assert.Contains(t, text, "[x](javascript:alert(3))", "a markdown link in evidence stays text")
	assert.Contains(t, text, "evil&lt;img src=x onerror=alert(5)&gt;.txt", "a hostile file name stays text")
	assert.Contains(t, text, "/models/&lt;img src=x onerror=alert(2)&gt;", "a hostile server argument stays text")
	// The terminal escape in a file is gone, not passed through.
	assert.NotContains(t, page, "\x1b")
}

// TestHTMLSelfContained checks every golden bundle's page: nothing live,
// nothing fetched, and the SVG timeline inline where there is a timeline.
func TestHTMLSelfContained(t *testing.T) {
	for _, gb := range goldenBundles {
		t.Run(gb.name, func(t *testing.T) {
			r := analyze(t, gb.name, gb.path)
			var buf bytes.Buffer
			require.NoError(t, HTML(&buf, r))
			page := buf.String()
			assertInert(t, page)
			assert.True(t, strings.HasPrefix(page, "<!DOCTYPE html>"))
			assert.Contains(t, page, `<meta http-equiv="Content-Security-Policy" content="default-src 'none';`)
			assert.NotContains(t, page, "```mermaid", "the HTML draws the chart as SVG, not as a Mermaid block")
			if len(r.Timeline) > 0 {
				assert.Contains(t, page, `<svg class="timeline"`)
			}
			assert.Equal(t, strings.Count(page, "<details"), strings.Count(page, "</details>"))
		})
	}
}

// TestHTMLSVGTimeline checks the seed's chart: one row per row group, the
// stall drawn hatched, the snapshot marked.
func TestHTMLSVGTimeline(t *testing.T) {
	r := analyze(t, "seed", "../fixtures/seed/flashinfer-sm120-hang")
	svg := svgTimeline(&chart{Groups: timelineGroups(r.Timeline), Ended: openEnding(r), Snapshots: r.Snapshots, End: r.EvidenceEnd})
	require.NotEmpty(t, svg)
	// The launcher hands off to its schedulers; the eight ranks went
	// through the same phases (rank 0's bar ends loading for all of them).
	for _, label := range []string{">main</text>", ">TP0-TP7</text>"} {
		assert.Contains(t, svg, label)
	}
	// One open phase, the ranks' post-weights, is the stall, hatched;
	// closed phases keep their colour.
	assert.Equal(t, 1, strings.Count(svg, `fill="url(#stall-hatch)"><title>`))
	assert.Contains(t, svg, "TP0-TP7: post-weights, 00:38:01 to 01:55:12 (77 min, open: stalled)")
	assert.Contains(t, svg, `fill="`+phaseColors["weights-loading"]+`"><title>TP0-TP7: weights-loading, 00:28:19 to 00:38:01 (10 min)`)
	// The ps and nvidia-smi snapshots, taken at the same second, are one mark.
	assert.Contains(t, svg, ">nvidia-smi, ps</text>")
	assert.Contains(t, svg, "evidence ends 2026-02-10 01:55:12 UTC")
}
