package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/coroner-dev/coroner/internal/escape"
	"github.com/coroner-dev/coroner/parser"
	"github.com/coroner-dev/coroner/parser/bundle"
	"github.com/coroner-dev/coroner/parser/facts"
)

// bundleFlags are the flags of every command that reads a bundle.
type bundleFlags struct {
	Paths    []string `arg:"" name:"bundle" help:"Bundle(s) to read: directory, file, archive, compressed file, or - for stdin. Several are read as one bundle." type:"string"`
	MaxBytes string   `name:"max-bytes" default:"20GiB" help:"Stop reading after this many decompressed bytes (e.g. 500MB, 20GiB)."`
	Year     int      `help:"Year of timestamps that carry none (vLLM logs), when the bundle does not say."`
	TZ       string   `name:"tz" help:"Time zone of timestamps that carry none (e.g. UTC, Europe/Berlin, +02:00), when the bundle does not say."`
	Quiet    bool     `short:"q" help:"Print no progress on stderr (it shows only on a terminal, for inputs over 100 MB)."`

	// watch, when a command sets it, picks the lines of every server log
	// that user packs' signatures may match (rules.LineWatch).
	watch facts.LineWatch
}

func (b *bundleFlags) parse(e *env) (*facts.Facts, error) {
	opts := parser.Options{Bundle: bundle.Defaults(), Year: b.Year, Stdin: e.stdin, Watch: b.watch, FileTimes: true}
	n, err := parseSize(b.MaxBytes)
	if err != nil {
		return nil, fail(exitUsage, "--max-bytes: %v", err)
	}
	opts.Bundle.MaxTotalBytes = n
	if b.TZ != "" {
		z, err := parseZone(b.TZ)
		if err != nil {
			return nil, fail(exitUsage, "--tz: %v", err)
		}
		opts.Zone = z
	}
	for _, p := range b.Paths {
		if p == "-" {
			continue
		}
		if _, err := os.Stat(p); err != nil {
			return nil, fail(exitInput, "cannot read bundle %s: %v", p, unwrapPathError(err))
		}
	}
	pl := startProgress(e, b.Quiet, b.Paths)
	opts.Progress = pl.progress()
	f, err := parser.Parse(b.Paths, opts)
	pl.stop()
	if err != nil {
		return nil, fail(exitInput, "%v", err)
	}
	if !b.Quiet {
		// What was left out for not being a regular file (a FIFO, a
		// socket, a device) is said here too, not only in the report.
		for _, s := range f.Sources {
			for _, is := range s.Issues {
				if strings.HasSuffix(is.Detail, bundle.SkippedSuffix) {
					fmt.Fprintf(e.stderr, "coroner: %s\n", escape.Text(is.Detail))
				}
			}
		}
	}
	return f, nil
}

func unwrapPathError(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// parseSize reads 1024, 500MB, 20GiB, 1.5G.
func parseSize(s string) (int64, error) {
	t := strings.TrimSpace(strings.ToUpper(s))
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{
		{"KIB", 1 << 10}, {"MIB", 1 << 20}, {"GIB", 1 << 30}, {"TIB", 1 << 40},
		{"KB", 1000}, {"MB", 1000 * 1000}, {"GB", 1000 * 1000 * 1000}, {"TB", 1000 * 1000 * 1000 * 1000},
		{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40}, {"B", 1},
	} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("%q is not a size like 500MB or 20GiB", s)
	}
	return int64(v * float64(mult)), nil
}

// parseZone reads an IANA name or a fixed offset like +02:00.
func parseZone(s string) (*time.Location, error) {
	if t, err := time.Parse("-07:00", s); err == nil {
		_, off := t.Zone()
		return time.FixedZone(s, off), nil
	}
	z, err := time.LoadLocation(s)
	if err != nil {
		return nil, fmt.Errorf("%q is neither a zone name nor an offset like +02:00", s)
	}
	return z, nil
}
