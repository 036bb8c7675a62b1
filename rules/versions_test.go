package rules_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/rules"
	"github.com/coroner-dev/coroner/rules/rulestest"
)

func TestVersionOrder(t *testing.T) {
	// Oldest first, as PEP 440 orders them; NCCL's tags and local parts read too.
	order := []string{"0.4.0.dev3", "0.4.0rc1", "0.4.0", "0.4.0.post1", "0.4.1", "v0.5.6.post1", "0.5.7", "0.6.18rc4", "0.6.18", "2.18.3", "2.18.3-1", "2.21.5+cuda12.4", "2.30.3"}
	var vs []rules.Version
	for _, s := range order {
		v, ok := rules.ParseVersion(s)
		require.True(t, ok, s)
		vs = append(vs, v)
	}
	for i := range vs {
		for j := range vs {
			want := 0
			switch {
			case i < j:
				want = -1
			case i > j:
				want = 1
			}
			assert.Equal(t, want, vs[i].Compare(vs[j]), "%s vs %s", order[i], order[j])
		}
	}
	for _, bad := range []string{"", "latest", "main", "v", "1.x"} {
		_, ok := rules.ParseVersion(bad)
		assert.False(t, ok, bad)
	}
}

func TestParseRange(t *testing.T) {
	r, err := rules.ParseRange("nccl >=2.5.6, <2.30.3; vllm *")
	require.NoError(t, err)
	require.Len(t, r, 2)
	v := func(s string) rules.Version { x, _ := rules.ParseVersion(s); return x }
	assert.True(t, r[0].Contains(v("2.21.5")))
	assert.False(t, r[0].Contains(v("2.30.3")))
	assert.False(t, r[0].Contains(v("2.4.8")))
	assert.True(t, r[1].Contains(v("0.1.0")))
	for _, bad := range []string{"2.5.6", "nccl 2.5.6", "nccl >=two", "nccl =>2.5"} {
		_, err := rules.ParseRange(bad)
		assert.Error(t, err, bad)
	}
	f, err := rules.ParseFix("flashinfer 0.6.18rc4")
	require.NoError(t, err)
	assert.Equal(t, "flashinfer 0.6.18rc4", f.String())
	_, err = rules.ParseFix("flashinfer")
	assert.Error(t, err)
}

// runCase runs the built-in rules over a fixture and returns the signature
// finding of entry id.
func runCase(t *testing.T, path, id string) rules.Finding {
	t.Helper()
	c, err := rulestest.LoadTxtar(path)
	require.NoError(t, err)
	res := c.RunWith(rules.Options{}, nil, false)
	require.NotNil(t, res.Run, res.Problems)
	for _, f := range res.Run.Findings {
		if f.Rule == "signature" && f.Signature == id {
			return f
		}
	}
	t.Fatalf("%s: no signature finding of %s", path, id)
	return rules.Finding{}
}

// A known-fixed message in a release before the fix gets the upgrade
// remedy; the same message in a release with the fix weighs less and says
// why.
func TestVersionAwareSignature(t *testing.T) {
	const id = "flashinfer-xqa-head-dim-512"
	before := runCase(t, "testdata/signature/vllm-flashinfer-xqa-head-dim-before-fix.txtar", id)
	after := runCase(t, "testdata/signature/vllm-flashinfer-xqa-head-dim-after-fix.txtar", id)
	assert.Contains(t, before.Remedy, "Fixed in flashinfer 0.6.18rc4; this run uses flashinfer 0.6.17: upgrade.")
	assert.NotContains(t, after.Remedy, "upgrade.")
	assert.Contains(t, after.Message, "which has the fix")
	assert.Contains(t, after.Why, "it weighs less")
	assert.Less(t, after.Confidence, before.Confidence)

	c, err := rulestest.LoadTxtar("testdata/signature/vllm-flashinfer-xqa-head-dim-after-fix.txtar")
	require.NoError(t, err)
	res := c.RunWith(rules.Options{}, nil, false)
	against := 0
	for _, r := range res.Run.RuledOut {
		if r.Rule == "signature" && r.Category == rules.CatAttentionBackend {
			against++
		}
	}
	assert.Equal(t, 1, against, "the fixed version counts against the cause")
}

func TestVersionsOfTheBundle(t *testing.T) {
	f := &facts.Facts{
		Envs: []*facts.EnvReport{{Format: facts.KindPipList, Versions: map[string]string{"pip:nvidia-nccl-cu12": "2.21.5", "flashinfer": "0.6.17"}}},
		Logs: []*facts.Log{{Engine: facts.EngineSGLang, Version: "0.5.6.post1"}},
		Cmds: []*facts.Cmdline{{Container: map[string]string{"image": "vllm/vllm-openai:v0.8.5"}}},
	}
	got := rules.VersionsOf(f)
	for pkg, want := range map[string]string{"nccl": "2.21.5", "flashinfer": "0.6.17", "sglang": "0.5.6.post1", "vllm": "0.8.5"} {
		assert.Equal(t, want, got[pkg].Version.Text, pkg)
	}
	assert.Equal(t, "log banner", got["sglang"].From)
	// NCCL's own banner, when no package list says.
	f = &facts.Facts{Logs: []*facts.Log{{Unmatched: []*facts.LogEvent{{Msg: "NCCL INFO NCCL version 2.26.2+cuda12.8"}}}}}
	assert.Equal(t, "2.26.2", rules.VersionsOf(f)["nccl"].Version.Text)
}
