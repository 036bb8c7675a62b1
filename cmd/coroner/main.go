// Command coroner analyzes evidence from LLM inference server runs (SGLang,
// vLLM) offline and writes postmortems: what state the run is in, where in
// its startup it stopped, the most likely cause with the evidence for it,
// and what to do next.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"time"

	"github.com/alecthomas/kong"

	"github.com/coroner-dev/coroner/internal/escape"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

// Exit codes, documented in the README.
const (
	exitOK       = 0 // analysis done, nothing at or above --fail-on
	exitFindings = 1 // analysis done, findings at or above --fail-on
	exitUsage    = 2 // bad command line
	exitInput    = 3 // a bundle could not be opened
	exitInternal = 4 // output could not be written, or coroner failed
)

// cli is the command grammar.
type cli struct {
	// VersionFlag is --version: the same line as coroner version.
	VersionFlag kong.VersionFlag `name:"version" help:"Print coroner's version and exit."`

	Analyze  analyzeCmd  `cmd:"" help:"Diagnose a run from a bundle of evidence and write a postmortem."`
	Sources  sourcesCmd  `cmd:"" help:"List every file of a bundle with its detected kind, size, lines and parse issues."`
	Timeline timelineCmd `cmd:"" help:"Print only the reconstructed startup timeline of every process and rank."`
	Diff     diffCmd     `cmd:"" help:"Compare two runs: throughput, phases, first divergence, settings, environment, versions, GPUs."`
	Collect  collectCmd  `cmd:"" help:"Snapshot a live (possibly hung) server machine into a redacted bundle for a bug report."`
	Bundle   bundleCmd   `cmd:"" help:"Pack existing evidence files and folders into a redacted bundle with a manifest."`
	Rules    rulesCmd    `cmd:"" help:"List, explain and test rules, built-in and from user rule packs."`
	Version  versionCmd  `cmd:"" help:"Print coroner's version."`
}

const description = `coroner reads what an LLM inference server run left behind (server logs,
ps snapshots, nvidia-smi dumps, kernel logs, env reports, health probes) and
says what state the run is in, where in its life it stopped, and why.

A BUNDLE is a directory, a single file, a .tar / .tar.gz / .tgz / .tar.zst /
.tar.xz / .zip archive, a gzip/zstd/xz-compressed file, or - for stdin. Files
are recognized by content, not by name.

Examples:
  coroner analyze ./evidence/                    markdown postmortem to stdout
  coroner analyze bundle.tar.zst --format json   the JSON report (schema_version 1)
  coroner analyze server.log ps_aux.txt -o pm.md several files as one bundle
  coroner sources bundle.tar.zst                 what is in the bundle
`

// env is what commands read and write; tests swap it.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	stdoutTTY      bool
	stderrTTY      bool
	// stdoutWidth is the terminal's width when stdout is one (0 if not
	// known): --format text wraps at it.
	stdoutWidth int
	// progressFrom and progressEvery override the progress line's input
	// size threshold and redraw interval (tests); zero means the default.
	progressFrom  int64
	progressEvery time.Duration
}

// exitError carries an exit code out of a command.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func fail(code int, format string, args ...any) error {
	return &exitError{code: code, err: fmt.Errorf(format, args...)}
}

// kongExit unwinds kong's exit (after --help or a parse error) to run.
type kongExit int

// run parses args and runs the command; it returns the process exit code.
func run(args []string, e env) (code int) {
	defer func() {
		if r := recover(); r != nil {
			if c, ok := r.(kongExit); ok {
				code = int(c)
				return
			}
			fmt.Fprintf(e.stderr, "coroner: internal error: %v\n", r)
			code = exitInternal
		}
	}()
	var c cli
	k, err := kong.New(&c,
		kong.Name("coroner"),
		kong.Description(description),
		kong.Writers(e.stdout, e.stderr),
		kong.Exit(func(code int) { panic(kongExit(code)) }),
		kong.UsageOnError(),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true, WrapUpperBound: 100}),
		kong.Bind(&e),
		formatVars(),
		kong.Vars{"version": versionLine()},
	)
	if err != nil {
		fmt.Fprintf(e.stderr, "coroner: %v\n", err)
		return exitInternal
	}
	ctx, err := k.Parse(args)
	if err != nil {
		fmt.Fprintf(e.stderr, "coroner: %v\n", err)
		if pe := (*kong.ParseError)(nil); errors.As(err, &pe) {
			_ = pe.Context.PrintUsage(true)
		}
		return exitUsage
	}
	if err := ctx.Run(); err != nil {
		// Errors may quote names from a bundle; escape.Text keeps a
		// message's own lines and drops what a terminal would obey.
		var ee *exitError
		if errors.As(err, &ee) {
			if ee.err != nil && ee.err.Error() != "" {
				fmt.Fprintf(e.stderr, "coroner: %s\n", escape.Text(ee.err.Error()))
			}
			return ee.code
		}
		fmt.Fprintf(e.stderr, "coroner: %s\n", escape.Text(err.Error()))
		return exitInternal
	}
	return exitOK
}

// memoryLimit is the heap size the garbage collector aims to stay under,
// unless GOMEMLIMIT says otherwise. It is soft: a bundle that needs more
// gets more, at the cost of more frequent collection. The default target
// (heap twice the live data) took the 512-rank benchmark bundle to 147 MB
// peak RSS; this limit holds it at 109 MB with no slower run. It made the
// collector thrash on a folder of 200,000 files (24 s against 9 s
// without it) while every source's empty facts were kept to the merge;
// since they are dropped, 100, 150 and 200 MiB and no limit run in the
// same time there (3.7-4.0 s) and 100 MiB keeps the lowest peak (110 MB
// against 145-162), so it stays (bench/README.md, bench/records.sh).
const memoryLimit = 100 << 20

func main() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
	stop := startProfiles()
	code := run(os.Args[1:], env{
		stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr,
		stdoutTTY: isTerminal(os.Stdout), stderrTTY: isTerminal(os.Stderr), stdoutWidth: termWidth(os.Stdout),
	})
	stop()
	os.Exit(code)
}

type versionCmd struct{}

func (versionCmd) Run(e *env) error {
	fmt.Fprintln(e.stdout, versionLine())
	return nil
}

// versionLine is what coroner version and coroner --version print.
func versionLine() string { return "coroner " + version }
