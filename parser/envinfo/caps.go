package envinfo

import (
	"github.com/coroner-dev/coroner/internal/envpolicy"
	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/textio"
)

// An environment holds a few hundred variables; a dump of a million (a
// generated file, a leak) must not cost a million records, nor a report
// that lists them. The first MaxVars of a file are kept as they come, then
// only the variables that shape the GPU, NCCL and engine behavior, up to
// MaxKeptVars; the rest are counted.
const (
	MaxVars     = 2_000
	MaxKeptVars = 4_000
)

// varCap counts the variables of one file.
type varCap struct {
	kept, dropped int
}

// keep reports whether the variable name is kept, counting it if not.
func (c *varCap) keep(name string) bool {
	if c.kept < MaxVars {
		c.kept++
		return true
	}
	// Past MaxVars, the variables that matter (envpolicy.Keep): what the
	// report's environment lists and the rules read.
	if c.kept < MaxKeptVars && envpolicy.Matters(name, envpolicy.Keep) {
		c.kept++
		return true
	}
	c.dropped++
	return false
}

// report says on the file what was counted, not kept.
func (c *varCap) report(in *textio.Input) {
	if c.dropped > 0 {
		in.IssueAt(0, facts.IssueSummarized,
			"%d environment variables: kept the first %d and %d more of CUDA, NCCL, engine and library settings; the other %d were counted, not kept",
			c.kept+c.dropped, min(c.kept, MaxVars), max(c.kept-MaxVars, 0), c.dropped)
	}
}
