package nvsmi

import (
	"bytes"
	"regexp"
	"strings"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/textio"
)

var (
	gpuLabelRe  = regexp.MustCompile(`^GPU\d+$`)
	linkRe      = regexp.MustCompile(`^(X|NV\d+|PIX|PXB|PHB|NODE|SYS|SOC)$`)
	p2pRe       = regexp.MustCompile(`^(X|OK|CNS|GNS|TNS|NS|DR|U)$`)
	spacesRe    = regexp.MustCompile(`\s{2,}`)
	nicLegendRe = regexp.MustCompile(`^\s*(NIC\d+)\s*:\s*(\S+)`)
)

// topoParser reads `nvidia-smi topo -m`: a matrix whose header row names the
// GPUs, then the NICs, then affinity columns; one row per GPU and NIC; then
// the legend and, on newer drivers, a NIC legend naming the NIC devices.
// Cells are separated by tabs (runs of blanks when a paste lost them), and
// the header is underlined with ANSI codes, which are removed.
type topoParser struct {
	in  *textio.Input
	r   *rep
	out *facts.Facts

	t         *facts.Topology
	devs      []string // GPU and NIC labels in header order
	isGPU     []bool
	aff       []string // affinity column names
	seen      []bool   // GPU rows read
	legend    bool
	p2p       bool // values of a -p2p matrix, not -m
	sawHeader bool
	unknown   int
}

func parseTopo(in *textio.Input, out *facts.Facts) {
	p := &topoParser{in: in, r: &rep{in: in}, out: out}
	for in.Scan() {
		l := in.Bytes()
		if bytes.IndexByte(l, 0x1b) >= 0 {
			l = ansiRe.ReplaceAll(l, nil)
		}
		p.line(trimRight(l))
	}
	p.finish()
	if !p.sawHeader {
		p.r.at(in.Line(), facts.IssueMalformed, "no topology matrix header (a row starting with GPU0)")
	}
	p.r.done()
}

func cellsOf(l []byte) []string {
	var parts []string
	if bytes.IndexByte(l, '\t') >= 0 {
		parts = strings.Split(string(l), "\t")
	} else {
		parts = spacesRe.Split(strings.TrimSpace(string(l)), -1)
	}
	out := parts[:0]
	for _, x := range parts {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

func (p *topoParser) line(l []byte) {
	t := bytes.TrimSpace(l)
	if len(t) == 0 {
		return
	}
	if bytes.HasPrefix(t, []byte("Legend:")) || bytes.HasPrefix(t, []byte("NIC Legend:")) {
		p.legend = true
		return
	}
	if p.legend {
		if m := nicLegendRe.FindSubmatch(l); m != nil && p.t != nil {
			for k, n := range p.t.NICs {
				if n == string(m[1]) {
					p.t.NICDevices[k] = string(m[2])
				}
			}
		}
		return
	}
	if (l[0] == ' ' || l[0] == '\t') && bytes.HasPrefix(t, []byte("GPU0")) {
		p.header(cellsOf(l))
		return
	}
	if p.t == nil {
		p.r.here(facts.IssueMalformed, "line before the topology matrix header: %s", describe(t))
		return
	}
	cells := cellsOf(l)
	label := cells[0]
	row := -1
	for i, d := range p.devs {
		if d == label {
			row = i
		}
	}
	if row < 0 {
		p.r.here(facts.IssueMalformed, "topology row %q names no column of the header", label)
		return
	}
	if !p.isGPU[row] {
		return // NIC rows repeat what the GPU rows say
	}
	vals := cells[1:]
	if len(vals) < len(p.devs) {
		p.r.here(facts.IssueMalformed, "topology row %s has %d links, the header names %d devices", label, len(vals), len(p.devs))
	}
	gi := p.gpuIndex(row)
	nic := 0
	for j := 0; j < len(p.devs) && j < len(vals); j++ {
		v := vals[j]
		if !linkRe.MatchString(v) {
			if p2pRe.MatchString(v) {
				p.p2p = true
			} else if p.unknown < 10 {
				p.unknown++
				p.r.here(facts.IssueMalformed, "topology link %q between %s and %s is none of X, NV#, PIX, PXB, PHB, NODE, SYS", v, label, p.devs[j])
			}
		}
		if p.isGPU[j] {
			p.t.Links[gi][p.gpuIndex(j)] = v
		} else {
			p.t.NICLinks[gi][nic] = v
			nic++
		}
	}
	p.seen[gi] = true
	if rest := vals[min(len(p.devs), len(vals)):]; len(p.aff) > 0 && len(rest) == len(p.aff) {
		for k, name := range p.aff {
			switch name {
			case "CPU Affinity":
				p.t.CPUAffinity[gi] = rest[k]
			case "NUMA Affinity":
				p.t.NUMAAffinity[gi] = rest[k]
			}
		}
	}
}

func (p *topoParser) gpuIndex(dev int) int {
	n := 0
	for i := 0; i < dev; i++ {
		if p.isGPU[i] {
			n++
		}
	}
	return n
}

func (p *topoParser) header(cells []string) {
	p.finish()
	t := &facts.Topology{Src: p.in.Src()}
	p.devs, p.isGPU, p.aff = nil, nil, nil
	for _, c := range cells {
		switch {
		case gpuLabelRe.MatchString(c):
			t.GPUs = append(t.GPUs, c)
			p.devs = append(p.devs, c)
			p.isGPU = append(p.isGPU, true)
		case strings.Contains(c, "Affinity") || strings.Contains(c, "NUMA"):
			p.aff = append(p.aff, c)
		default:
			t.NICs = append(t.NICs, c)
			p.devs = append(p.devs, c)
			p.isGPU = append(p.isGPU, false)
		}
	}
	n := len(t.GPUs)
	t.Links = make([][]string, n)
	for i := range t.Links {
		t.Links[i] = make([]string, n)
	}
	if len(t.NICs) > 0 {
		t.NICLinks = make([][]string, n)
		for i := range t.NICLinks {
			t.NICLinks[i] = make([]string, len(t.NICs))
		}
		t.NICDevices = make([]string, len(t.NICs))
		for k, nic := range t.NICs {
			if !strings.HasPrefix(nic, "NIC") {
				// Older drivers label the columns with the device itself.
				t.NICDevices[k] = nic
			}
		}
	}
	for _, a := range p.aff {
		switch a {
		case "CPU Affinity":
			t.CPUAffinity = make([]string, n)
		case "NUMA Affinity":
			t.NUMAAffinity = make([]string, n)
		}
	}
	p.t = t
	p.sawHeader = true
	p.seen = make([]bool, n)
	p.legend, p.p2p = false, false
}

func (p *topoParser) finish() {
	if p.t == nil {
		return
	}
	if p.p2p {
		p.r.at(p.t.Src.Line, facts.IssueUnrecognized, "a topo -p2p capability matrix (OK, NS ...), not the link matrix of topo -m: not read")
		p.t = nil
		return
	}
	for i, ok := range p.seen {
		if !ok {
			p.r.at(p.in.Line(), facts.IssueIncomplete, "topology matrix lacks the row of %s", p.t.GPUs[i])
		}
	}
	p.out.Topo = append(p.out.Topo, p.t)
}

var listLineRe = regexp.MustCompile(`^GPU (\d+): (.*?)(?: \(UUID: ([^)]*)\))?$`)
var migLineRe = regexp.MustCompile(`^\s+MIG .*Device\s+\d+:`)

// parseList reads `nvidia-smi -L`: "GPU 0: NVIDIA H200 (UUID: GPU-...)",
// with indented MIG device lines under a GPU in MIG mode (skipped: they are
// not GPUs).
func parseList(in *textio.Input, out *facts.Facts) {
	r := &rep{in: in}
	var errs *facts.GPUSnapshot
	for in.Scan() {
		l := trimRight(in.Bytes())
		if len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		if m := listLineRe.FindSubmatch(l); m != nil {
			n, ok := atoi(m[1])
			if !ok {
				r.here(facts.IssueMalformed, "GPU index %q is not a number", m[1])
				continue
			}
			e := &facts.GPUListEntry{Src: in.Src(), Index: n, Name: string(m[2]), UUID: string(m[3])}
			e.Arch, e.CC, _ = Capability(e.Name)
			out.GPUList = append(out.GPUList, e)
			continue
		}
		if migLineRe.Match(l) {
			continue
		}
		if _, ok := errorLine(l); ok {
			if errs == nil {
				errs = &facts.GPUSnapshot{Src: in.Src(), Format: facts.KindNvidiaSMIList}
				out.GPUs = append(out.GPUs, errs)
			}
			addError(errs, in.Src(), l)
			continue
		}
		r.here(facts.IssueMalformed, "not a GPU line of nvidia-smi -L: %s", describe(l))
	}
	r.done()
}
