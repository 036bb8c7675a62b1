package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/coroner-dev/coroner/internal/envpolicy"
	"github.com/coroner-dev/coroner/parser/facts"
)

// whatCoronerReads ends the message for input that holds no evidence.
const whatCoronerReads = "coroner reads server logs (SGLang, vLLM, other Python servers), ps and top snapshots, " +
	"nvidia-smi output, kernel logs, meminfo, free and df, environment reports (collect-env, check_env, pip list), " +
	"environment dumps with CUDA, NCCL or engine variables, launch commands, health probes, py-spy dumps " +
	"and coroner's own bundles"

// hasEvidence reports whether a parse found anything about a run: a fact
// that some rule reads, or damage to the bundle that the report explains. Files whose kind was only guessed from their name
// (a freeipmi.conf read as `free`, a journald.conf as a kernel log) and
// system descriptions alone (an /etc/os-release) are not evidence.
func hasEvidence(f *facts.Facts) bool {
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
	if len(f.GPUs) > 0 || len(f.Topo) > 0 || len(f.GPUList) > 0 || len(f.Kernel) > 0 || len(f.Memory) > 0 || len(f.Disks) > 0 ||
		len(f.Envs) > 0 || len(f.Cmds) > 0 || len(f.Probes) > 0 || len(f.Stacks) > 0 || len(f.Runs) > 0 ||
		len(f.Cgroups) > 0 {
		return true
	}
	// A file of NAME=value lines is a config file unless it sets a
	// variable of the GPU stack or an engine (envpolicy.Evidence).
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

// noEvidence is the error for input without evidence: what was found, and
// what coroner reads instead.
func noEvidence(paths []string, f *facts.Facts) error {
	name := bundleName(paths)
	if len(f.Sources) == 0 {
		return fail(exitInput, "%s holds no files: nothing to analyze; %s", name, whatCoronerReads)
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
	return fail(exitInput, "%s holds no evidence of a server run: %d %s, %s; %s (`coroner sources %s` lists what each file was read as)",
		name, len(f.Sources), files, strings.Join(parts, ", "), whatCoronerReads, name)
}

func hasIssue(s *facts.SourceInfo, k facts.IssueKind) bool {
	for _, is := range s.Issues {
		if is.Kind == k {
			return true
		}
	}
	return false
}
