package derive

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRequiredLiterals(t *testing.T) {
	for _, c := range []struct {
		pattern string
		lits    []string // nil: no prefilter
		fold    bool
	}{
		{`no kernel image is available`, []string{"no kernel image is available"}, false},
		// The part whose shortest literal is longest: 13 bytes against 12.
		{`CUDA error: (out of memory|an illegal memory access)`, []string{"out of memory", "an illegal memory access"}, false},
		{`(NCCL WARN|NCCL error)`, []string{"NCCL "}, false}, // the parser factors the common prefix out
		{`(Xid|NCCL WARN|peer access)`, []string{"Xid", "NCCL WARN", "peer access"}, false},
		{`(?i)watchdog caught`, []string{"watchdog caught"}, true},
		{`sm_\d+ is not supported`, []string{" is not supported"}, false},
		{`(requires sm_?\d+|only supported on)`, []string{"requires sm", "only supported on"}, false},
		// An alternative without a literal, an optional part, a short one:
		// no literal is required, so the regexp always runs.
		{`(foo bar|\d+)`, nil, false},
		{`(abc)?\d+`, nil, false},
		{`ab\d`, nil, false},
		{`(`, nil, false},
		// Unicode folding is not ToLower: non-ASCII literals are left to the regexp.
		{`(?i)straße kaputt`, nil, false},
	} {
		pf := newPrefilter(c.pattern)
		assert.Equal(t, c.lits, pf.lits, c.pattern)
		assert.Equal(t, c.fold, pf.fold, c.pattern)
	}
}

func TestPrefilterFoldsOnlyASCII(t *testing.T) {
	s := &Signature{Pattern: `(?i)stuck`}
	s.rx = &lazyRegexp{pattern: s.Pattern}
	s.pf = newPrefilter(s.Pattern)
	assert.True(t, s.Match("Worker STUCK for 300s"))
	assert.False(t, s.Match("worker stalled"))
	// 'ſ' (long s) folds to 's' in the regexp but is no 's' to ToLower.
	assert.True(t, s.Match("ſtuck"))
}

// The prefilter never hides a match: every signature of the catalog agrees
// with its bare regexp on every line of every real log in the repository.
func TestPrefilterNeverHidesAMatch(t *testing.T) {
	sigs := BuiltinCatalog()
	filtered := 0
	for _, s := range sigs {
		if len(s.pf.lits) > 0 {
			filtered++
		}
	}
	t.Logf("%d of %d signatures have a prefilter", filtered, len(sigs))
	files, err := filepath.Glob("../../fixtures/corpus/fulllogs/*/*")
	require.NoError(t, err)
	more, _ := filepath.Glob("../testdata/*/*.txtar")
	files = append(files, more...)
	require.NotEmpty(t, files)
	lines, matched := 0, 0
	for _, name := range files {
		f, err := os.Open(name)
		require.NoError(t, err)
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			lines++
			for _, s := range sigs {
				want := s.Regexp().MatchString(line)
				if want {
					matched++
				}
				require.Equal(t, want, s.Match(line), "%s on %s: %q", s.ID, name, line)
				if !s.pf.fold {
					continue
				}
				up := strings.ToUpper(line)
				require.Equal(t, s.Regexp().MatchString(up), s.Match(up), "%s on %s, upper case: %q", s.ID, name, up)
			}
		}
		f.Close()
	}
	t.Logf("%d lines, %d matches", lines, matched)
	assert.Positive(t, matched, "some lines match, or the test proves nothing")
}
