package redact

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Learn reads one file of the bundle for host names, user names and IP
// addresses (with Hosts; otherwise it reads nothing). Learn every file
// before the first NewStream: a name is then replaced in every file, not
// only in those after the one it was learned from.
func (r *Redactor) Learn(src io.Reader) error {
	if !r.opts.Hosts {
		return nil
	}
	ls := lines{src: src}
	var lower []byte
	userCol := -1 // the column of user names in a ps or top listing
	for {
		line, err := ls.next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		lower = asciiLower(lower[:0], line)
		userCol = r.learnLine(line, lower, userCol)
	}
}

// LearnString learns from one text that is not a file's content: a file
// or member name, a path the manifest records.
func (r *Redactor) LearnString(text string) {
	if !r.opts.Hosts || text == "" {
		return
	}
	b := []byte(text)
	r.learnLine(b, asciiLower(nil, b), -1)
}

var (
	userNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]*$`)
)

func (r *Redactor) learnLine(line, lower []byte, userCol int) int {
	// The fields of a line matter in a ps or top listing only: its header
	// or the rows after it.
	var f [][]byte
	if head := bytes.TrimLeft(line, " "); userCol >= 0 || bytes.HasPrefix(head, []byte("USER")) ||
		bytes.HasPrefix(head, []byte("UID")) || bytes.HasPrefix(head, []byte("PID")) {
		f = bytes.Fields(line)
	}
	switch {
	case len(f) >= 2 && (string(f[0]) == "USER" || string(f[0]) == "UID") && string(f[1]) == "PID":
		userCol = 0 // ps aux, ps -ef
	case len(f) >= 2 && string(f[0]) == "PID" && string(f[1]) == "USER":
		userCol = 1 // top
	case userCol >= 0 && len(f) > userCol:
		if u := string(f[userCol]); !strings.HasSuffix(u, "+") {
			r.addUser(u)
		}
	}
	for i := range learners {
		l := &learners[i]
		if l.pre != nil && !l.pre(line) || l.exact && !hasAny(line, l.hints) || !l.exact && !hasAny(lower, l.hints) {
			continue
		}
		for _, m := range l.re.FindAllSubmatch(line, -1) {
			if l.user > 0 && l.user < len(m) && m[l.user] != nil {
				r.addUser(string(m[l.user]))
			}
			if l.host > 0 && l.host < len(m) && m[l.host] != nil {
				r.addHost(string(m[l.host]))
			}
		}
	}
	r.learnURLs(line)
	r.learnNCCL(line)
	r.learnInternal(line, lower)
	r.learnDF(line)
	forEachIP(line, lower, func(ip string, _, _ int) {
		r.mu.Lock()
		r.ips[ip] = true
		r.mu.Unlock()
	})
	return userCol
}

// learnNCCL learns the host of NCCL's lines, "gpu17:41170:41300 [0] NCCL
// INFO ...": HOST:PID:TID [RANK] before each " NCCL". By hand: the regular
// expression it replaces cost more than the rest of Learn on a log.
func (r *Redactor) learnNCCL(line []byte) {
	for off := 0; ; {
		k := bytes.Index(line[off:], []byte("] NCCL"))
		if k < 0 {
			return
		}
		p := off + k // at ']'
		off = p + 6
		digitsBack := func(p int) int { // p is just after the digits
			q := p
			for q > 0 && isDigit(line[q-1]) {
				q--
			}
			if q == p {
				return -1
			}
			return q
		}
		q := digitsBack(p)
		if q < 2 || line[q-1] != '[' || line[q-2] != ' ' {
			continue
		}
		tid := digitsBack(q - 2)
		if tid < 1 || line[tid-1] != ':' {
			continue
		}
		pid := digitsBack(tid - 1)
		if pid < 2 || line[pid-1] != ':' {
			continue
		}
		end := pid - 1
		h := end
		for h > 0 && end-h < 63 && (isLower(line[h-1]|0x20) || isDigit(line[h-1]) || line[h-1] == '.' || line[h-1] == '-') {
			h--
		}
		for h < end && !isLower(line[h]|0x20) {
			h++ // a host starts with a letter
		}
		if h < end && (h == 0 || isSpace(line[h-1]) || line[h-1] == ')' || line[h-1] == ']') {
			r.addHost(string(line[h:end]))
		}
	}
}

// learnDF learns the server of a network file system in df's output:
// "nfs-models:/export/models 1048576 ...". (By hand: the regular
// expression, anchored as it was, still read a long line at 10 MB/s.)
func (r *Redactor) learnDF(line []byte) {
	if len(line) == 0 || !isLower(line[0]|0x20) {
		return
	}
	k := 1
	for k < len(line) && (isLower(line[k]|0x20) || isDigit(line[k]) || line[k] == '.' || line[k] == '-') {
		k++
	}
	if k+1 >= len(line) || line[k] != ':' || line[k+1] != '/' {
		return
	}
	e := k + 2
	for e < len(line) && !isSpace(line[e]) {
		e++
	}
	if e < len(line) {
		r.addHost(string(line[:k]))
	}
}

// learnInternal learns names in an internal domain wherever they stand:
// a folder named rack7.corp, a log line naming head01.cluster.internal
// (lower is line lower-cased, where the domains are looked for). A name's
// scan backwards stops where the previous one ended, so a line of ".local"
// repeated stays linear.
func (r *Redactor) learnInternal(line, lower []byte) {
	for _, d := range internalDomains {
		prev := 0
		for off := 0; ; {
			k := bytes.Index(lower[off:], []byte(d))
			if k < 0 {
				break
			}
			dot := off + k
			end := dot + len(d)
			off = end
			if end < len(lower) && (isWordByte(lower[end]) || lower[end] == '-') {
				continue // .corporate, .lan-2
			}
			start := dot
			for start > prev && dot-start < 64 && (isWordByte(line[start-1]) || line[start-1] == '.' || line[start-1] == '-') {
				start--
			}
			prev = end
			if start < dot {
				r.addHost(string(line[start:end]))
			}
		}
	}
}

// internalDomains end the host names of a private network, which a URL
// gives away (a public host such as huggingface.co is not a secret).
var internalDomains = []string{".local", ".internal", ".lan", ".corp", ".intranet", ".home.arpa", ".cluster.local", ".svc"}

// learnURLs learns the user and the host of URLs to machines of a private
// network: scheme://[user[:pass]@]host where host is one label (gpu17,
// head-node) or ends in an internal domain. A hand scan: the regular
// expression it replaces ran at 3 MB/s on a line of "://".
func (r *Redactor) learnURLs(line []byte) {
	for off := 0; ; {
		k := bytes.Index(line[off:], []byte("://"))
		if k < 0 {
			return
		}
		at := off + k
		off = at + 3
		s := at
		for s > 0 && (isLower(line[s-1]) || isDigit(line[s-1]) || line[s-1] == '+' || line[s-1] == '.' || line[s-1] == '-') {
			s--
		}
		if s == at || !isLower(line[s]) || s > 0 && isWordByte(line[s-1]) {
			continue
		}
		p := at + 3
		// userinfo: [A-Za-z0-9_.-]+ (:[^@/\s]*)? @
		u := p
		for u < len(line) && u-p < 256 && (isWordByte(line[u]) || line[u] == '.' || line[u] == '-') {
			u++
		}
		user := ""
		if u > p {
			q := u
			if q < len(line) && line[q] == ':' {
				q++
				for q < len(line) && q-u < 256 && line[q] != '@' && line[q] != '/' && !isSpace(line[q]) {
					q++
				}
			}
			if q < len(line) && line[q] == '@' {
				user, p = string(line[p:u]), q+1
			}
		}
		h := p
		for h < len(line) && h-p < 255 && (isWordByte(line[h]) && line[h] != '_' || line[h] == '.' || line[h] == '-') {
			h++
		}
		host := line[p:h]
		term := h == len(line) || line[h] == ':' || line[h] == '/' || line[h] == '\'' || line[h] == '"' || isSpace(line[h])
		if len(host) == 0 || !isLower(host[0]|0x20) || !term {
			if user != "" {
				r.addUser(user)
			}
			continue
		}
		if user != "" {
			r.addUser(user)
		}
		if bytes.IndexByte(host, '.') < 0 || hasAnySuffix(bytes.ToLower(host), internalDomains) {
			r.addHost(string(host))
		}
	}
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

func (r *Redactor) addUser(u string) {
	u = strings.Trim(u, ".-")
	// A user name is at most 32 bytes (useradd); the bound keeps the
	// name trie shallow, and replacing linear.
	if len(u) < 3 || len(u) > 64 || systemUsers[u] || protectedNames[strings.ToLower(u)] || !userNameRE.MatchString(u) || isNumber(u) {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.frozen {
		r.users[u] = true
	}
}

func (r *Redactor) addHost(h string) {
	h = strings.Trim(h, ".-")
	// A host name is at most 253 bytes (RFC 1035).
	if len(h) < 3 || len(h) > 253 || protectedNames[strings.ToLower(h)] || !userNameRE.MatchString(h) || isNumber(h) {
		return
	}
	if _, err := netip.ParseAddr(h); err == nil {
		return
	}
	r.mu.Lock()
	if !r.frozen {
		r.hosts[h] = true
	}
	r.mu.Unlock()
	// A fully qualified name is also written short (gpu17 for gpu17.corp.example.com).
	if i := strings.IndexByte(h, '.'); i > 0 {
		r.addHost(h[:i])
	}
}

func isNumber(s string) bool {
	_, err := strconv.Atoi(s)
	return err == nil
}

// freeze gives every learned name its pseudonym, in sorted order so that
// the same bundle always gets the same pseudonyms.
func (r *Redactor) freeze() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.frozen {
		return
	}
	r.frozen = true
	var all []string
	for _, h := range sortedSet(r.hosts) {
		r.pseudo[h] = r.fitName("hostname", len(h), "host", "hst", "h")
		all = append(all, h)
	}
	for _, u := range sortedSet(r.users) {
		if _, ok := r.pseudo[u]; ok {
			continue // also a host name: one pseudonym
		}
		r.pseudo[u] = r.fitName("user", len(u), "user", "usr", "u")
		all = append(all, u)
	}
	for _, ip := range sortedSet(r.ips) {
		r.pseudo[ip] = r.ipPseudonym(ip)
	}
	// Longest first: an FQDN must win over its short name.
	sort.Slice(all, func(i, j int) bool {
		if len(all[i]) != len(all[j]) {
			return len(all[i]) > len(all[j])
		}
		return all[i] < all[j]
	})
	r.names = all
	r.trie = newTrie(all)
}

func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// fitName makes the next pseudonym of a kind exactly length bytes long:
// the longest prefix that fits, zeros, the number. A name too short to hold
// a unique pseudonym is masked instead.
func (r *Redactor) fitName(kind string, length int, prefixes ...string) string {
	r.next[kind]++
	num := strconv.Itoa(r.next[kind])
	for _, p := range prefixes {
		if len(p)+len(num) <= length {
			return p + strings.Repeat("0", length-len(p)-len(num)) + num
		}
	}
	return strings.Repeat(string(Mask), length)
}

// ipPseudonym returns a pseudonym of the same length and family: 10.0.0.1
// for IPv4 (digit counts chosen to fit), fd00::1 for IPv6.
func (r *Redactor) ipPseudonym(ip string) string {
	if strings.Contains(ip, ":") {
		r.next["ipv6"]++
		if s, ok := fitIPv6(r.next["ipv6"], len(ip)); ok {
			return s
		}
		return strings.Repeat(string(Mask), len(ip))
	}
	r.next["ipv4"]++
	if s, ok := fitIPv4(r.next["ipv4"], len(ip)); ok {
		return s
	}
	return strings.Repeat(string(Mask), len(ip))
}

// fitIPv4 writes the n-th pseudonym address with exactly length bytes.
func fitIPv4(n, length int) (string, bool) {
	digits := length - 3
	if digits < 4 || digits > 12 {
		return "", false
	}
	first := "10"
	switch {
	case digits-2 < 3:
		first = "0"
	case digits-2 > 9:
		first = "100"
	}
	rest := digits - len(first)
	d := [3]int{1, 1, 1}
	for i := 2; rest > 3; i-- {
		add := min(2, rest-3)
		d[i] += add
		rest -= add
		if i == 0 {
			break
		}
	}
	oct := [3]string{}
	v := n
	for i := 2; i >= 0; i-- {
		lo, span := 0, 10
		switch d[i] {
		case 2:
			lo, span = 10, 90
		case 3:
			lo, span = 100, 156
		}
		oct[i] = strconv.Itoa(lo + v%span)
		v /= span
	}
	if v > 0 {
		return "", false
	}
	return first + "." + oct[0] + "." + oct[1] + "." + oct[2], true
}

// fitIPv6 writes fd00:: followed by groups holding n in hex, exactly
// length bytes.
func fitIPv6(n, length int) (string, bool) {
	rest := length - len("fd00::")
	if rest < 1 {
		return "", false
	}
	k := (rest + 5) / 5 // groups, each at most 4 hex digits plus a colon
	hexCount := rest - (k - 1)
	if k > 6 || hexCount < k || hexCount > 4*k {
		return "", false
	}
	h := fmt.Sprintf("%0*x", hexCount, n)
	if len(h) > hexCount {
		return "", false
	}
	var b strings.Builder
	b.WriteString("fd00::")
	pos := 0
	for g := 0; g < k; g++ {
		size := hexCount / k
		if g < hexCount%k {
			size++
		}
		if g > 0 {
			b.WriteByte(':')
		}
		b.WriteString(h[pos : pos+size])
		pos += size
	}
	return b.String(), true
}

// replaceNames puts pseudonyms in place of learned names, where they
// stand as words (a name inside a longer word is another word): at each
// word start, the longest learned name that ends at a word's end. The trie
// walk from a start stops at the first byte no name continues with, so
// the cost is the line's length times at most the longest name's.
func (r *Redactor) replaceNames(b []byte, c Counts) {
	r.mu.Lock()
	t := r.trie
	r.mu.Unlock()
	if t == nil {
		return
	}
	for i := 0; i < len(b); i++ {
		if t.root[b[i]] == 0 || i > 0 && isWordByte(b[i-1]) {
			continue
		}
		name, end := t.longest(b, i)
		if name == "" {
			continue
		}
		r.mu.Lock()
		p := r.pseudo[name]
		isHost := r.hosts[name]
		r.mu.Unlock()
		if len(p) != len(name) {
			continue
		}
		copy(b[i:end], p)
		if isHost {
			c["hostname"]++
		} else {
			c["user"]++
		}
		i = end - 1
	}
}

// trie holds the learned names for replaceNames.
type trie struct {
	root  [256]int32 // the node after each first byte (0: none)
	nodes []trieNode // nodes[0] is unused
}

type trieNode struct {
	next map[byte]int32
	name string // a name ends here
}

func newTrie(names []string) *trie {
	t := &trie{nodes: make([]trieNode, 1)}
	for _, n := range names {
		if n == "" {
			continue
		}
		cur := t.root[n[0]]
		if cur == 0 {
			t.nodes = append(t.nodes, trieNode{})
			cur = int32(len(t.nodes) - 1)
			t.root[n[0]] = cur
		}
		for k := 1; k < len(n); k++ {
			nx := t.nodes[cur].next[n[k]]
			if nx == 0 {
				t.nodes = append(t.nodes, trieNode{})
				nx = int32(len(t.nodes) - 1)
				if t.nodes[cur].next == nil {
					t.nodes[cur].next = map[byte]int32{}
				}
				t.nodes[cur].next[n[k]] = nx
			}
			cur = nx
		}
		t.nodes[cur].name = n
	}
	return t
}

// longest returns the longest name that starts at b[i] and ends at a word
// boundary, and its end.
func (t *trie) longest(b []byte, i int) (string, int) {
	cur := t.root[b[i]]
	best, bestEnd := "", 0
	for k := i + 1; cur != 0; k++ {
		n := &t.nodes[cur]
		if n.name != "" && (k == len(b) || !isWordByte(b[k])) {
			best, bestEnd = n.name, k
		}
		if k == len(b) || n.next == nil {
			break
		}
		cur = n.next[b[k]]
	}
	return best, bestEnd
}

// emailLocal and emailDomain are the bytes of an address's two parts.
var (
	emailLocal  = setOf("a-z", "A-Z", "0-9", "._%+-")
	emailDomain = setOf("a-z", "A-Z", "0-9", ".-")
)

// replaceEmails puts a pseudonym in place of every e-mail address: the
// local part becomes mail1 (as long as it), the domain's labels x's and
// its top-level domain stays, the same address the same pseudonym.
// git@github.com and the like name a service's account, not a person.
func (r *Redactor) replaceEmails(b []byte, c Counts) {
	for at := bytes.IndexByte(b, '@'); at >= 0; {
		start := at
		for start > 0 && at-start < 64 && emailLocal[b[start-1]] {
			start--
		}
		end := at + 1
		for end < len(b) && end-at < 254 && emailDomain[b[end]] {
			end++
		}
		for end > at+1 && (b[end-1] == '.' || b[end-1] == '-') {
			end--
		}
		next := end
		if start < at && end > at+1 && validDomain(b[at+1:end]) && !systemUsers[string(b[start:at])] && string(b[start:at]) != "git" {
			addr := string(b[start:end])
			r.mu.Lock()
			p, ok := r.pseudo["email:"+addr]
			if !ok {
				p = r.emailPseudonym(at-start, b[at+1:end])
				r.pseudo["email:"+addr] = p
			}
			r.mu.Unlock()
			if len(p) == end-start {
				copy(b[start:end], p)
				c["email"]++
			}
		}
		if next <= at {
			next = at + 1
		}
		k := bytes.IndexByte(b[next:], '@')
		if k < 0 {
			break
		}
		at = next + k
	}
}

// validDomain reports a domain of at least two labels whose last is
// letters only: example.com, not 1.2 or gpu17.
func validDomain(d []byte) bool {
	dot := bytes.LastIndexByte(d, '.')
	if dot <= 0 || len(d)-dot-1 < 2 || d[0] == '.' || d[0] == '-' {
		return false
	}
	for _, ch := range d[dot+1:] {
		if !isLower(ch | 0x20) {
			return false
		}
	}
	return true
}

// emailPseudonym makes the next address pseudonym; the caller holds mu.
func (r *Redactor) emailPseudonym(local int, domain []byte) string {
	d := []byte(string(domain))
	tld := bytes.LastIndexByte(d, '.')
	for i := 0; i < tld; i++ {
		if d[i] != '.' {
			d[i] = 'x'
		}
	}
	return r.fitName("email", local, "mail", "m") + "@" + string(d)
}

func isWordByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// replaceIPs puts pseudonyms in place of IP addresses other than loopback
// and unspecified ones, giving a new address the next pseudonym.
func (r *Redactor) replaceIPs(b, lower []byte, c Counts) {
	forEachIP(b, lower, func(ip string, start, end int) {
		r.mu.Lock()
		p, ok := r.pseudo[ip]
		if !ok {
			p = r.ipPseudonym(ip)
			r.pseudo[ip] = p
		}
		r.mu.Unlock()
		if len(p) != end-start {
			return
		}
		copy(b[start:end], p)
		if strings.Contains(ip, ":") {
			c["ipv6"]++
		} else {
			c["ipv4"]++
		}
	})
}

// versionHints mark lines that list versions (collect_env's "cuDNN
// version: 9.1.0.70", its pip and conda package lists), not addresses.
var versionHints = []string{"version", "[conda]", "[pip"}

// forEachIP calls fn for every address in line that identifies a machine.
// Version strings that look like addresses (cuDNN 9.1.0.70, ==1.2.3.4) are
// not addresses.
func forEachIP(line, lower []byte, fn func(ip string, start, end int)) {
	if bytes.Count(line, []byte{'.'}) >= 3 && !hasAny(lowerInto(line, lower), versionHints) {
		for _, m := range findIPv4(line) {
			if !boundary(line, m[0], m[1], '.') {
				continue
			}
			if m[0] > 0 && (line[m[0]-1] == 'v' || line[m[0]-1] == 'V' || m[0] > 1 && string(line[m[0]-2:m[0]]) == "==") {
				continue
			}
			if m[1] < len(line) && (line[m[1]] == '+' || line[m[1]] == '-') {
				continue
			}
			a, err := netip.ParseAddr(string(line[m[0]:m[1]]))
			if err != nil || a.IsLoopback() || a.IsUnspecified() || a == netip.AddrFrom4([4]byte{255, 255, 255, 255}) {
				continue
			}
			fn(a.String(), m[0], m[1])
		}
	}
	// An address has "::" or all eight groups; a time stamp has neither.
	if bytes.Contains(line, []byte("::")) || bytes.Count(line, []byte{':'}) >= 7 {
		for _, m := range findIPv6(line) {
			s := string(line[m[0]:m[1]])
			if !boundary(line, m[0], m[1], ':') || (!strings.Contains(s, "::") && strings.Count(s, ":") != 7) {
				continue
			}
			a, err := netip.ParseAddr(s)
			if err != nil || !a.Is6() || a.IsLoopback() || a.IsUnspecified() || a.Is4In6() {
				continue
			}
			fn(s, m[0], m[1])
		}
	}
}

// lowerInto returns line lower-cased: lower itself when it holds it
// already (len(lower) == len(line)), else lower's storage reused.
func lowerInto(line, lower []byte) []byte {
	if len(lower) == len(line) {
		return lower
	}
	return asciiLower(lower[:0], line)
}

// findIPv6 finds what may be IPv6 addresses: runs of hex digits and
// colons with two to seven colons and groups of at most four digits. A
// hand scan, linear in the line (a regular expression ran at 3 MB/s on a
// line of colons).
func findIPv6(line []byte) [][2]int {
	var out [][2]int
	for i := 0; i < len(line); {
		if !hexColon[line[i]] {
			i++
			continue
		}
		j, colons, group, ok := i, 0, 0, true
		for j < len(line) && hexColon[line[j]] {
			if line[j] == ':' {
				colons++
				group = 0
			} else if group++; group > 4 {
				ok = false
			}
			j++
		}
		if ok && colons >= 2 && colons <= 7 {
			out = append(out, [2]int{i, j})
		}
		i = j
	}
	return out
}

var hexColon = setOf("0-9", "a-f", "A-F", ":")

// findIPv4 finds what looks like dotted quads: four runs of one to three
// digits joined by dots. A hand scan: a regular expression costs the most
// of the redaction of a log full of version numbers and floats.
func findIPv4(line []byte) [][2]int {
	var out [][2]int
	digits := func(i int) int {
		n := 0
		for i+n < len(line) && n < 4 && '0' <= line[i+n] && line[i+n] <= '9' {
			n++
		}
		return n
	}
	for i := 0; i < len(line); i++ {
		if line[i] < '0' || line[i] > '9' || i > 0 && '0' <= line[i-1] && line[i-1] <= '9' {
			continue
		}
		j, parts := i, 0
		for parts < 4 {
			n := digits(j)
			if n == 0 || n > 3 {
				break
			}
			j += n
			parts++
			if parts == 4 || j >= len(line) || line[j] != '.' {
				break
			}
			j++
		}
		if parts == 4 {
			out = append(out, [2]int{i, j})
			i = j - 1
		}
	}
	return out
}

// boundary reports whether line[start:end] stands alone: no letter, digit
// or sep on either side (a trailing sep that ends a sentence is fine).
func boundary(line []byte, start, end int, sep byte) bool {
	word := isWordByte
	if start > 0 && (word(line[start-1]) || line[start-1] == sep) {
		return false
	}
	if end < len(line) {
		c := line[end]
		if word(c) {
			return false
		}
		if c == sep && end+1 < len(line) && (word(line[end+1]) || line[end+1] == sep) {
			return false
		}
	}
	return true
}
