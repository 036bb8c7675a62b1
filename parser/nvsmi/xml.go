package nvsmi

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"strings"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/textio"
)

// xmlFields maps element paths below <gpu> to fields. The DTD version does
// not say which names a dump uses (v12 spans R525 to R570), so every known
// name of a fact is listed and whichever is present is read (research §1b).
var xmlFields = map[string]spec{
	"product_name":                    {f: fName},
	"product_architecture":            {f: fArch},
	"uuid":                            {f: fUUID},
	"pci/pci_bus_id":                  {f: fBusID},
	"persistence_mode":                {f: fPersist},
	"mig_mode/current_mig":            {f: fMIG},
	"compute_mode":                    {f: fComputeMode},
	"compute_cap":                     {f: fCC},
	"gpu_reset_status/reset_required": {f: fReset},
	"gpu_reset_status/drain_and_reset_recommended":                             {f: fDrain},
	"gpu_recovery_action":                                                      {f: fRecovery},
	"pci/pci_gpu_link_info/pcie_gen/max_link_gen":                              {f: fGenMax},
	"pci/pci_gpu_link_info/pcie_gen/current_link_gen":                          {f: fGenCur},
	"pci/pci_gpu_link_info/link_widths/max_link_width":                         {f: fWidthMax},
	"pci/pci_gpu_link_info/link_widths/current_link_width":                     {f: fWidthCur},
	"pci/replay_counter":                                                       {f: fReplays},
	"performance_state":                                                        {f: fPState},
	"fb_memory_usage/total":                                                    {f: fMemTotal},
	"fb_memory_usage/used":                                                     {f: fMemUsed},
	"utilization/gpu_util":                                                     {f: fUtilGPU},
	"utilization/memory_util":                                                  {f: fUtilMem},
	"retired_pages/pending_blacklist":                                          {f: fRetiredPending},
	"retired_pages/pending_retirement":                                         {f: fRetiredPending},
	"retired_pages/double_bit_retirement/retired_count":                        {f: fRetiredDBE},
	"remapped_rows/remapped_row_unc":                                           {f: fRemapUncorr},
	"remapped_rows/remapped_row_pending":                                       {f: fRemapPending},
	"remapped_rows/remapped_row_failure":                                       {f: fRemapFailure},
	"temperature/gpu_temp":                                                     {f: fTemp},
	"power_readings/power_draw":                                                {f: fPowerDraw},
	"power_readings/average_power_draw":                                        {f: fPowerDraw},
	"power_readings/instant_power_draw":                                        {f: fPowerInst},
	"power_readings/enforced_power_limit":                                      {f: fLimitEnforced},
	"power_readings/current_power_limit":                                       {f: fLimitEnforced},
	"power_readings/power_limit":                                               {f: fLimit},
	"gpu_power_readings/power_draw":                                            {f: fPowerDraw},
	"gpu_power_readings/average_power_draw":                                    {f: fPowerDraw},
	"gpu_power_readings/instant_power_draw":                                    {f: fPowerInst},
	"gpu_power_readings/current_power_limit":                                   {f: fLimitEnforced},
	"gpu_power_readings/enforced_power_limit":                                  {f: fLimitEnforced},
	"gpu_power_readings/requested_power_limit":                                 {f: fLimit},
	"clocks/sm_clock":                                                          {f: fSMClock},
	"clocks/mem_clock":                                                         {f: fMemClock},
	"max_clocks/sm_clock":                                                      {f: fSMClockMax},
	"fabric/state":                                                             {f: fFabricState},
	"fabric/status":                                                            {f: fFabricStatus},
	"clocks_event_reasons_counters/clocks_event_reasons_counters_sw_power_cap": {f: fCounter, arg: "sw_power_cap"},
	"clocks_event_reasons_counters/clocks_event_reasons_counters_sync_boost":   {f: fCounter, arg: "sync_boost"},
	"clocks_event_reasons_counters/clocks_event_reasons_counters_sw_therm_slowdown": {f: fCounter, arg: "sw_thermal_slowdown"},
	"clocks_event_reasons_counters/clocks_event_reasons_counters_hw_therm_slowdown": {f: fCounter, arg: "hw_thermal_slowdown"},
	"clocks_event_reasons_counters/clocks_event_reasons_counters_hw_power_brake":    {f: fCounter, arg: "hw_power_brake_slowdown"},
}

func init() {
	for _, r := range reasonBits {
		xmlFields["clocks_event_reasons/clocks_event_reason_"+r.name] = spec{f: fReason, arg: r.name}
		xmlFields["clocks_throttle_reasons/clocks_throttle_reason_"+r.name] = spec{f: fReason, arg: r.name}
	}
	xmlFields["clocks_throttle_reasons/clocks_throttle_reason_user_defined_clocks"] = spec{f: fReason, arg: "applications_clocks_setting"}
	for _, sec := range []string{"volatile", "aggregate"} {
		part, total := fECCVol, fECCVolTotal
		if sec == "aggregate" {
			part, total = fECCAgg, fECCAggTotal
		}
		for _, k := range []string{"sram_uncorrectable", "sram_uncorrectable_parity", "sram_uncorrectable_secded", "dram_uncorrectable"} {
			xmlFields["ecc_errors/"+sec+"/"+k] = spec{f: part}
		}
		xmlFields["ecc_errors/"+sec+"/double_bit/total"] = spec{f: total}
	}
}

// lineReader feeds the decoder the input's lines, so that the decoder's line
// count is the file's and memory stays that of one line.
type lineReader struct {
	in  *textio.Input
	cur []byte
	nl  bool // the current line's newline is still to be read
	eof bool
}

func (r *lineReader) ReadByte() (byte, error) {
	for {
		if len(r.cur) > 0 {
			c := r.cur[0]
			r.cur = r.cur[1:]
			return c, nil
		}
		if r.nl {
			r.nl = false
			return '\n', nil
		}
		if r.eof || !r.in.Scan() {
			r.eof = true
			return 0, io.EOF
		}
		r.cur, r.nl = r.in.Bytes(), true
	}
}

func (r *lineReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c, err := r.ReadByte()
		if err != nil {
			if n > 0 {
				return n, nil
			}
			return 0, err
		}
		p[n] = c
		n++
		if c == '\n' {
			break
		}
	}
	return n, nil
}

type xmlParser struct {
	in   *textio.Input
	r    *rep
	out  *facts.Facts
	dec  *xml.Decoder
	thin thinner

	snap     *facts.GPUSnapshot
	gpu      *gpuB
	proc     *facts.GPUProcess
	procs    []*facts.GPUProcess
	depth    int // element depth below the root
	gpuLvl   int // depth of the open <gpu>, 0 when none
	path     []byte
	ends     [maxDepth]int
	text     []byte
	sawRoot  bool
	attached int
}

func parseXML(in *textio.Input, out *facts.Facts) {
	p := &xmlParser{in: in, r: &rep{in: in}, out: out}
	p.dec = xml.NewDecoder(&lineReader{in: in})
	p.dec.Strict = true
	p.dec.Entity = xml.HTMLEntity
	p.dec.CharsetReader = func(label string, input io.Reader) (io.Reader, error) {
		// nvidia-smi writes ASCII; a declared Latin-1 or similar still reads.
		return input, nil
	}
	p.run()
	p.thin.flush(out, in)
	p.r.done()
}

func (p *xmlParser) line() int {
	l, _ := p.dec.InputPos()
	return l
}

func (p *xmlParser) run() {
	for {
		tok, err := p.dec.Token()
		if err != nil {
			p.fail(err)
			return
		}
		switch t := tok.(type) {
		case xml.StartElement:
			p.start(t)
		case xml.EndElement:
			p.end(t)
		case xml.CharData:
			if p.depth > 0 && len(p.text) < 4096 {
				p.text = append(p.text, t...)
			}
		}
	}
}

func (p *xmlParser) start(t xml.StartElement) {
	p.text = p.text[:0]
	p.depth++
	name := t.Name.Local
	switch {
	case p.depth == 1:
		if name != "nvidia_smi_log" {
			p.r.at(p.line(), facts.IssueMalformed, "XML root <%s> is not <nvidia_smi_log>", name)
		}
		p.finishDump()
		p.snap = &facts.GPUSnapshot{Src: facts.Source{File: p.in.Path, Line: p.line()}, Format: facts.KindNvidiaSMIXML}
		p.sawRoot = true
		p.attached = -1
		return
	case p.depth == 2 && name == "gpu" && p.snap != nil:
		p.gpu = newGPU(facts.Source{File: p.in.Path, Line: p.line()})
		p.gpu.g.Index = len(p.snap.GPUs)
		for _, a := range t.Attr {
			if a.Name.Local == "id" {
				if id := NormalizeBusID(a.Value); id != "" {
					p.gpu.g.BusID = id
				} else {
					p.r.at(p.line(), facts.IssueMalformed, "<gpu id=%q> is not a PCI bus id", a.Value)
				}
			}
		}
		p.gpuLvl = 2
		p.path = p.path[:0]
		return
	}
	if p.gpuLvl == 0 {
		return
	}
	lvl := p.depth - p.gpuLvl // 1 for the children of <gpu>
	if lvl >= maxDepth {
		return
	}
	p.path = p.path[:p.ends[lvl-1]]
	if len(p.path) > 0 {
		p.path = append(p.path, '/')
	}
	p.path = append(p.path, name...)
	p.ends[lvl] = len(p.path)
	switch string(p.path) {
	case "processes":
		p.snap.ProcsListed = true
	case "processes/process_info":
		p.proc = &facts.GPUProcess{Src: facts.Source{File: p.in.Path, Line: p.line()}, GPU: p.gpu.g.Index, BusID: p.gpu.g.BusID}
	}
}

func (p *xmlParser) end(t xml.EndElement) {
	defer func() { p.depth-- }()
	if p.depth == 1 {
		p.finishDump()
		return
	}
	if p.snap == nil {
		return
	}
	if p.depth == 2 {
		v := bytes.TrimSpace(p.text)
		switch t.Name.Local {
		case "timestamp":
			if tm, ok := parseCtime(v); ok {
				p.snap.At, p.snap.AtFrom = tm, "nvidia-smi timestamp"
				clock(p.out, p.in.Path, tm)
			} else if special(v) == valOK {
				p.r.at(p.line(), facts.IssueMalformed, "<timestamp> %s is not a ctime date", describe(v))
			}
		case "driver_version":
			p.snap.Driver = p.r.str(v)
		case "cuda_version":
			p.snap.CUDA = p.r.str(v)
		case "attached_gpus":
			if n, ok := atoi(v); ok {
				p.attached = n
			}
		case "gpu":
			if p.gpu != nil {
				p.finishGPU()
			}
		}
		p.text = p.text[:0]
		return
	}
	if p.gpuLvl == 0 || p.gpu == nil {
		return
	}
	lvl := p.depth - p.gpuLvl
	if lvl >= maxDepth {
		return
	}
	p.path = p.path[:p.ends[lvl]]
	v := bytes.TrimSpace(p.text)
	p.text = p.text[:0]
	if p.proc != nil && bytes.HasPrefix(p.path, []byte("processes/process_info")) {
		p.procField(v)
	} else if sp, ok := xmlFields[string(p.path)]; ok {
		p.gpu.apply(p.r, p.line(), sp, p.path, v)
	} else if len(v) > 0 && special(v) == valReadErr {
		p.gpu.readErr(p.r, p.line(), p.path, v)
	}
	p.path = p.path[:p.ends[lvl-1]]
}

func (p *xmlParser) procField(v []byte) {
	switch string(p.path) {
	case "processes/process_info":
		p.procs = append(p.procs, p.proc)
		p.proc = nil
	case "processes/process_info/pid":
		if n, ok := atoi(v); ok {
			p.proc.PID = n
		} else if special(v) == valOK {
			p.r.at(p.line(), facts.IssueMalformed, "<pid> %s is not a number", describe(v))
		}
	case "processes/process_info/type":
		p.proc.Type = p.r.str(v)
	case "processes/process_info/process_name":
		p.proc.Name = string(v)
	case "processes/process_info/used_memory":
		f, st := number(v)
		switch st {
		case valOK:
			p.proc.MemMiB = facts.V(f)
		case valBad:
			p.r.at(p.line(), facts.IssueMalformed, "<used_memory> %s is not a number", describe(v))
		}
	}
}

func (p *xmlParser) finishGPU() {
	if p.proc != nil {
		p.procs = append(p.procs, p.proc)
		p.proc = nil
	}
	for _, pr := range p.procs {
		pr.UUID = p.gpu.g.UUID
	}
	addGPU(p.snap, p.gpu.finish(p.r))
	addProcs(p.snap, p.procs...)
	p.procs = nil
	p.gpu = nil
	p.gpuLvl = 0
}

func (p *xmlParser) finishDump() {
	if p.snap == nil {
		return
	}
	if p.attached > len(p.snap.GPUs) && !p.snap.Incomplete {
		// A selection (-i): the order says nothing of the index.
		for _, g := range p.snap.GPUs {
			g.Index = -1
		}
		for _, pr := range p.snap.Procs {
			pr.GPU = -1
		}
	}
	p.thin.add(p.snap)
	p.snap = nil
}

// fail ends the parse at a decoder error: the end of a complete document,
// a document cut short (Incomplete), or malformed XML.
func (p *xmlParser) fail(err error) {
	inDoc := p.snap != nil
	if errors.Is(err, io.EOF) && !inDoc {
		if !p.sawRoot {
			p.r.at(p.in.Line(), facts.IssueMalformed, "no <nvidia_smi_log> element: not an nvidia-smi XML dump")
		}
		return
	}
	line := p.line()
	var se *xml.SyntaxError
	msg := err.Error()
	if errors.As(err, &se) {
		line, msg = se.Line, se.Msg
	}
	// At the end of input the decoder counts the line after the last one.
	line = max(1, min(line, p.in.Line()))
	truncated := errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || strings.Contains(msg, "unexpected EOF")
	if inDoc {
		if p.gpu != nil {
			// Keep what the cut block holds.
			p.finishGPU()
		}
		if truncated {
			p.snap.Incomplete = true
		}
		p.finishDump()
	}
	if truncated {
		p.r.at(line, facts.IssueIncomplete, "nvidia-smi XML dump ends before </nvidia_smi_log>")
		return
	}
	p.r.at(line, facts.IssueMalformed, "XML syntax error: %s", msg)
}
