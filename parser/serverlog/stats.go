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

// resetKV starts a new sample.
func (p *parser) resetKV() {
	p.keys = p.keys[:0]
	p.vals = p.vals[:0]
}

// put sets a value of the sample; a key printed twice keeps the last value,
// as a map would.
func (p *parser) put(k string, v float64) {
	for i, x := range p.keys {
		if x == k {
			p.vals[i] = v
			return
		}
	}
	p.keys = append(p.keys, k)
	p.vals = append(p.vals, v)
}

// addSample adds the sample as one of the current line.
func (p *parser) addSample(ps *procState, typ facts.EventType, stream []byte) {
	if len(p.keys) == 0 {
		return
	}
	s := p.series(ps, typ, stream)
	s.AddPairs(facts.Source{File: p.in.Path, Line: p.lineNo}, p.t, p.keys, p.vals)
}

// internKey returns the normalized name of a stat key; known keys are
// looked up without allocating.
func (p *parser) internKey(domain byte, raw []byte, pct bool) string {
	p.kbuf = append(p.kbuf[:0], domain)
	if pct {
		p.kbuf = append(p.kbuf, '%')
	}
	p.kbuf = append(p.kbuf, raw...)
	if k, ok := p.keyCache[string(p.kbuf)]; ok {
		return k
	}
	k := statKey(domain, raw, pct)
	if len(p.keyCache) < maxKeyCache {
		p.keyCache[string(p.kbuf)] = k
	}
	return k
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
// One pass over the bytes: stat lines are most of a long log.
func eachItem(b []byte, fn func(pos int, key, val []byte)) {
	pos := 0
	for len(b) > 0 {
		// the item ends at the next ", "
		end := len(b)
		for from := 0; ; {
			k := bytes.IndexByte(b[from:], ',')
			if k < 0 {
				break
			}
			k += from
			if k+1 < len(b) && b[k+1] == ' ' {
				end = k
				break
			}
			from = k + 1
		}
		item := b[:end]
		colon := -1
		for from := 0; ; {
			k := bytes.IndexByte(item[from:], ':')
			if k < 0 {
				break
			}
			k += from
			if k+1 < len(item) && item[k+1] == ' ' {
				colon = k
				break
			}
			from = k + 1
		}
		if colon >= 0 {
			fn(pos, item[:colon], item[colon+2:])
		} else {
			fn(pos, nil, item)
		}
		pos++
		if end+2 > len(b) {
			return
		}
		b = b[end+2:]
	}
}

// keyMemo remembers the name of the stat key at one position of a line:
// lines of one format have their keys in the same places.
type keyMemo struct {
	domain byte
	pct    bool
	raw    []byte
	key    string
}

// statName is internKey with a memo per position.
func (p *parser) statName(pos int, domain byte, raw []byte, pct bool) string {
	if pos < len(p.memo) {
		m := &p.memo[pos]
		if m.domain == domain && m.pct == pct && string(m.raw) == string(raw) {
			return m.key
		}
	}
	k := p.internKey(domain, raw, pct)
	if pos < 64 {
		for len(p.memo) <= pos {
			p.memo = append(p.memo, keyMemo{})
		}
		m := &p.memo[pos]
		m.domain, m.pct, m.key = domain, pct, k
		m.raw = append(m.raw[:0], raw...)
	}
	return k
}

// statSGLang reads the rest of an SGLang "Prefill batch"/"Decode batch" line
// of any punctuation era: ". #running-req: 1, ...", ", #running-req: ...",
// " [12], #running-req: ...", with or without a trailing ", " or a
// "timestamp:" item.
func (p *parser) statSGLang(ps *procState, typ facts.EventType, rest []byte) bool {
	p.resetKV()
	if len(rest) > 2 && rest[0] == ' ' && rest[1] == '[' {
		if e := bytes.IndexByte(rest, ']'); e > 0 {
			if v, n := parseNum(rest[2:e]); n > 0 {
				p.put("iter", v)
			}
			rest = rest[e+1:]
		}
	}
	if len(rest) < 2 || (rest[0] != '.' && rest[0] != ',') || rest[1] != ' ' {
		return false
	}
	rest = rest[2:]
	eachItem(rest, func(pos int, key, val []byte) {
		if len(key) == 0 || string(key) == "timestamp" {
			return
		}
		v, pct, ok := statValue(val)
		if !ok {
			return
		}
		p.put(p.statName(pos, 's', key, pct), v)
	})
	if len(p.keys) == 0 {
		return false
	}
	p.addSample(ps, typ, nil)
	return true
}

// statVLLM reads "Avg prompt throughput: 0.0 tokens/s, Avg generation
// throughput: 41.7 tokens/s, Running: 1 reqs, ..." of every era. head is the
// "Engine 000" prefix, if any: engines other than 000 get their own stream.
func (p *parser) statVLLM(ps *procState, typ facts.EventType, head, rest []byte) {
	p.resetKV()
	rest = bytes.TrimRight(rest, ". ")
	eachItem(rest, func(pos int, key, val []byte) {
		if len(key) == 0 {
			return
		}
		v, pct, ok := statValue(val)
		if !ok {
			return
		}
		p.put(p.statName(pos, 'v', key, pct), v)
	})
	var stream []byte
	if head != nil && !bytes.Equal(head, []byte("Engine 000")) {
		stream = head
		if bytes.HasSuffix(head, []byte("Engines Aggregated")) || bytes.HasSuffix(head, []byte(" Engines")) {
			stream = []byte("aggregated")
		}
	}
	p.addSample(ps, typ, stream)
}

// prefixCacheV0 reads V0's separate "Prefix cache hit rate: GPU: 0.00%,
// CPU: 90.00%" line into its own stream.
func (p *parser) prefixCacheV0(ps *procState, b []byte) {
	p.resetKV()
	if v, ok := numAfter(b, "GPU:"); ok {
		p.put("gpu_prefix_cache_hit_pct", v)
	}
	if v, ok := numAfter(b, "CPU:"); ok {
		p.put("cpu_prefix_cache_hit_pct", v)
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
	p.resetKV()
	c := bytes.Index(b, []byte(": "))
	rest := bytes.TrimRight(b[c+2:], ". ")
	pos := -1
	eachItem(rest, func(at int, key, val []byte) {
		if len(key) == 0 {
			// more values of "Per-position acceptance rate"
			if pos >= 0 && pos < len(posKeys) {
				if v, n := parseNum(bytes.TrimSpace(val)); n > 0 {
					p.put(posKeys[pos], v)
					pos++
				}
			}
			return
		}
		if string(key) == "Per-position acceptance rate" {
			pos = 0
			if v, n := parseNum(bytes.TrimSpace(val)); n > 0 {
				p.put(posKeys[0], v)
				pos = 1
			}
			return
		}
		pos = -1
		v, pct, ok := statValue(val)
		if !ok {
			return
		}
		name := p.statName(at, 'v', key, pct)
		if name == "acceptance_rate_pct" && !pct {
			v *= 100
		}
		p.put(name, v)
	})
	p.addSample(ps, facts.EventStatSpecDecode, nil)
}
