package main

import (
	"bytes"

	"github.com/coroner-dev/coroner/internal/compare"
	"github.com/coroner-dev/coroner/parser"
	"github.com/coroner-dev/coroner/rules"
)

type diffCmd struct {
	A        string `arg:"" name:"a" help:"The reference run's bundle: directory, file, archive, compressed file, or - for stdin." type:"string"`
	B        string `arg:"" name:"b" help:"The run to compare with it." type:"string"`
	Format   string `short:"f" enum:"md,markdown,json" default:"md" help:"Output format: md (markdown) or json."`
	Output   string `short:"o" placeholder:"FILE" help:"Write the diff to FILE instead of stdout."`
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
	if c.Format == "json" {
		err = compare.JSON(&out, d)
	} else {
		err = compare.Markdown(&out, d)
	}
	if err != nil {
		return fail(exitInternal, "render the diff: %v", err)
	}
	return writeOutput(e, c.Output, out.Bytes())
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
