package reports

import (
	"fmt"
	"html"
	"io"
	"strings"

	"github.com/gomarkdown/markdown"
	mdhtml "github.com/gomarkdown/markdown/html"
	"github.com/gomarkdown/markdown/parser"

	"github.com/coroner-dev/coroner/internal/escape"
)

// HTML writes the postmortem as one self-contained page: the markdown of
// Markdown rendered by gomarkdown, an inline stylesheet and an inline SVG
// timeline. It loads nothing: no script, no font, no image, no stylesheet
// link, and a Content-Security-Policy that forbids them in case a browser
// finds one anyway.
//
// Evidence stays text. The markdown holds evidence only in fenced blocks or
// escaped inline text; gomarkdown runs with SkipHTML (raw HTML dropped),
// SkipImages and Safelink; the <details> blocks and the SVG are written
// here with every string escaped, never passed through as raw HTML.
func HTML(w io.Writer, r *Report) error {
	var b strings.Builder
	title := "coroner postmortem: " + escape.Text(r.Bundle.Path)
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	b.WriteString(`<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'">` + "\n")
	b.WriteString(`<meta name="referrer" content="no-referrer">` + "\n")
	b.WriteString(`<meta name="viewport" content="width=device-width, initial-scale=1">` + "\n")
	fmt.Fprintf(&b, "<title>%s</title>\n<style>\n%s</style>\n</head>\n", html.EscapeString(title), stylesheet)
	fmt.Fprintf(&b, "<body>\n<main class=\"outcome-%s\">\n", outcomeClass(r.Verdict.Outcome))
	for _, bl := range postmortem(r).blocks {
		switch {
		case bl.details != nil:
			fmt.Fprintf(&b, "<details%s><summary>%s</summary>\n<pre><code>%s</code></pre>\n</details>\n",
				openAttr(bl.details.open), html.EscapeString(bl.details.summary), html.EscapeString(bl.details.body))
		case bl.chart != nil:
			if svg := svgTimeline(bl.chart); svg != "" {
				b.WriteString("<figure class=\"chart\">\n")
				b.WriteString(svg)
				b.WriteString("\n</figure>\n")
			}
		default:
			b.Write(mdToHTML(bl.md))
		}
	}
	b.WriteString("</main>\n</body>\n</html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// mdToHTML renders one markdown block. No autolinks (a URL in a message
// stays text), no raw HTML, no images, no attributes.
func mdToHTML(md string) []byte {
	p := parser.NewWithExtensions(parser.NoIntraEmphasis | parser.Tables | parser.FencedCode |
		parser.Strikethrough | parser.SpaceHeadings | parser.AutoHeadingIDs)
	rd := mdhtml.NewRenderer(mdhtml.RendererOptions{
		Flags: mdhtml.SkipHTML | mdhtml.SkipImages | mdhtml.Safelink | mdhtml.NofollowLinks |
			mdhtml.NoreferrerLinks | mdhtml.NoopenerLinks,
	})
	return markdown.Render(markdown.Parse([]byte(md), p), rd)
}

// outcomeClass keeps the class name to the taxonomy's letters.
func outcomeClass(o string) string {
	var b strings.Builder
	for _, r := range o {
		if r >= 'a' && r <= 'z' || r == '-' {
			b.WriteRune(r)
		}
	}
	if b.Len() == 0 {
		return "unknown"
	}
	return b.String()
}

const stylesheet = `:root { color-scheme: light; }
body { margin: 0; background: #fff; color: #1f2328; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; }
main { max-width: 1140px; margin: 0 auto; padding: 24px 28px 48px; }
h1 { font-size: 1.6em; margin: 0 0 12px; padding-bottom: 8px; border-bottom: 1px solid #d1d9e0; overflow-wrap: anywhere; }
h2 { font-size: 1.3em; margin: 32px 0 10px; padding-bottom: 4px; border-bottom: 1px solid #d1d9e0; }
h3 { font-size: 1.1em; margin: 22px 0 8px; }
h4 { font-size: 1em; margin: 18px 0 6px; }
h1 + p { font-size: 1.15em; padding: 12px 16px; border-radius: 6px; border-left: 6px solid #8c959f; background: #f6f8fa; }
.outcome-hung h1 + p, .outcome-crashed h1 + p { border-left-color: #d1242f; background: #ffebe9; }
.outcome-slow h1 + p, .outcome-unknown h1 + p { border-left-color: #bf8700; background: #fff8c5; }
.outcome-ready h1 + p { border-left-color: #1a7f37; background: #dafbe1; }
.outcome-in-progress h1 + p { border-left-color: #0969da; background: #ddf4ff; }
table { border-collapse: collapse; margin: 8px 0 16px; display: block; overflow-x: auto; max-width: 100%; }
th, td { border: 1px solid #d1d9e0; padding: 4px 10px; text-align: left; vertical-align: top; }
th { background: #f6f8fa; font-weight: 600; }
tr:nth-child(even) td { background: #fbfcfd; }
code { font: 0.88em ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace; background: #eff2f5; padding: 1px 4px; border-radius: 4px; overflow-wrap: anywhere; }
pre { background: #f6f8fa; border: 1px solid #d1d9e0; border-radius: 6px; padding: 10px 12px; overflow-x: auto; }
pre code { background: none; padding: 0; white-space: pre; overflow-wrap: normal; }
details { margin: 6px 0 14px; }
summary { cursor: pointer; color: #0969da; }
figure.chart { margin: 12px 0 20px; overflow-x: auto; }
svg.timeline { width: 100%; height: auto; min-width: 760px; }
hr { border: 0; border-top: 1px solid #d1d9e0; margin: 32px 0 12px; }
li { margin: 3px 0; }
a { color: #0969da; }
`
