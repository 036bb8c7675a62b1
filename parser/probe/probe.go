// Package probe reads the results of health probes of an inference server:
// the collector's probe records and transcripts of `curl` (and `wget`) runs
// that a user or a script kept.
//
// # Probe records
//
// `coroner collect` writes one JSON object per line (JSON Lines), the
// Record type of this package:
//
//	{"at":"2026-11-30T04:24:37.811Z","url":"http://127.0.0.1:8000/health","endpoint":"/health","status":503,"latency_ms":12.4,"body":"..."}
//	{"at":"2026-11-30T04:24:42.815Z","url":"http://127.0.0.1:8000/health","endpoint":"/health","status":0,"error":"dial tcp 127.0.0.1:8000: connect: connection refused","latency_ms":0.3}
//
// at is RFC 3339 with a zone; status is the HTTP status, 0 when no answer
// came; error says why there was none (refused, timed out, reset); body
// is the start of the answer (at most 1 KiB). endpoint defaults to the
// URL's path. Unknown keys are ignored, so the format can grow.
//
// # Transcripts
//
// A transcript holds curl commands (with or without a "$ " prompt) and what
// they printed: curl's own errors ("curl: (7) Failed to connect to
// localhost port 8000 after 0 ms: Connection refused"), status lines of -i
// and -v ("HTTP/1.1 200 OK", "< HTTP/1.1 503 Service Unavailable"), the
// output of -w '%{http_code}' ("200", "000"), response bodies, and lines a
// script echoes after a failed curl ("SERVER NOT RESPONDING"). A `date` line
// stamps the probe that follows it.
package probe

import (
	"bytes"
	"encoding/json"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/coroner-dev/coroner/parser/capture"
	"github.com/coroner-dev/coroner/parser/envinfo"
	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/textio"
)

// Record is one line of the collector's probe file.
type Record struct {
	At        time.Time `json:"at"`
	URL       string    `json:"url"`
	Endpoint  string    `json:"endpoint,omitempty"`
	Status    int       `json:"status"`
	Error     string    `json:"error,omitempty"`
	LatencyMS float64   `json:"latency_ms,omitempty"`
	Body      string    `json:"body,omitempty"`
}

// MaxBody bounds the body kept per probe.
const MaxBody = 1024

var (
	curlCmdRe   = regexp.MustCompile(`(?:^|[\s;&|(])(curl|wget)\s`)
	curlErrRe   = regexp.MustCompile(`^curl: \((\d+)\) (.*)$`)
	statusRe    = regexp.MustCompile(`^(?:< )?HTTP/(?:\d(?:\.\d)?) (\d{3})\b`)
	codeOnlyRe  = regexp.MustCompile(`^(\d{3})(?:[ \t,]+(\d+(?:\.\d+)?))?$`)
	urlRe       = regexp.MustCompile(`(?:https?://)?(?:\[[0-9a-fA-F:]+\]|[A-Za-z0-9_.-]+):\d+(?:/[^\s'";|&<>()]*)?|https?://[^\s'";|&<>()]+`)
	refusedRe   = regexp.MustCompile(`(?i)\bnot (?:responding|ready|reachable|healthy|up)\b|\bunhealthy\b|\brefused\b|\bfailed\b|\btimed? ?out\b|\bdown\b|\bunreachable\b`)
	connectToRe = regexp.MustCompile(`(?:connect to|resolve host:?) ([^\s:]+)(?: port (\d+)|:(\d+))?`)
	wgetRe      = regexp.MustCompile(`^--\d{4}-\d\d-\d\d \d\d:\d\d:\d\d--\s+(\S+)`)
	wgetRespRe  = regexp.MustCompile(`request sent, awaiting response\.\.\. (\d{3})\b`)
	wgetFailRe  = regexp.MustCompile(`(failed: .*|Read error .*|Connection timed out.*)$`)
	stampPrefRe = regexp.MustCompile(`^\[?(\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?)\]?\s+`)
)

// Sniff recognizes probe records and curl transcripts.
func Sniff(name string, head []byte) (facts.Kind, int) {
	n := strings.ToLower(name)
	nameHint := strings.Contains(n, "probe") || strings.Contains(n, "health") || strings.Contains(n, "curl")
	lines := bytes.Split(head, []byte{'\n'})
	if len(lines) > 1 && len(head) >= 8<<10 {
		lines = lines[:len(lines)-1] // cut by the head limit
	}
	records, cmds, results, other, launch := 0, 0, 0, 0, false
	for _, l := range lines {
		t := bytes.TrimSpace(l)
		if len(t) == 0 {
			continue
		}
		switch {
		case t[0] == '{' && bytes.Contains(t, []byte(`"url"`)) && (bytes.Contains(t, []byte(`"status"`)) || bytes.Contains(t, []byte(`"error"`))):
			records++
		case curlCmdRe.Match(t) && urlRe.Match(t):
			cmds++
		case curlErrRe.Match(t) || statusRe.Match(t) || wgetRe.Match(t):
			results++
		default:
			other++
			if bytes.Contains(t, []byte("launch_server")) || bytes.Contains(t, []byte("vllm serve")) || bytes.Contains(t, []byte("sglang serve")) {
				launch = true
			}
		}
	}
	score := 0
	switch {
	case records > 0 && records*2 >= records+cmds+results+other:
		score = 95
	case launch && cmds > 0:
		score = 50 // a launch script that waits on /health: a command first
	case cmds > 0 && (results > 0 || other <= 4*cmds+4):
		score = 85
	case results > 0 && results*2 >= results+other:
		score = 75
	case results > 0:
		score = 35
	}
	if nameHint {
		if score == 0 {
			return facts.KindProbe, 20
		}
		score = min(score+5, 100)
	}
	if score == 0 {
		return "", 0
	}
	return facts.KindProbe, score
}

// pending is the probe being read from a transcript.
type pending struct {
	p        *facts.Probe
	resolved bool   // a status line or an error was seen
	headers  bool   // reading the headers that curl -i prints after the status
	wCode    bool   // the command asked for -w %{http_code}
	failEcho string // what the command echoes when curl fails (|| echo X)
	okEcho   string // what it echoes when curl succeeds (&& echo X)
	body     []string
	bodyLen  int
}

type parser struct {
	in     *textio.Input
	out    *facts.Facts
	cur    *pending
	nextAt time.Time
	noZone bool
	latest time.Time
	any    bool
	kept   probeCap
}

// MaxProbes bounds the probes kept per file: the first and the last
// halves, the latest state among them; the ones between are counted. A
// probe every five seconds for a week is 120,000 records.
const MaxProbes = 4096

// probeCap keeps the first probes and the last.
type probeCap struct{ facts.FirstLast[*facts.Probe] }

func (c *probeCap) add(p *facts.Probe) {
	c.Max = MaxProbes
	c.Add(p)
}

// flush appends the kept probes to out in file order and says what was
// counted.
func (c *probeCap) flush(in *textio.Input, out *facts.Facts) {
	out.Probes = append(out.Probes, c.All()...)
	if c.Dropped > 0 {
		first, last := c.Kept()
		in.IssueAt(0, facts.IssueSummarized, "%d probes: kept the first %d and the last %d; the %d between were counted, not kept",
			first+last+c.Dropped, first, last, c.Dropped)
	}
}

// Parse reads probe records or a transcript, line by line; the two may mix.
func Parse(in *textio.Input, _ facts.Kind, out *facts.Facts) {
	p := &parser{in: in, out: out}
	for in.Scan() {
		p.line(in.Bytes())
	}
	p.flush()
	p.kept.flush(in, out)
	if p.noZone && !p.latest.IsZero() {
		out.Clocks[in.Path] = facts.Clock{NoZone: true, Latest: p.latest}
	}
	if !p.any && in.Line() > 0 {
		in.IssueAt(0, facts.IssueUnrecognized, "no probe record, curl command or curl result found")
	}
}

func (p *parser) line(raw []byte) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 {
		if p.cur != nil {
			p.cur.headers = false // the body follows
		}
		return
	}
	if t[0] == '{' && bytes.Contains(t, []byte(`"url"`)) {
		p.record(t)
		return
	}
	s := string(t)
	if !p.in.CheckUTF8() {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	// A stamp before the line: "[2026-11-30 04:24:37] $ curl ...".
	if c := s[0]; (c == '[' || c >= '0' && c <= '9') && len(s) > 20 {
		p.stampPrefix(&s)
	}
	cmd := strings.TrimLeft(s, "$#+> ")
	if (strings.Contains(cmd, "curl") || strings.Contains(cmd, "wget")) && !strings.HasPrefix(s, "curl: ") {
		if m := curlCmdRe.FindStringSubmatchIndex(cmd); m != nil && urlRe.MatchString(cmd[m[3]:]) {
			p.command(cmd, cmd[m[2]:m[3]])
			return
		}
	}
	p.result(s)
}

// stampPrefix takes a time stamp that prefixes a line: "[2026-11-30 04:24:37] $ curl ...".
func (p *parser) stampPrefix(s *string) {
	if m := stampPrefRe.FindStringSubmatch(*s); m != nil {
		if at, zoned, ok := capture.ParseStamp(strings.Replace(m[1], ",", ".", 1)); ok {
			p.stamp(at, zoned)
			*s = (*s)[len(m[0]):]
		}
	}
}

// result reads an output line of a probe.
func (p *parser) result(s string) {
	if looksLikeStamp(s) {
		if at, zoned, ok := capture.ParseStamp(s); ok {
			p.stamp(at, zoned)
			return
		}
	}
	if m := matchIf(strings.HasPrefix(s, "curl: ("), curlErrRe, s); m != nil {
		pr := p.open()
		if pr.p.URL == "" {
			if u := connectToRe.FindStringSubmatch(m[2]); u != nil {
				host := u[1]
				if port := u[2] + u[3]; port != "" {
					host += ":" + port
				}
				pr.p.URL = host
			}
		}
		pr.p.Err = cut(s, MaxBody)
		pr.resolved = true
		pr.p.Src = p.in.Src()
		return
	}
	if m := matchIf(strings.HasPrefix(s, "--"), wgetRe, s); m != nil {
		// wget stamps each request: "--2026-11-30 04:22:10--  URL".
		if p.cur == nil || p.cur.resolved {
			p.start(m[1])
		}
		if at, zoned, ok := capture.ParseStamp(s[2:21]); ok && p.cur.p.At.IsZero() {
			p.stamp(at, zoned)
			p.takeStamp(p.cur)
		}
		return
	}
	if m := matchIf(s[0] == 'H' || s[0] == '<', statusRe, s); m != nil {
		code, _ := strconv.Atoi(m[1])
		pr := p.cur
		// After a 100 Continue or a redirect (curl -L) the final status follows.
		if pr == nil || !(pr.p.Status == 100 || pr.p.Status >= 300 && pr.p.Status < 400) {
			pr = p.open()
		}
		pr.p.Status = code
		pr.resolved = true
		pr.headers = !strings.HasPrefix(s, "< ")
		pr.p.Src = p.in.Src()
		return
	}
	pr := p.cur
	if pr == nil {
		return // text before any probe: a banner, a comment
	}
	if pr.headers {
		return
	}
	if m := wgetRespRe.FindStringSubmatch(s); m != nil {
		pr.p.Status, _ = strconv.Atoi(m[1])
		pr.resolved, pr.p.Src = true, p.in.Src()
		return
	}
	if strings.HasPrefix(s, "Connecting to ") || strings.HasPrefix(s, "Resolving ") {
		if m := wgetFailRe.FindStringSubmatch(s); m != nil {
			pr.p.Err, pr.resolved, pr.p.Src = cut(s, MaxBody), true, p.in.Src()
		}
		return
	}
	if pr.wCode {
		if m := codeOnlyRe.FindStringSubmatch(s); m != nil {
			pr = p.open()
			pr.p.Status, _ = strconv.Atoi(m[1])
			if m[2] != "" {
				if sec, err := strconv.ParseFloat(m[2], 64); err == nil {
					pr.p.Latency = time.Duration(sec * float64(time.Second))
				}
			}
			if pr.p.Status == 0 && pr.p.Err == "" {
				pr.p.Err = "no HTTP response (curl printed status 000)"
			}
			pr.resolved, pr.p.Src = true, p.in.Src()
			return
		}
	}
	// curl -v chatter and headers.
	if strings.HasPrefix(s, "* ") || strings.HasPrefix(s, "> ") || strings.HasPrefix(s, "< ") || strings.HasPrefix(s, "{ [") ||
		strings.HasPrefix(s, "} [") || s == "*" || s == ">" || s == "<" || strings.HasPrefix(s, "% Total") || strings.HasPrefix(s, "Dload") {
		if pr.p.Endpoint == "" && strings.HasPrefix(s, "> ") {
			if f := strings.Fields(s); len(f) >= 3 && strings.HasPrefix(f[2], "/") {
				pr.p.Endpoint = endpointOf(f[2])
			}
		}
		return
	}
	switch {
	case pr.failEcho != "" && s == pr.failEcho:
		pr = p.open()
		if pr.p.Err == "" {
			pr.p.Err = s
		}
		pr.resolved, pr.p.Src = true, p.in.Src()
	case pr.okEcho != "" && s == pr.okEcho:
		pr.body = append(pr.body, s)
		pr.p.Src = p.in.Src()
	default:
		if pr.bodyLen < MaxBody {
			pr.body = append(pr.body, s)
			pr.bodyLen += len(s) + 1
		}
		if !pr.resolved && pr.p.Status == 0 && refusedRe.MatchString(s) && !strings.HasPrefix(s, "{") {
			// A script's verdict printed after curl failed silently.
			pr.p.Err, pr.resolved, pr.p.Src = cut(s, MaxBody), true, p.in.Src()
		}
	}
}

// matchIf runs re only when a cheap test passed.
func matchIf(pre bool, re *regexp.Regexp, s string) []string {
	if !pre {
		return nil
	}
	return re.FindStringSubmatch(s)
}

// looksLikeStamp is a cheap test before trying the date layouts: a short
// line that starts with a year or a weekday.
func looksLikeStamp(s string) bool {
	if len(s) < 16 || len(s) > 48 {
		return false
	}
	if s[0] >= '0' && s[0] <= '9' {
		return true
	}
	for _, d := range []string{"Mon ", "Tue ", "Wed ", "Thu ", "Fri ", "Sat ", "Sun "} {
		if strings.HasPrefix(s, d) {
			return true
		}
	}
	return false
}

func (p *parser) stamp(at time.Time, zoned bool) {
	p.nextAt = at
	if !zoned {
		p.noZone = true
		if at.After(p.latest) {
			p.latest = at
		}
	}
}

// open returns the probe being read, or starts one from a bare result line.
// A result for a probe that already has one is the next run of a looped
// command: it becomes a new probe of the same URL.
func (p *parser) open() *pending {
	switch {
	case p.cur == nil:
		p.start("")
	case !p.cur.resolved:
		if p.cur.p.At.IsZero() {
			p.takeStamp(p.cur) // a date printed between the command and its result
		}
	default:
		old := p.cur
		p.flush()
		p.cur = &pending{p: &facts.Probe{Src: p.in.Src(), URL: old.p.URL, Endpoint: old.p.Endpoint},
			wCode: old.wCode, failEcho: old.failEcho, okEcho: old.okEcho}
		p.takeStamp(p.cur)
	}
	return p.cur
}

func (p *parser) start(rawURL string) {
	p.flush()
	pr := &pending{p: &facts.Probe{Src: p.in.Src()}}
	if rawURL != "" {
		pr.p.URL = envinfo.RedactValue(rawURL)
		pr.p.Endpoint = endpointOf(rawURL)
	}
	p.cur = pr
	p.takeStamp(pr)
}

func (p *parser) takeStamp(pr *pending) {
	if !p.nextAt.IsZero() {
		pr.p.At = p.nextAt
		p.nextAt = time.Time{}
	}
}

// command starts a probe from a curl or wget command line.
func (p *parser) command(cmd, prog string) {
	p.start(urlRe.FindString(cmd[strings.Index(cmd, prog):]))
	pr := p.cur
	if prog == "curl" {
		if i := strings.Index(cmd, "-w"); i >= 0 && strings.Contains(cmd[i:], "http_code") {
			pr.wCode = true
		}
		if i := strings.Index(cmd, "--write-out"); i >= 0 && strings.Contains(cmd[i:], "http_code") {
			pr.wCode = true
		}
	}
	pr.failEcho = echoAfter(cmd, "||")
	pr.okEcho = echoAfter(cmd, "&&")
}

// echoAfter returns the text of `op echo "text"` in a command.
func echoAfter(cmd, op string) string {
	i := strings.Index(cmd, op)
	if i < 0 {
		return ""
	}
	rest := strings.TrimSpace(cmd[i+len(op):])
	rest, ok := strings.CutPrefix(rest, "echo ")
	if !ok {
		return ""
	}
	rest = strings.TrimSpace(rest)
	for _, sep := range []string{"||", "&&", ";", "|"} {
		if j := strings.Index(rest, sep); j > 0 {
			rest = strings.TrimSpace(rest[:j])
		}
	}
	return strings.Trim(rest, `"'`)
}

// flush emits the probe being read.
func (p *parser) flush() {
	pr := p.cur
	p.cur = nil
	if pr == nil {
		return
	}
	if len(pr.body) > 0 {
		pr.p.Body = cut(envinfo.RedactValue(strings.Join(pr.body, "\n")), MaxBody)
	}
	if pr.p.Endpoint == "" && pr.p.URL != "" {
		pr.p.Endpoint = endpointOf(pr.p.URL)
	}
	p.kept.add(pr.p)
	p.any = true
}

// record reads one JSON probe record.
func (p *parser) record(t []byte) {
	p.flush()
	var r Record
	if err := json.Unmarshal(t, &r); err != nil {
		p.in.Issuef(facts.IssueMalformed, "not a probe record: %v", err)
		return
	}
	pr := &facts.Probe{Src: p.in.Src(), At: r.At, URL: envinfo.RedactValue(r.URL), Endpoint: r.Endpoint, Status: r.Status,
		Err: cut(r.Error, MaxBody), Body: cut(envinfo.RedactValue(r.Body), MaxBody)}
	if r.LatencyMS > 0 {
		pr.Latency = time.Duration(r.LatencyMS * float64(time.Millisecond))
	}
	if pr.Endpoint == "" {
		pr.Endpoint = endpointOf(r.URL)
	}
	if r.URL == "" {
		p.in.Issuef(facts.IssueMalformed, "a probe record without a url")
	}
	p.kept.add(pr)
	p.any = true
}

// endpointOf returns the path of a URL ("/health"), "/" for none.
func endpointOf(raw string) string {
	s := raw
	if !strings.Contains(s, "://") {
		if strings.HasPrefix(s, "/") {
			s = "http://host" + s
		} else {
			s = "http://" + s
		}
	}
	u, err := url.Parse(s)
	if err != nil || u.Path == "" {
		return "/"
	}
	return u.Path
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
