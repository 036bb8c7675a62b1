package serverlog

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/coroner-dev/coroner/parser/facts"
)

func (p *parser) newProc(pr facts.Proc) *procState {
	ps := &procState{pl: &facts.ProcLog{Proc: pr}}
	p.byName[pr.Key()] = ps
	p.log.Procs = append(p.log.Procs, ps.pl)
	if pr.Rank.TP == 0 && pr.Rank.DP <= 0 && pr.Rank.PP <= 0 && p.rank0 == nil {
		p.rank0 = ps
	}
	return ps
}

// procFor returns the process that wrote a line. The lookup by the tag's
// bytes does not allocate; a new tag is parsed once.
func (p *parser) procFor(l *line) *procState {
	var kind byte
	switch {
	case l.ranks != nil:
		kind = 's'
	case l.tag != nil:
		kind = 't'
	default:
		return p.main
	}
	// Runs of lines of one process are the rule.
	lp := &p.lastProc
	if lp.ps != nil && (l.ranks != nil) == lp.hasRanks && (l.tag != nil) == lp.hasTag && bytes.Equal(l.ranks, lp.ranks) && bytes.Equal(l.tag, lp.tag) {
		return lp.ps
	}
	ps := p.lookupProc(kind, l)
	lp.ps, lp.hasRanks, lp.hasTag = ps, l.ranks != nil, l.tag != nil
	lp.ranks = append(lp.ranks[:0], l.ranks...)
	lp.tag = append(lp.tag[:0], l.tag...)
	return ps
}

// lastProc remembers the process of the last tagged line.
type lastProc struct {
	ps               *procState
	ranks, tag       []byte
	hasRanks, hasTag bool
}

func (p *parser) lookupProc(kind byte, l *line) *procState {
	p.kbuf = append(p.kbuf[:0], kind)
	if kind == 's' {
		p.kbuf = append(p.kbuf, l.ranks...)
		if l.tag != nil {
			p.kbuf = append(p.kbuf, '|')
			p.kbuf = append(p.kbuf, l.tag...)
		}
	} else {
		p.kbuf = append(p.kbuf, l.tag...)
	}
	if ps, ok := p.procs[string(p.kbuf)]; ok {
		return ps
	}
	if len(p.procs) >= maxProcs {
		if !p.overflow {
			p.overflow = true
			p.in.Issuef(facts.IssueMalformed, "more than %d distinct process tags: the rest are counted as the main process", maxProcs)
		}
		return p.main
	}
	var pr facts.Proc
	if kind == 's' {
		pr = rankProc(l.ranks)
		if l.tag != nil {
			if _, _, ip := splitTag(l.tag); len(ip) > 0 {
				pr.Host = string(ip)
			}
		}
	} else {
		pr = tagProc(l.tag)
	}
	pr.Name = strings.ToValidUTF8(pr.Name, "\uFFFD")
	pr.Host = strings.ToValidUTF8(pr.Host, "\uFFFD")
	ps := p.byName[pr.Key()]
	if ps == nil {
		ps = p.newProc(pr)
	}
	p.procs[string(p.kbuf)] = ps
	return ps
}

// rankProc builds the process of an SGLang rank tag ("DP1 TP3", "gpu=0").
func rankProc(ranks []byte) facts.Proc {
	pr := facts.Proc{Name: string(ranks), Rank: facts.NoRank}
	for _, f := range bytes.Fields(ranks) {
		setRank(&pr.Rank, f)
	}
	if bytes.HasPrefix(ranks, []byte("gpu=")) {
		if v, err := strconv.Atoi(string(ranks[4:])); err == nil {
			pr.Rank.TP = v
		}
	}
	return pr
}

// setRank reads one "TP3"-like token.
func setRank(r *facts.Rank, f []byte) {
	i := len(f)
	for i > 0 && isDigit(f[i-1]) {
		i--
	}
	if i == len(f) || len(f)-i > 6 {
		return
	}
	v, _ := strconv.Atoi(string(f[i:]))
	switch string(f[:i]) {
	case "DP":
		r.DP = v
	case "PP":
		r.PP = v
	case "ATTN_CP", "CP", "PCP":
		r.CP = v
	case "MOE_DP":
		r.MoeDP = v
	case "TP":
		r.TP = v
	case "EP":
		r.EP = v
	}
}

// splitTag splits "Name[ qual] pid=N[, ip=X]".
func splitTag(tag []byte) (name []byte, pid int, ip []byte) {
	k := bytes.Index(tag, []byte("pid="))
	if k < 0 {
		return tag, 0, nil
	}
	name = bytes.TrimSpace(tag[:k])
	j := k + 4
	for j < len(tag) && isDigit(tag[j]) {
		pid = pid*10 + int(tag[j]-'0')
		j++
	}
	if i := bytes.Index(tag[j:], []byte("ip=")); i >= 0 {
		ip = bytes.TrimSpace(tag[j+i+3:])
	}
	return name, pid, ip
}

// tagProc builds the process of a vLLM or Ray tag.
func tagProc(tag []byte) facts.Proc {
	name, pid, ip := splitTag(tag)
	pr := facts.Proc{PID: pid, Rank: facts.NoRank}
	n := string(name)
	if sp := bytes.IndexByte(name, ' '); sp > 0 {
		// "VllmWorker rank=2", "VllmWorker TP0".
		base, q := name[:sp], bytes.TrimSpace(name[sp+1:])
		if bytes.HasPrefix(q, []byte("rank=")) {
			if v, err := strconv.Atoi(string(q[5:])); err == nil {
				// rank= is the worker's global rank: the TP rank when PP=1.
				pr.Rank.TP = v
			}
			q = append([]byte("rank"), q[5:]...)
		} else {
			setRank(&pr.Rank, q)
		}
		n = string(base) + "_" + string(q)
	} else {
		for _, f := range bytes.Split(name, []byte("_")) {
			setRank(&pr.Rank, f)
		}
		if r, ok := bytes.CutPrefix(name, []byte("rank")); ok {
			// "[rank3]:": the global rank, the TP rank when PP=1.
			if v, err := strconv.Atoi(string(r)); err == nil {
				pr.Rank.TP = v
			}
		}
		if bytes.HasPrefix(name, []byte("EngineCore_")) {
			if v, err := strconv.Atoi(string(name[len("EngineCore_"):])); err == nil {
				pr.Rank.DP = v
			}
		}
	}
	keepPID := len(name) == 0 || len(ip) > 0 ||
		bytes.Equal(name, []byte("VllmWorkerProcess")) || bytes.Equal(name, []byte("RayWorkerWrapper"))
	if keepPID {
		if n == "" {
			n = "pid"
		}
		n += "_" + strconv.Itoa(pid)
		if len(ip) > 0 {
			n += "@" + string(ip)
		}
	}
	if len(ip) > 0 {
		pr.Host = string(ip)
	}
	pr.Name = n
	return pr
}
