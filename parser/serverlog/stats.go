package serverlog

import (
	"bytes"
	"strconv"

	"github.com/coroner-dev/coroner/parser/facts"
)

// series returns the process's series of a type and stream, creating it.
func (p *parser) series(ps *procState, typ facts.EventType, stream []byte) *facts.Series {
	for _, s := range ps.series {
		if s.Type == typ && s.Stream == string(stream) {
			return s
		}
	}
	s := &facts.Series{Proc: ps.pl.Proc, Type: typ, Stream: string(stream)}
	ps.series = append(ps.series, s)
	p.log.Series = append(p.log.Series, s)
	return s
}

// statReader reads the items of stat lines into a sample, keys and values
// in the order printed. It keeps caches of key names and nothing else: its
// reading of a line depends on the line alone, so that the read-ahead
// goroutine can read with a reader of its own (see ahead.go).
type statReader struct {
	keys  []string // the sample being read
	vals  []float64
	kmask uint64 // the keys' numbers below 64
	memos [nMemo][]keyMemo
	// keyCache maps a domain byte, a '%' for a percentage, and the key as
	// printed to its name and number.
	keyCache map[string]internedKey
	ids      map[string]int
	nbuf     []byte
}

func newStatReader() statReader {
	return statReader{keyCache: map[string]internedKey{}, ids: map[string]int{}}
}

// resetKV starts a new sample.
func (r *statReader) resetKV() {
	r.keys = r.keys[:0]
	r.vals = r.vals[:0]
	r.kmask = 0
}

// put sets a value of the sample; a key printed twice keeps the last value,
// as a map would. id is the key's number (keyID): a key numbered below 64
// is found again by a bit test, not by comparing it with every other.
func (r *statReader) put(k string, id int, v float64) {
	if id >= 0 && id < 64 {
		if r.kmask&(1<<id) == 0 {
			r.kmask |= 1 << id
			r.keys = append(r.keys, k)
			r.vals = append(r.vals, v)
			return
		}
	}
	for i, x := range r.keys {
		if x == k {
			r.vals[i] = v
			return
		}
	}
	r.keys = append(r.keys, k)
	r.vals = append(r.vals, v)
}

// putc is put for a key named in the code.
func (r *statReader) putc(k string, v float64) { r.put(k, r.keyID(k), v) }

// keyID numbers a stat key name; -1 once maxKeyCache names are numbered.
func (r *statReader) keyID(k string) int {
	if id, ok := r.ids[k]; ok {
		return id
	}
	if len(r.ids) >= maxKeyCache {
		return -1
	}
	id := len(r.ids)
	r.ids[k] = id
	return id
}

// addSample adds the sample as one of the current line.
func (p *parser) addSample(ps *procState, typ facts.EventType, stream []byte) {
	p.addPairs(ps, typ, stream, p.keys, p.vals)
}

// addPrepared adds the read-ahead's sample as one of the current line.
func (p *parser) addPrepared(ps *procState, typ facts.EventType, stream []byte, pre *prepared) {
	p.addPairs(ps, typ, stream, pre.keys, pre.vals[:len(pre.keys)])
}

func (p *parser) addPairs(ps *procState, typ facts.EventType, stream []byte, keys []string, vals []float64) {
	if len(keys) == 0 {
		return
	}
	s := p.series(ps, typ, stream)
	s.AddPairs(facts.Source{File: p.in.Path, Line: p.lineNo}, p.t, keys, vals)
}

// internKey returns the normalized name of a stat key and its number;
// known keys are looked up without allocating.
func (r *statReader) internKey(domain byte, raw []byte, pct bool) (string, int) {
	r.nbuf = append(r.nbuf[:0], domain)
	if pct {
		r.nbuf = append(r.nbuf, '%')
	}
	r.nbuf = append(r.nbuf, raw...)
	if k, ok := r.keyCache[string(r.nbuf)]; ok {
		return k.name, k.id
	}
	k := statKey(domain, raw, pct)
	id := r.keyID(k)
	if len(r.keyCache) < maxKeyCache {
		r.keyCache[string(r.nbuf)] = internedKey{k, id}
	}
	return k, id
}

type internedKey struct {
	name string
	id   int
}

// Names of known stat keys; others are snake_cased as printed.
var sglangKeys = map[string]string{
	"#running-req":               "running_req",
	"#queue-req":                 "queue_req",
	"#token":                     "tokens",
	"token usage":                "token_usage",
	"gen throughput (token/s)":   "gen_throughput",
	"input throughput (token/s)": "input_throughput",
	"accept len":                 "accept_len",
	"accept rate":                "accept_rate",
	"cuda graph":                 "cuda_graph",
	"#new-seq":                   "new_seq",
	"#new-token":                 "new_token",
	"#cached-token":              "cached_token",
	"cache hit rate":             "cache_hit_rate_pct",
}

var vllmKeys = map[string]string{
	"Avg prompt throughput":          "prompt_throughput",
	"Avg generation throughput":      "gen_throughput",
	"Running":                        "running",
	"Waiting":                        "waiting",
	"Pending":                        "waiting", // V0's name for the waiting queue
	"Swapped":                        "swapped",
	"Deferred":                       "deferred",
	"Preemptions":                    "preemptions",
	"Corrupted":                      "corrupted",
	"GPU KV cache usage":             "kv_cache_usage_pct",
	"CPU KV cache usage":             "cpu_kv_cache_usage_pct",
	"Prefix cache hit rate":          "prefix_cache_hit_pct",
	"External prefix cache hit rate": "external_prefix_cache_hit_pct",
	"MM cache hit rate":              "mm_cache_hit_pct",
	// SpecDecoding metrics
	"Draft acceptance rate":        "acceptance_rate_pct",
	"Avg Draft acceptance rate":    "acceptance_rate_pct",
	"Mean acceptance length":       "mean_acceptance_length",
	"Accepted throughput":          "accepted_throughput",
	"Drafted throughput":           "drafted_throughput",
	"Accepted":                     "accepted_tokens",
	"Drafted":                      "draft_tokens",
	"Number of accepted tokens":    "accepted_tokens",
	"Number of draft tokens":       "draft_tokens",
	"Number of emitted tokens":     "emitted_tokens",
	"Number of speculative tokens": "speculative_tokens",
	"System efficiency":            "system_efficiency",
}

func statKey(domain byte, raw []byte, pct bool) string {
	tab := vllmKeys
	if domain == 's' {
		tab = sglangKeys
	}
	if k, ok := tab[string(raw)]; ok {
		return k
	}
	k := normKey(nil, raw)
	if len(k) == 0 {
		k = []byte("value")
	}
	if pct && !bytes.HasSuffix(k, []byte("pct")) {
		k = append(k, "_pct"...)
	}
	return string(k)
}

// statValue reads a stat value: a number with an optional unit or "%", or
// True/False.
func statValue(v []byte) (float64, bool, bool) {
	if len(v) > 0 && (v[0] == ' ' || v[len(v)-1] == ' ') {
		v = bytes.TrimSpace(v)
	}
	if x, n := parseNum(v); n > 0 {
		pct := n < len(v) && v[n] == '%'
		return x, pct, true
	}
	switch {
	case has(v, "True"):
		return 1, false, true
	case has(v, "False"):
		return 0, false, true
	}
	return 0, false, false
}

// eachItem calls fn for the ", "-separated items of a stat line, split at
// their first ": " into key and value (key is nil for an item without one).
// One pass over the bytes finds both separators: stat lines are most of a
// long log.
func eachItem(b []byte, fn func(pos int, key, val []byte)) { eachItemFrom(0, b, fn) }

// eachItemFrom is eachItem for the items of a line from the pos-th on.
func eachItemFrom(pos int, b []byte, fn func(pos int, key, val []byte)) {
	for len(b) > 0 {
		end, colon := len(b), -1
		for i := 0; i+1 < len(b); i++ {
			c := b[i]
			if c != ',' && c != ':' || b[i+1] != ' ' {
				continue
			}
			if c == ',' {
				end = i
				break
			}
			if colon < 0 {
				colon = i
			}
		}
		if colon >= 0 {
			fn(pos, b[:colon], b[colon+2:end])
		} else {
			fn(pos, nil, b[:end])
		}
		pos++
		if end+2 > len(b) {
			return
		}
		b = b[end+2:]
	}
}

// Memos of key names, one per kind of stat line, so that lines of
// different kinds interleaved do not evict each other's.
const (
	memoDecode = iota
	memoPrefill
	memoVLLM
	memoSpec
	nMemo
)

// keyMemo remembers the name of the stat key at one position of a line:
// lines of one format have their keys in the same places.
type keyMemo struct {
	domain byte
	pct    bool
	raw    []byte
	key    string
	id     int
}

// statName is internKey with a memo per position.
func (r *statReader) statName(memo, pos int, domain byte, raw []byte, pct bool) (string, int) {
	ms := &r.memos[memo]
	if pos < len(*ms) {
		m := &(*ms)[pos]
		if m.domain == domain && m.pct == pct && string(m.raw) == string(raw) {
			return m.key, m.id
		}
	}
	k, id := r.internKey(domain, raw, pct)
	if pos < 64 {
		for len(*ms) <= pos {
			*ms = append(*ms, keyMemo{})
		}
		m := &(*ms)[pos]
		m.domain, m.pct, m.key, m.id = domain, pct, k, id
		m.raw = append(m.raw[:0], raw...)
	}
	return k, id
}

// knownItems reads the items of a stat line while they have the keys that
// the memo's previous line had at the same positions, which is all of them
// in a long run of one format: an item then costs a comparison of its key
// and the reading of a number. It returns the position and the rest of the
// line at the first item that differs, for eachItemFrom, which gives the
// same result item by item: a memo key holds neither ", " nor ": ", so the
// item's first ": " follows it, and the value ends at the first ", ".
func (r *statReader) knownItems(memo int, domain byte, b []byte) (int, []byte) {
	ms := r.memos[memo]
	pos := 0
	for ; pos < len(ms) && len(b) > 0; pos++ {
		m := &ms[pos]
		k := len(m.raw)
		if k == 0 || m.domain != domain || len(b) < k+2 || b[k] != ':' || b[k+1] != ' ' || string(b[:k]) != string(m.raw) {
			break
		}
		val := b[k+2:]
		// The value ends at the first ", "; a plain number or percentage
		// followed by one (or by the end) is read without looking for it.
		v, n := parseNum(val)
		pct := n > 0 && n < len(val) && val[n] == '%'
		end := n
		if pct {
			end++
		}
		ok := n > 0
		switch {
		case n > 0 && end == len(val):
		case n > 0 && end+1 < len(val) && val[end] == ',' && val[end+1] == ' ':
		case n > 0:
			// A unit ("41.7 tokens/s"): the number read is the value's
			// unless the value ends in a space, which statValue trims.
			end += commaSpace(val[end:])
			if val[end-1] == ' ' {
				v, pct, ok = statValue(val[:end])
			}
		default:
			end = commaSpace(val)
			v, pct, ok = statValue(val[:end])
		}
		if ok {
			name, id := m.key, m.id
			if pct != m.pct {
				name, id = r.statName(memo, pos, domain, b[:k], pct)
			}
			r.put(name, id, v)
		}
		if end+2 > len(val) {
			return pos + 1, nil
		}
		b = val[end+2:]
	}
	return pos, b
}

// commaSpace returns the index of the first ", " in b, or len(b).
func commaSpace(b []byte) int {
	for from := 0; ; {
		k := bytes.IndexByte(b[from:], ',')
		if k < 0 {
			return len(b)
		}
		k += from
		if k+1 < len(b) && b[k+1] == ' ' {
			return k
		}
		from = k + 1
	}
}

// statLine reads a stat line of a header the parser knows, as table would:
// SGLang's batch lines, vLLM's throughput and speculative-decoding metrics.
// It returns false for any other line.
func (p *parser) statLine(ps *procState, b []byte) bool {
	if len(b) < len("Decode batch") {
		return false
	}
	switch b[0] {
	case 'D':
		return has(b, "Decode batch") && p.statSGLang(ps, facts.EventStatDecode, b[len("Decode batch"):])
	case 'P':
		return has(b, "Prefill batch") && p.statSGLang(ps, facts.EventStatPrefill, b[len("Prefill batch"):])
	case 'E':
		k := bytes.Index(b[:min(len(b), 42)], []byte(": "))
		if k <= 0 || !has(b, "Engine ") || !has(b[k+2:], "Avg prompt throughput") {
			return false
		}
		p.statVLLM(ps, facts.EventStatThroughput, b[:k], b[k+2:])
		return true
	case 'A':
		if has(b, "Avg prompt throughput:") {
			p.statVLLM(ps, facts.EventStatThroughput, nil, b)
			return true
		}
	case 'S':
		if has(b, "SpecDecoding metrics:") || has(b, "Speculative metrics:") {
			p.statSpec(ps, b)
			return true
		}
	}
	return false
}

// statSGLang reads the rest of an SGLang "Prefill batch"/"Decode batch" line
// into a sample of the line's process.
func (p *parser) statSGLang(ps *procState, typ facts.EventType, rest []byte) bool {
	if pre := p.prepared(preSGLang, typ, rest); pre != nil {
		if !pre.ok {
			return false
		}
		p.addPrepared(ps, typ, nil, pre)
		return true
	}
	if !p.readSGLang(typ, rest) {
		return false
	}
	p.addSample(ps, typ, nil)
	return true
}

// readSGLang reads the rest of an SGLang "Prefill batch"/"Decode batch" line
// of any punctuation era: ". #running-req: 1, ...", ", #running-req: ...",
// " [12], #running-req: ...", with or without a trailing ", " or a
// "timestamp:" item. It reports whether the sample has a value.
func (r *statReader) readSGLang(typ facts.EventType, rest []byte) bool {
	r.resetKV()
	if len(rest) > 2 && rest[0] == ' ' && rest[1] == '[' {
		if e := bytes.IndexByte(rest, ']'); e > 0 {
			if v, n := parseNum(rest[2:e]); n > 0 {
				r.putc("iter", v)
			}
			rest = rest[e+1:]
		}
	}
	if len(rest) < 2 || (rest[0] != '.' && rest[0] != ',') || rest[1] != ' ' {
		return false
	}
	rest = rest[2:]
	memo := memoPrefill
	if typ == facts.EventStatDecode {
		memo = memoDecode
	}
	pos, rest := r.knownItems(memo, 's', rest)
	eachItemFrom(pos, rest, func(pos int, key, val []byte) {
		if len(key) == 0 || string(key) == "timestamp" {
			return
		}
		v, pct, ok := statValue(val)
		if !ok {
			return
		}
		k, id := r.statName(memo, pos, 's', key, pct)
		r.put(k, id, v)
	})
	return len(r.keys) > 0
}

// statVLLM reads "Avg prompt throughput: 0.0 tokens/s, Avg generation
// throughput: 41.7 tokens/s, Running: 1 reqs, ..." of every era. head is the
// "Engine 000" prefix, if any: engines other than 000 get their own stream.
func (p *parser) statVLLM(ps *procState, typ facts.EventType, head, rest []byte) {
	var stream []byte
	if head != nil && !bytes.Equal(head, []byte("Engine 000")) {
		stream = head
		if bytes.HasSuffix(head, []byte("Engines Aggregated")) || bytes.HasSuffix(head, []byte(" Engines")) {
			stream = []byte("aggregated")
		}
	}
	if pre := p.prepared(preVLLM, typ, rest); pre != nil {
		p.addPrepared(ps, typ, stream, pre)
		return
	}
	p.readVLLM(rest)
	p.addSample(ps, typ, stream)
}

func (r *statReader) readVLLM(rest []byte) {
	r.resetKV()
	rest = bytes.TrimRight(rest, ". ")
	pos, rest := r.knownItems(memoVLLM, 'v', rest)
	eachItemFrom(pos, rest, func(pos int, key, val []byte) {
		if len(key) == 0 {
			return
		}
		v, pct, ok := statValue(val)
		if !ok {
			return
		}
		k, id := r.statName(memoVLLM, pos, 'v', key, pct)
		r.put(k, id, v)
	})
}

// prefixCacheV0 reads V0's separate "Prefix cache hit rate: GPU: 0.00%,
// CPU: 90.00%" line into its own stream.
func (p *parser) prefixCacheV0(ps *procState, b []byte) {
	p.resetKV()
	if v, ok := numAfter(b, "GPU:"); ok {
		p.putc("gpu_prefix_cache_hit_pct", v)
	}
	if v, ok := numAfter(b, "CPU:"); ok {
		p.putc("cpu_prefix_cache_hit_pct", v)
	}
	p.addSample(ps, facts.EventStatThroughput, []byte("prefix-cache"))
}

var posKeys = func() []string {
	k := make([]string, 16)
	for i := range k {
		k[i] = "acceptance_pos_" + strconv.Itoa(i)
	}
	return k
}()

// statSpec reads the speculative decoding line of every era: V0's
// "Speculative metrics: Draft acceptance rate: 0.520, ...", V1's
// "SpecDecoding metrics: Draft acceptance rate: 88.8%, Mean acceptance
// length: 5.44, ..., Per-position acceptance rate: 0.983, 0.949, ...".
// Acceptance rates printed as a fraction are stored as percent.
func (p *parser) statSpec(ps *procState, b []byte) {
	if pre := p.prepared(preSpec, facts.EventStatSpecDecode, b); pre != nil {
		p.addPrepared(ps, facts.EventStatSpecDecode, nil, pre)
		return
	}
	p.readSpec(b)
	p.addSample(ps, facts.EventStatSpecDecode, nil)
}

func (r *statReader) readSpec(b []byte) {
	r.resetKV()
	c := bytes.Index(b, []byte(": "))
	rest := bytes.TrimRight(b[c+2:], ". ")
	pos := -1
	eachItem(rest, func(at int, key, val []byte) {
		if len(key) == 0 {
			// more values of "Per-position acceptance rate"
			if pos >= 0 && pos < len(posKeys) {
				if v, n := parseNum(bytes.TrimSpace(val)); n > 0 {
					r.putc(posKeys[pos], v)
					pos++
				}
			}
			return
		}
		if string(key) == "Per-position acceptance rate" {
			pos = 0
			if v, n := parseNum(bytes.TrimSpace(val)); n > 0 {
				r.putc(posKeys[0], v)
				pos = 1
			}
			return
		}
		pos = -1
		v, pct, ok := statValue(val)
		if !ok {
			return
		}
		name, id := r.statName(memoSpec, at, 'v', key, pct)
		if name == "acceptance_rate_pct" && !pct {
			v *= 100
		}
		r.put(name, id, v)
	})
}
