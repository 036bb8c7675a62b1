package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/coroner-dev/coroner/internal/atomicfile"
	"github.com/coroner-dev/coroner/internal/bundlewrite"
	"github.com/coroner-dev/coroner/internal/escape"
	"github.com/coroner-dev/coroner/internal/redact"
	"github.com/coroner-dev/coroner/parser/bundle"
	"github.com/coroner-dev/coroner/parser/manifest"
	"github.com/coroner-dev/coroner/reports"
)

// writeFlags are the flags of the commands that write a bundle.
type writeFlags struct {
	Output      string `short:"o" required:"" placeholder:"FILE" help:"The bundle to write (a .tar.zst)."`
	NoRedact    bool   `name:"no-redact" help:"Keep secrets (tokens, keys, passwords) in the bundle. Redaction is on by default."`
	RedactHosts bool   `name:"redact-hosts" help:"Also replace host names, IP addresses and user names by pseudonyms (the same value gets the same pseudonym across the bundle)."`
	MaxSize     string `name:"max-size" default:"25MB" help:"Trim the middle of the largest logs until the bundle fits (GitHub's attachment limit is 25MB); 0 for no limit."`
	Quiet       bool   `short:"q" help:"Print no progress on stderr."`
}

func (p *writeFlags) check() (int64, error) {
	if p.NoRedact && p.RedactHosts {
		return 0, fail(exitUsage, "--no-redact and --redact-hosts contradict each other")
	}
	max := int64(0)
	if s := strings.TrimSpace(p.MaxSize); s != "0" && s != "" {
		n, err := parseSize(s)
		if err != nil {
			return 0, fail(exitUsage, "--max-size: %v", err)
		}
		max = n
	}
	if st, err := os.Stat(p.Output); err == nil && st.IsDir() {
		return 0, fail(exitUsage, "-o %s: is a directory; name the bundle file", p.Output)
	}
	// A device, FIFO or link is refused before a collect that may take
	// minutes, not after it; writing re-checks (internal/atomicfile).
	if err := atomicfile.Check(p.Output); err != nil {
		return 0, fail(exitInternal, "-o %v; name the bundle file", err)
	}
	if dir := filepath.Dir(p.Output); dir != "" {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return 0, fail(exitUsage, "-o %s: the folder %s does not exist", p.Output, dir)
		}
	}
	return max, nil
}

// summarize says on stderr what was written.
func summarize(e *env, quiet bool, out string, redacted bool, sum *bundlewrite.Summary, maxSize int64) {
	if !sum.Fits {
		fmt.Fprintf(e.stderr, "coroner: warning: %s is %s, over --max-size %s even with every log trimmed to its minimum\n",
			out, reports.HumanBytes(sum.Bytes), reports.HumanBytes(maxSize))
	}
	if quiet || !e.stderrTTY {
		return
	}
	trimmed, secrets := 0, 0
	for _, r := range sum.Results {
		if r.Trim != nil {
			trimmed++
		}
		secrets += r.Counts.Total()
	}
	msg := fmt.Sprintf("wrote %s: %d files, %s", out, len(sum.Results)+1, reports.HumanBytes(sum.Bytes))
	if trimmed > 0 {
		msg += fmt.Sprintf(", %d trimmed to fit", trimmed)
	}
	if redacted {
		msg += fmt.Sprintf(", %d values redacted", secrets)
	} else {
		msg += ", not redacted"
	}
	fmt.Fprintf(e.stderr, "\r\x1b[Kcoroner: %s\n", msg)
}

type bundleCmd struct {
	Paths []string `arg:"" name:"path" help:"Files and folders to pack. Symbolic links are recorded, never followed." type:"string"`
	writeFlags
}

func (c *bundleCmd) Run(e *env) error {
	maxSize, err := c.check()
	if err != nil {
		return err
	}
	m := &manifest.Manifest{Format: manifest.Format, Version: manifest.Version, Tool: manifest.Tool{Name: "coroner", Version: version},
		Command: "bundle"}
	b := bundlewrite.NewBundler(c.Output, !c.NoRedact)
	outSt, outErr := os.Stat(c.Output)
	for _, p := range c.Paths {
		st, err := os.Lstat(p)
		if err != nil {
			return fail(exitInput, "cannot read %s: %v", p, unwrapPathError(err))
		}
		// A file named both to pack and as -o would be left out as the
		// bundle being written, then replaced by it: the evidence gone.
		// (An old bundle inside a folder to pack is only left out.)
		if outErr == nil && st.Mode().IsRegular() && os.SameFile(outSt, st) {
			return fail(exitInternal, "-o %s is %s, a file to pack: coroner does not write over its evidence; name another file", c.Output, p)
		}
	}
	// With several paths each keeps its folders below the one they share:
	// a/server.log and b/server.log, not server.log and server.log.2.
	names := bundle.InputNames(c.Paths)
	for i, p := range c.Paths {
		if err := b.Add(p, names[i]); err != nil {
			return fail(exitInput, "%v", err)
		}
	}
	m.Artifacts = b.Artifacts
	job := &bundlewrite.Job{Items: b.Items, Manifest: m, MaxSize: maxSize, CapName: "--max-size " + c.MaxSize}
	if !c.NoRedact {
		hosts, users := bundlewrite.LocalNames()
		job.Redactor = redact.New(redact.Options{Hosts: c.RedactHosts, Hostnames: hosts, Users: users})
	}
	sum, err := bundlewrite.WriteBundle(c.Output, job)
	if err != nil {
		return fail(exitInternal, "write %s: %v", c.Output, err)
	}
	summarize(e, c.Quiet, c.Output, job.Redactor != nil, sum, maxSize)
	if !c.Quiet {
		for _, n := range b.Special {
			fmt.Fprintf(e.stderr, "coroner: skipped %s\n", escape.Text(n))
		}
	}
	return nil
}
