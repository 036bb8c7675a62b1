package rules

import (
	"fmt"
	"sort"

	"github.com/coroner-dev/coroner/parser/facts"
)

func init() { Register(inputQuality) }

var inputQuality = &Rule{
	ID:       "input-quality",
	Title:    "evidence that could not be read whole",
	Severity: SeverityWarning,
	Doc: `Every file of the bundle is accounted for. This rule reports the files that
could not be read as they were meant to be (truncated or corrupt streams,
decompression bombs, unsafe names, links, binary content, lines cut at the
length limit, unrecognized files) and what that means for the diagnosis: a
truncated log hides its last events, so the silence measured from it is a lower
bound; an unrecognized file contributed nothing.

It also says which kinds of evidence are missing altogether and what to collect
so that the verdict can be confident: without a process snapshot a hang cannot
be told from a crash, without nvidia-smi the GPUs' state is unknown, without a
server log no phase can be placed.`,
	Run: runInputQuality,
}

// issueMeaning says what a kind of parse issue costs the analysis.
var issueMeaning = map[facts.IssueKind]string{
	facts.IssueTruncated:      "the end of the file is missing: events after the break are unknown, so a silence measured from it is a lower bound",
	facts.IssueCorrupt:        "part of the file could not be decoded: facts after the break are missing",
	facts.IssueBomb:           "decompression stopped at the ratio limit: the rest of the stream was not read",
	facts.IssueSizeLimit:      "the size limit stopped the reading: later files were not analyzed (raise --max-bytes)",
	facts.IssueEntryLimit:     "the entry limit stopped the reading: later files were not analyzed",
	facts.IssueUnsafePath:     "the archive names the file with an unsafe path; it was read as data under a cleaned name",
	facts.IssueLink:           "links are recorded, never followed: the target's content is not in the analysis",
	facts.IssueBinary:         "binary content is listed, not parsed",
	facts.IssueLineTooLong:    "long lines were cut at the limit; the rest of each was not read",
	facts.IssueNUL:            "NUL bytes in text: often a file written while the machine crashed",
	facts.IssueInvalidUTF8:    "invalid UTF-8 was replaced; the text is otherwise intact",
	facts.IssueNested:         "nested archives deeper than one level are not expanded",
	facts.IssueMalformed:      "some lines did not match their format and were skipped",
	facts.IssueClockJump:      "the clock jumped backwards: durations across the jump are unreliable",
	facts.IssueIncomplete:     "the capture stopped in the middle (a hung tool, a killed collector)",
	facts.IssueUnreadable:     "the file could not be read",
	facts.IssueDuplicateEntry: "the archive holds the path twice; both copies were analyzed",
	facts.IssueSummarized:     "the file held more records than are kept (processes, GPUs, variables, probes, frames): the ones that matter were kept and the rest counted",
}

func runInputQuality(p *Pass) {
	f := p.Facts
	byKind := map[facts.IssueKind][]facts.Issue{}
	for _, s := range f.Sources {
		for _, is := range s.Issues {
			byKind[is.Kind] = append(byKind[is.Kind], is)
		}
	}
	kinds := make([]string, 0, len(byKind))
	for k := range byKind {
		kinds = append(kinds, string(k))
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		list := byKind[facts.IssueKind(k)]
		sev := SeverityInfo
		switch facts.IssueKind(k) {
		case facts.IssueTruncated, facts.IssueCorrupt, facts.IssueBomb, facts.IssueSizeLimit, facts.IssueEntryLimit, facts.IssueUnreadable, facts.IssueIncomplete:
			sev = SeverityWarning
		}
		files := map[string]bool{}
		var ev []Evidence
		for i, is := range list {
			files[is.Src.File] = true
			if i < 20 {
				ev = append(ev, Evidence{Src: is.Src, Text: is.Detail})
			}
		}
		msg := fmt.Sprintf("%d %s issue(s) in %d file(s): %s.", len(list), k, len(files), issueMeaning[facts.IssueKind(k)])
		if len(list) > len(ev) {
			msg += fmt.Sprintf(" The first %d are cited.", len(ev))
		}
		p.Report(Finding{
			Title:    "input: " + k,
			Severity: sev,
			Message:  msg,
			Evidence: ev,
		})
	}

	var unknown []Evidence
	nUnknown := 0
	for _, s := range f.Sources {
		if s.Kind == facts.KindUnknown && len(s.Issues) == 0 {
			nUnknown++
			if len(unknown) < 20 {
				unknown = append(unknown, Evidence{Src: facts.Source{File: s.Path}, Text: fmt.Sprintf("%d bytes, %d lines", s.Bytes, s.Lines)})
			}
		}
	}
	if nUnknown > 0 {
		msg := fmt.Sprintf("%d file(s) matched no known evidence kind and contributed nothing to the diagnosis. If one is a server log or a snapshot, its format is new to coroner: please report it.", nUnknown)
		if nUnknown > len(unknown) {
			msg += fmt.Sprintf(" The first %d are cited; `coroner sources` lists them all.", len(unknown))
		}
		p.Report(Finding{
			Title:    "input: unrecognized files",
			Severity: SeverityInfo,
			Message:  msg,
			Evidence: unknown,
		})
	}

	idx := p.Index
	if !idx.HasAny(facts.KindSGLangLog, facts.KindVLLMLog, facts.KindServerLog) {
		p.Missing("the server's log (the file its stdout and stderr went to), with `coroner collect --log FILE`",
			"server log: no phase can be placed and no error read")
	}
	if !idx.HasAny(facts.KindPS, facts.KindTop) {
		p.Missing("`ps -eo pid,ppid,lstart,etimes,times,rss,stat,nlwp,args` twice, a minute apart (`coroner collect --count 2 --every 60s`)",
			"process snapshot: a hang cannot be told from a crash, nor busy work from idle")
	} else if len(f.Procs) == 1 {
		p.Missing("a second `ps` snapshot a minute after the first (`coroner collect --count 2 --every 60s`)",
			"a second process snapshot: CPU-time growth, and so progress, cannot be measured from one")
	}
	if !idx.HasAny(facts.KindNvidiaSMIQ, facts.KindNvidiaSMIXML, facts.KindNvidiaSMICSV, facts.KindNvidiaSMITable, facts.KindNvidiaSMIDmon) {
		p.Missing("`nvidia-smi -q -x` (and `nvidia-smi --query-gpu=timestamp,index,name,compute_cap,utilization.gpu,memory.used --format=csv`)",
			"GPU snapshot: GPU model, compute capability, utilization and memory are unknown")
	}
}
