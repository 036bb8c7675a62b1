package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/coroner-dev/coroner/parser"
	"github.com/coroner-dev/coroner/reports"
)

// progressFrom is the input size from which a parse shows its progress: a
// smaller bundle is read before anyone would look at the line.
const progressFrom = 100 << 20

// progressEvery is how often the progress line is redrawn.
const progressEvery = 250 * time.Millisecond

// progressLine draws "coroner: 47% · 480.0 MiB of 1.0 GiB · 3 files" on a
// terminal's stderr while a parse runs, and clears it when done.
type progressLine struct {
	e     *env
	pr    *parser.Progress
	total int64 // stored bytes of the inputs; 0 when unknown (stdin)
	from  int64
	every time.Duration
	done  chan struct{}
	wg    sync.WaitGroup
	drawn bool
}

// startProgress starts the line for a parse of paths, or returns nil when
// there is to be none: --quiet, stderr not a terminal, or a small input.
func startProgress(e *env, quiet bool, paths []string) *progressLine {
	if quiet || !e.stderrTTY {
		return nil
	}
	from, every := int64(progressFrom), progressEvery
	if e.progressFrom > 0 {
		from = e.progressFrom
	}
	if e.progressEvery > 0 {
		every = e.progressEvery
	}
	total, known := storedSize(paths)
	if known && total < from {
		return nil
	}
	if !known {
		total = 0
	}
	p := &progressLine{e: e, pr: &parser.Progress{}, total: total, from: from, every: every, done: make(chan struct{})}
	p.wg.Add(1)
	go p.run()
	return p
}

func (p *progressLine) progress() *parser.Progress {
	if p == nil {
		return nil
	}
	return p.pr
}

func (p *progressLine) run() {
	defer p.wg.Done()
	t := time.NewTicker(p.every)
	defer t.Stop()
	for {
		select {
		case <-p.done:
			if p.drawn {
				fmt.Fprint(p.e.stderr, "\r\x1b[K")
			}
			return
		case <-t.C:
			stored := p.pr.Stored.Load()
			if p.total == 0 && stored < p.from {
				continue // stdin: shown once it is big enough to wait for
			}
			fmt.Fprintf(p.e.stderr, "\r\x1b[Kcoroner: %s", progressText(stored, p.total, p.pr.Files.Load()))
			p.drawn = true
		}
	}
}

// stop clears the line; it is safe on nil.
func (p *progressLine) stop() {
	if p == nil {
		return
	}
	close(p.done)
	p.wg.Wait()
}

// progressText says how far a parse has got. A zip's index is read more
// than once, so the share stops at 99% until the parse is over.
func progressText(stored, total, files int64) string {
	f := fmt.Sprintf("%d files parsed", files)
	if files == 1 {
		f = "1 file parsed"
	}
	if total <= 0 {
		return fmt.Sprintf("%s read · %s", reports.HumanBytes(stored), f)
	}
	pct := min(stored*100/total, 99)
	return fmt.Sprintf("%d%% · %s of %s · %s", pct, reports.HumanBytes(min(stored, total)), reports.HumanBytes(total), f)
}

// storedSize adds up the sizes of the inputs as stored; known is false when
// one of them is stdin or cannot be read (the parse will say why).
func storedSize(paths []string) (total int64, known bool) {
	for _, p := range paths {
		if p == "-" {
			return 0, false
		}
		st, err := os.Stat(p)
		if err != nil {
			return 0, false
		}
		if !st.IsDir() {
			total += st.Size()
			continue
		}
		// The walk follows no links, so neither does the count.
		_ = filepath.WalkDir(p, func(_ string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				if info, err := d.Info(); err == nil {
					total += info.Size()
				}
			}
			return nil
		})
	}
	return total, true
}
