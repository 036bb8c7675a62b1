package main

import (
	"bytes"
	"strings"

	"github.com/coroner-dev/coroner/internal/compare"
	"github.com/coroner-dev/coroner/parser"
	"github.com/coroner-dev/coroner/rules"
)

type diffCmd struct {
	A        string `arg:"" name:"a" help:"The reference run's bundle: directory, file, archive, compressed file, or - for stdin." type:"string"`
	B        string `arg:"" name:"b" help:"The run to compare with it." type:"string"`
	Format   string `short:"f" enum:"md,markdown,json,text" default:"md" help:"Output format: md (markdown), json, or text (for a terminal, as wide as it is)."`
	Output   string `short:"o" placeholder:"FILE" help:"Write the diff to FILE instead of stdout."`
	FailOn   string `name:"fail-on" enum:"critical,error,warning,info,never" default:"never" help:"Exit 1 when B has a finding at least this severe that A has not (a rule that fires only in B, or more severely there): what changed for the worse (critical, error, warning, info, never)."`
	MaxBytes string `name:"max-bytes" default:"20GiB" help:"Stop reading each bundle after this many decompressed bytes (e.g. 500MB, 20GiB)."`
	Year     int    `help:"Year of timestamps that carry none (vLLM logs), when a bundle does not say."`
	TZ       string `name:"tz" help:"Time zone of timestamps that carry none (e.g. UTC, Europe/Berlin, +02:00), when a bundle does not say."`
	Quiet    bool   `short:"q" help:"Print no progress on stderr (it shows only on a terminal, for inputs over 100 MB)."`
}

// Help is kong's long help of the command.
func (c *diffCmd) Help() string {
	return `Analyzes both runs, then sets them side by side: throughput and
speculative-decoding acceptance, the duration of every phase, the first
milestone where they part ways, and the settings, environment variables
(NCCL_*, CUDA_*, VLLM_*, SGLANG_*, PYTORCH_*, TORCH_*), versions and GPUs that
differ. It works across engines: an SGLang run against a vLLM run compares
tp_size with tensor_parallel_size, and phases instead of log lines.

Example:
  coroner diff slow-run/ tuned-run/
  coroner diff vllm.tar.zst sglang.tar.zst --format json`
}

func (c *diffCmd) Run(e *env) error {
	if c.A == "-" && c.B == "-" {
		return fail(exitUsage, "only one of the two bundles can be read from stdin")
	}
	if err := checkOutput(e, c.Output, []string{c.A, c.B}); err != nil {
		return err
	}
	a, err := c.load(e, c.A)
	if err != nil {
		return err
	}
	b, err := c.load(e, c.B)
	if err != nil {
		return err
	}
	d := compare.Compare(a, b, version)
	var out bytes.Buffer
	switch c.Format {
	case "json":
		err = compare.JSON(&out, d)
	case "text":
		err = compare.Text(&out, d, textWidth(e, c.Output))
	default:
		err = compare.Markdown(&out, d)
	}
	if err != nil {
		return fail(exitInternal, "render the diff: %v", err)
	}
	if err := writeOutput(e, c.Output, out.Bytes()); err != nil {
		return err
	}
	if worse := newFindings(a.Result.Findings, b.Result.Findings, c.FailOn); len(worse) > 0 {
		return fail(exitFindings, "B has %d finding(s) at or above %s that A has not: %s", len(worse), c.FailOn, strings.Join(worse, ", "))
	}
	return nil
}

// newFindings lists the rules of B's findings at or above the --fail-on
// severity that A has no finding of at that severity or above: what B
// adds. Rules are named once each, in B's order.
func newFindings(a, b []rules.Finding, failOn string) []string {
	if failOn == "never" {
		return nil
	}
	min := rules.Severity(failOn).Rank()
	inA := map[string]int{}
	for _, f := range a {
		inA[f.Rule] = max(inA[f.Rule], f.Severity.Rank())
	}
	var out []string
	seen := map[string]bool{}
	for _, f := range b {
		r := f.Severity.Rank()
		if r < min || seen[f.Rule] {
			continue
		}
		if got, ok := inA[f.Rule]; ok && got >= r {
			continue
		}
		seen[f.Rule] = true
		out = append(out, f.Rule)
	}
	return out
}

// load reads and analyzes one bundle with the flags both share.
func (c *diffCmd) load(e *env, path string) (compare.Run, error) {
	bf := bundleFlags{Paths: []string{path}, MaxBytes: c.MaxBytes, Year: c.Year, TZ: c.TZ, Quiet: c.Quiet}
	f, err := bf.parse(e)
	if err != nil {
		return compare.Run{}, err
	}
	if !parser.HasEvidence(f) {
		return compare.Run{}, noEvidence(bf.Paths, f)
	}
	return compare.Run{Path: path, Facts: f, Result: rules.Run(f, rules.Options{})}, nil
}
