package envinfo

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/parser/facts"
)

// An env dump of more variables than MaxVars keeps the first ones and,
// up to MaxKeptVars, the CUDA, NCCL and engine ones; the rest are counted
// and said (issue 18, item 3: a million lines took 627 MB, 1.9 GB as HTML).
func TestHugeEnvDump(t *testing.T) {
	var b strings.Builder
	n := MaxKeptVars * 5
	for i := range n {
		fmt.Fprintf(&b, "APP_SETTING_%d=x\n", i)
	}
	b.WriteString("NCCL_P2P_DISABLE=1\n")
	out, issues := parse("env.txt", b.String(), facts.KindEnv)
	require.Len(t, out.Env, MaxVars+1)
	assert.Equal(t, "NCCL_P2P_DISABLE", out.Env[MaxVars].Name, "a variable that matters, past the cap")
	var sum []string
	for _, is := range issues {
		if is.Kind == facts.IssueSummarized {
			sum = append(sum, is.Detail)
		}
	}
	require.Len(t, sum, 1)
	assert.Contains(t, sum[0], fmt.Sprintf("%d environment variables", n+1))
}
