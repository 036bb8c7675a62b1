package kernlog

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/textio"
)

// The fuzzer found a kernel line whose invalid bytes, replaced by U+FFFD
// (three bytes each), made the kept text longer than its bound.
func TestReplacementCharactersKeepTheBound(t *testing.T) {
	line := "[  227.480184] Memory cgroup out of memory: Killed process 1320 (python3) " + strings.Repeat("\xff", 2*maxText) + "\n"
	out := &facts.Facts{Clocks: map[string]facts.Clock{}}
	Parse(textio.Lines("dmesg.txt", line), facts.KindKernelLog, out)
	for _, e := range out.Kernel {
		assert.LessOrEqual(t, len(e.Text), maxText)
	}
}
