package rules_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/rules"
	"github.com/coroner-dev/coroner/rules/rulestest"
)

// The prior's two quiet answers: jobs that fit rule host-oom out, and a
// failed build without the memory or the job count says what is missing.
func TestBuildJobsMemoryQuietAnswers(t *testing.T) {
	run := func(path string) *rules.Result {
		c, err := rulestest.LoadTxtar(path)
		require.NoError(t, err)
		return c.RunWith(rules.Options{}, nil, false).Run
	}

	res := run("testdata/build-jobs-memory/sglang-flashinfer-build-max-jobs-4-roomy.txtar")
	var against []rules.RuledOut
	for _, r := range res.RuledOut {
		if r.Rule == "build-jobs-memory" {
			against = append(against, r)
		}
	}
	require.Len(t, against, 1)
	assert.Equal(t, rules.CatHostOOM, against[0].Category)
	assert.Contains(t, against[0].Why, "4 jobs (MAX_JOBS=4) on 512 GiB")
	assert.NotContains(t, causes(res), rules.CatHostOOM)

	res = run("testdata/build-jobs-memory/sglang-flashinfer-build-no-memory-evidence.txtar")
	var missing []string
	for _, in := range res.Inconclusive {
		if in.Rule == "build-jobs-memory" {
			missing = append(missing, in.Missing...)
		}
	}
	assert.Equal(t, []string{"the host's memory (/proc/meminfo or free)",
		"the build's parallelism (MAX_JOBS in the environment, or the CPU count)"}, missing)
}

func causes(res *rules.Result) []rules.Category {
	var out []rules.Category
	for _, c := range res.Verdict.Causes {
		out = append(out, c.Category)
	}
	return out
}
