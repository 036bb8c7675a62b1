package parser

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/coroner-dev/coroner/internal/envpolicy"
	"github.com/coroner-dev/coroner/parser/facts"
)

// WhatCoronerReads ends the message for input that holds no evidence.
const WhatCoronerReads = "coroner reads server logs (SGLang, vLLM, other Python servers), ps and top snapshots, " +
	"nvidia-smi output, kernel logs, meminfo, free and df, environment reports (collect-env, check_env, pip list), " +
	"environment dumps with CUDA, NCCL or engine variables, launch commands, health probes, py-spy dumps " +
	"and coroner's own bundles"

// notEvidence are the fields of facts.Facts that say nothing about a run
// by themselves: what was read, how its clocks read, settings (a log's,
// which is evidence on its own), capture stamps, a system description (an
// /etc/os-release) and the assumptions made. Every other field is evidence
// as soon as it holds something, so that a new kind's facts count without
// a change here; Logs, Procs and Env count by what they hold (HasEvidence).
var notEvidence = map[string]bool{
	"Sources": true, "Clocks": true, "Settings": true, "Capture": true, "System": true, "Assumptions": true,
	"Logs": true, "Procs": true, "Env": true,
}

// HasEvidence reports whether a parse found anything about a run: a fact
// that some rule reads, or damage to the bundle that the report explains.
// Files whose kind was only guessed from their name (a freeipmi.conf read
// as `free`, a journald.conf as a kernel log) and system descriptions
// alone (an /etc/os-release) are not evidence.
func HasEvidence(f *facts.Facts) bool {
	for _, l := range f.Logs {
		if l.Lines > 0 {
			return true
		}
	}
	for _, s := range f.Procs {
		if len(s.Procs) > 0 {
			return true
		}
	}
	// A GPU snapshot may hold no GPU and still say something: that no
	// process runs on them (a compute-apps CSV with its header alone).
	v := reflect.ValueOf(f).Elem()
	for i := range v.NumField() {
		if fv := v.Field(i); !notEvidence[v.Type().Field(i).Name] && (fv.Kind() == reflect.Slice || fv.Kind() == reflect.Map) && fv.Len() > 0 {
			return true
		}
	}
	// A file of NAME=value lines is a config file unless it sets a
	// variable of the GPU stack or an engine.
	for _, e := range f.Env {
		if envpolicy.Matters(e.Name, envpolicy.Evidence) {
			return true
		}
	}
	// A damaged bundle is still reported (README): what broke, and where,
	// is what the report then says.
	for _, s := range f.Sources {
		for _, is := range s.Issues {
			switch is.Kind {
			case facts.IssueTruncated, facts.IssueCorrupt, facts.IssueBomb, facts.IssueSizeLimit, facts.IssueEntryLimit:
				return true
			}
		}
	}
	return false
}

// IsIssue reports an analysis of an issue document: it is answered even
// when it holds no evidence, since its brief then asks for the evidence.
func IsIssue(f *facts.Facts) bool {
	for _, s := range f.Sources {
		switch s.Kind {
		case facts.KindMarkdown, facts.KindGitHubIssue, facts.KindGitHubEvent:
			return true
		}
	}
	return false
}

// NoEvidence says of input without evidence what was found, and what
// coroner reads instead; name is the input as the user gave it.
func NoEvidence(name string, f *facts.Facts) string {
	if len(f.Sources) == 0 {
		return fmt.Sprintf("%s holds no files: nothing to analyze; %s", name, WhatCoronerReads)
	}
	kinds := map[string]int{}
	unknown, binary, empty := 0, 0, 0
	for _, s := range f.Sources {
		switch {
		case hasIssue(s, facts.IssueBinary):
			binary++
		case s.Bytes == 0 && s.Kind == facts.KindUnknown:
			empty++
		case s.Kind == facts.KindUnknown:
			unknown++
		default:
			kinds[string(s.Kind)]++
		}
	}
	var parts []string
	add := func(n int, what string) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, what))
		}
	}
	add(unknown, "of no kind coroner knows")
	add(binary, "binary")
	add(empty, "empty, links or unreadable")
	if len(kinds) > 0 {
		names := make([]string, 0, len(kinds))
		for k := range kinds {
			names = append(names, k)
		}
		sort.Strings(names)
		var ks []string
		n := 0
		for _, k := range names {
			n += kinds[k]
			ks = append(ks, fmt.Sprintf("%d %s", kinds[k], k))
		}
		parts = append(parts, fmt.Sprintf("%d that looked like evidence (%s) but held nothing coroner uses", n, strings.Join(ks, ", ")))
	}
	files := "files"
	if len(f.Sources) == 1 {
		files = "file"
	}
	return fmt.Sprintf("%s holds no evidence of a server run: %d %s, %s; %s (`coroner sources %s` lists what each file was read as)",
		name, len(f.Sources), files, strings.Join(parts, ", "), WhatCoronerReads, name)
}

func hasIssue(s *facts.SourceInfo, k facts.IssueKind) bool {
	for _, is := range s.Issues {
		if is.Kind == k {
			return true
		}
	}
	return false
}
