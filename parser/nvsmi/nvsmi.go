// Package nvsmi reads every output format of nvidia-smi, of every driver era
// from R375 to R590: the `-q` text (full or `-d` selections), `-q -x` XML
// (nvsmi_device v10 to v13), `--query-gpu` and `--query-compute-apps` CSV
// (with or without header and units), the default table, `dmon` and `pmon`
// series, `topo -m` and `-L`.
//
// Each dump becomes a facts.GPUSnapshot (one per sample for looping
// captures, thinned to MaxSnapshots), `topo -m` a facts.Topology and `-L`
// facts.GPUListEntry values. Values nvidia-smi prints as N/A, [Not
// Supported] or "Requested functionality has been deprecated" are absent
// (facts.Val{}), never 0. ERR!, Unknown Error and GPU is lost are absent too,
// named in GPU.ReadErrors and reported as "unreadable" issues. The lines
// nvidia-smi prints instead of data when a GPU or the driver fails ("Unable to
// determine the device handle for GPU ...: GPU is lost") are kept as
// GPUSnapshot.Errors.
package nvsmi

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/textio"
)

// Parse reads one nvidia-smi output of the given kind into out.
func Parse(in *textio.Input, kind facts.Kind, out *facts.Facts) {
	if out.Clocks == nil {
		out.Clocks = map[string]facts.Clock{}
	}
	defer func() {
		// The parsers are fuzzed not to panic; should one still do, the
		// bundle's other evidence must survive it.
		if r := recover(); r != nil {
			in.Issuef(facts.IssueCorrupt, "nvidia-smi parser failed here: %v", r)
		}
	}()
	switch kind {
	case facts.KindNvidiaSMIQ:
		parseQ(in, out)
	case facts.KindNvidiaSMIXML:
		parseXML(in, out)
	case facts.KindNvidiaSMICSV:
		parseCSV(in, out)
	case facts.KindNvidiaSMITable:
		parseTable(in, out)
	case facts.KindNvidiaSMIDmon, facts.KindNvidiaSMIPmon:
		parseMon(in, kind, out)
	case facts.KindNvidiaSMITopo:
		parseTopo(in, out)
	case facts.KindNvidiaSMIList:
		parseList(in, out)
	default:
		in.IssueAt(0, facts.IssueUnrecognized, "%s is not an nvidia-smi format", kind)
	}
}

var (
	listRe   = regexp.MustCompile(`^GPU \d+: .+\(UUID: (GPU|MIG)-`)
	ansiRe   = regexp.MustCompile("\x1b\\[[0-9;]*[A-Za-z]")
	csvTSRe  = regexp.MustCompile(`^\d{4}/\d\d/\d\d \d\d:\d\d:\d\d`)
	gpuUUIDs = []byte("GPU-")
)

// Sniff recognizes the nvidia-smi formats by content; the name only breaks
// the case of a file that holds nothing but an nvidia-smi failure message,
// or says what an empty or unrecognizable file was meant to be.
func Sniff(name string, head []byte) (facts.Kind, int) {
	head = bytes.TrimPrefix(head, []byte("\xef\xbb\xbf"))
	all := firstLines(head, 8)
	if len(all) == 0 {
		return nameHint(name)
	}
	// nvidia-smi prints its complaints about a lost GPU before the dump.
	lines := all
	for len(lines) > 1 {
		if _, ok := errorLine(lines[0]); !ok {
			break
		}
		lines = lines[1:]
	}
	first := lines[0]

	if bytes.Contains(head, []byte("<nvidia_smi_log")) || bytes.Contains(head, []byte("DOCTYPE nvidia_smi_log")) {
		if bytes.HasPrefix(first, []byte("<?xml")) || bytes.HasPrefix(first, []byte("<!DOCTYPE")) || bytes.HasPrefix(first, []byte("<nvidia_smi_log")) {
			return facts.KindNvidiaSMIXML, 95
		}
		return facts.KindNvidiaSMIXML, 40
	}
	if bytes.Contains(first, nvsmiLog) && first[0] == '=' {
		return facts.KindNvidiaSMIQ, 95
	}
	if isTableStart(lines) {
		return facts.KindNvidiaSMITable, 95
	}
	if k, ok := monHeader(first); ok {
		if len(lines) > 1 && lines[1][0] == '#' {
			return k, 95
		}
		return k, 70
	}
	if isTopoHeader(first) {
		if bytes.Contains(head, []byte("Legend:")) || (len(lines) > 1 && bytes.HasPrefix(lines[1], []byte("GPU0"))) {
			return facts.KindNvidiaSMITopo, 95
		}
		return facts.KindNvidiaSMITopo, 60
	}
	if listRe.Match(first) {
		return facts.KindNvidiaSMIList, 95
	}
	if known, total := csvHeaderScore(first); total > 0 && known == total && (total >= 2 || bytes.Contains(first, []byte("."))) {
		return facts.KindNvidiaSMICSV, 95
	} else if known >= 2 && known*2 > total {
		return facts.KindNvidiaSMICSV, 90
	}
	if _, ok := errorLine(first); ok {
		k, _ := nameHint(name)
		if k == "" {
			k = facts.KindNvidiaSMITable
		}
		return k, 75
	}
	if s := headerlessCSVScore(first); s > 0 {
		if strings.Contains(strings.ToLower(name), "csv") || strings.Contains(strings.ToLower(name), "gpu") {
			s += 10
		}
		return facts.KindNvidiaSMICSV, min(s, 69)
	}
	if qExcerpt(head) {
		// A part of a -q dump, pasted without its banner: still -q.
		return facts.KindNvidiaSMIQ, 70
	}
	// Weaker content signs, for captures wrapped by other text.
	switch {
	case bytes.Contains(head, []byte("==============NVSMI LOG==============")):
		return facts.KindNvidiaSMIQ, 40
	case bytes.Contains(head, []byte("| NVIDIA-SMI ")) && bytes.Contains(head, []byte("Driver Version:")):
		return facts.KindNvidiaSMITable, 40
	}
	return nameHint(name)
}

// qKeys are keys of a GPU block of `nvidia-smi -q`, as it prints them.
var qKeys = []string{"Product Name", "Product Brand", "Product Architecture", "Persistence Mode", "GPU UUID", "Minor Number",
	"VBIOS Version", "Bus Id", "Performance State", "FB Memory Usage", "Compute Mode", "ECC Mode", "ECC Errors", "Retired Pages",
	"Remapped Rows", "GPU Reset Status", "Reset Required", "Drain and Reset Recommended", "Pending Page Blacklist",
	"Single Bit ECC", "Double Bit ECC", "SRAM Uncorrectable", "SRAM Correctable", "DRAM Uncorrectable", "DRAM Correctable",
	"Correctable Error", "Uncorrectable Error", "Remapping Failure Occurred", "GPU Current Temp", "Power Draw", "Utilization"}

// qExcerpt reports indented "Key : value" lines of -q's GPU block, three
// at least and half the lines: an excerpt without its banner.
func qExcerpt(head []byte) bool {
	known, lines := 0, 0
	for _, l := range bytes.Split(head, []byte("\n")) {
		t := bytes.TrimRight(l, " \r")
		if len(t) == 0 {
			continue
		}
		lines++
		if len(t) < 5 || t[0] != ' ' {
			continue
		}
		c := bytes.TrimLeft(t, " ")
		for _, k := range qKeys {
			if bytes.HasPrefix(c, []byte(k)) {
				rest := bytes.TrimLeft(c[len(k):], " ")
				if len(rest) == 0 || rest[0] == ':' {
					known++
				}
				break
			}
		}
	}
	return known >= 3 && known*2 >= lines/2
}

// nameHint scores a file by its name alone (1-29).
func nameHint(name string) (facts.Kind, int) {
	l := strings.ToLower(name)
	if !strings.Contains(l, "nvidia") && !strings.Contains(l, "smi") && !strings.Contains(l, "gpu") &&
		!strings.Contains(l, "dmon") && !strings.Contains(l, "pmon") && !strings.Contains(l, "topo") {
		return "", 0
	}
	switch {
	case strings.HasSuffix(l, ".xml"):
		return facts.KindNvidiaSMIXML, 20
	case strings.Contains(l, "topo"):
		return facts.KindNvidiaSMITopo, 20
	case strings.Contains(l, "dmon"):
		return facts.KindNvidiaSMIDmon, 20
	case strings.Contains(l, "pmon"):
		return facts.KindNvidiaSMIPmon, 20
	case strings.HasSuffix(l, ".csv") || strings.Contains(l, "query-gpu") || strings.Contains(l, "compute-apps"):
		return facts.KindNvidiaSMICSV, 20
	case strings.Contains(name, "-L") || strings.Contains(name, "_L") || strings.Contains(l, "list"):
		return facts.KindNvidiaSMIList, 15
	case strings.Contains(l, "-q") || strings.Contains(l, "_q"):
		return facts.KindNvidiaSMIQ, 20
	case strings.Contains(l, "nvidia-smi") || strings.Contains(l, "nvidia_smi"):
		return facts.KindNvidiaSMITable, 15
	}
	return "", 0
}

// firstLines returns up to n non-blank lines of head, ANSI codes removed and
// trailing blanks trimmed.
func firstLines(head []byte, n int) [][]byte {
	var out [][]byte
	for len(head) > 0 && len(out) < n {
		i := bytes.IndexByte(head, '\n')
		var l []byte
		if i < 0 {
			l, head = head, nil
		} else {
			l, head = head[:i], head[i+1:]
		}
		if bytes.IndexByte(l, 0x1b) >= 0 {
			l = ansiRe.ReplaceAll(l, nil)
		}
		l = trimRight(l)
		if len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		out = append(out, l)
	}
	return out
}

func isTableStart(lines [][]byte) bool {
	for i, l := range lines {
		if i >= 4 {
			break
		}
		if bytes.HasPrefix(l, []byte("| NVIDIA-SMI ")) {
			return true
		}
		if i == 0 && !isCtime(l) && !bytes.HasPrefix(l, []byte("+---")) {
			if _, ok := errorLine(l); !ok {
				return false
			}
		}
	}
	return false
}

// monHeader recognizes the first header line of dmon ("# gpu   pwr ...")
// and pmon ("# gpu  pid  type ...").
func monHeader(l []byte) (facts.Kind, bool) {
	if len(l) < 2 || l[0] != '#' {
		return "", false
	}
	f := bytes.Fields(bytes.ReplaceAll(l[1:], []byte(","), []byte(" ")))
	gpu, pid, other := false, false, 0
	for _, x := range f {
		switch string(bytes.ToLower(x)) {
		case "gpu":
			gpu = true
		case "pid":
			pid = true
		case "date", "time":
		default:
			other++
		}
	}
	if !gpu || other == 0 {
		return "", false
	}
	if pid {
		return facts.KindNvidiaSMIPmon, true
	}
	return facts.KindNvidiaSMIDmon, true
}

func isTopoHeader(l []byte) bool {
	if len(l) == 0 || (l[0] != '\t' && l[0] != ' ') {
		return false
	}
	f := bytes.Fields(l)
	return len(f) > 0 && bytes.Equal(f[0], []byte("GPU0"))
}

// csvHeaderScore counts the known nvidia-smi field names in a header line.
func csvHeaderScore(l []byte) (known, total int) {
	if bytes.IndexByte(l, ',') < 0 && !bytes.Contains(l, []byte(".")) {
		return 0, 0
	}
	return headerFieldsScore(bytes.Split(l, []byte(",")))
}

// headerFieldsScore counts the header's fields and the known ones of them.
func headerFieldsScore(fields [][]byte) (known, total int) {
	for _, f := range fields {
		n := headerName(f)
		if len(n) == 0 {
			continue
		}
		total++
		if _, ok := csvFields[string(n)]; ok {
			known++
		} else if _, ok := appFields[string(n)]; ok {
			known++
		}
	}
	return known, total
}

// headerlessCSVScore scores a data row without a header by the shapes of its
// values (30-69: plausible content).
func headerlessCSVScore(l []byte) int {
	if bytes.IndexByte(l, ',') < 0 {
		return 0
	}
	score := 0
	for _, f := range bytes.Split(l, []byte(",")) {
		f = bytes.TrimSpace(f)
		switch {
		case csvTSRe.Match(f):
			score += 20
		case bytes.HasPrefix(f, gpuUUIDs) && len(f) > 20:
			score += 25
		case bytes.Count(f, []byte(":")) == 2 && NormalizeBusID(string(f)) != "":
			score += 30
		case bytes.HasSuffix(f, []byte(" MiB")):
			score += 10
		case bytes.HasPrefix(f, []byte("NVIDIA ")) || bytes.HasPrefix(f, []byte("Tesla ")):
			score += 20
		}
	}
	return min(score, 65)
}

// describe renders a value for an issue.
func describe(b []byte) string { return fmt.Sprintf("%q", clip(b)) }
