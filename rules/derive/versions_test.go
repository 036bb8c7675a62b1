package derive_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/rules/derive"
)

func TestVersionOrder(t *testing.T) {
	// Oldest first, as PEP 440 orders them; NCCL's tags and local parts read too.
	order := []string{"0.4.0.dev3", "0.4.0rc1", "0.4.0", "0.4.0.post1", "0.4.1", "v0.5.6.post1", "0.5.7", "0.6.18rc4", "0.6.18", "2.18.3", "2.18.3-1", "2.21.5+cuda12.4", "2.30.3"}
	var vs []derive.Version
	for _, s := range order {
		v, ok := derive.ParseVersion(s)
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
		_, ok := derive.ParseVersion(bad)
		assert.False(t, ok, bad)
	}
}

func TestParseRange(t *testing.T) {
	r, err := derive.ParseRange("nccl >=2.5.6, <2.30.3; vllm *")
	require.NoError(t, err)
	require.Len(t, r, 2)
	v := func(s string) derive.Version { x, _ := derive.ParseVersion(s); return x }
	assert.True(t, r[0].Contains(v("2.21.5")))
	assert.False(t, r[0].Contains(v("2.30.3")))
	assert.False(t, r[0].Contains(v("2.4.8")))
	assert.True(t, r[1].Contains(v("0.1.0")))
	for _, bad := range []string{"2.5.6", "nccl 2.5.6", "nccl >=two", "nccl =>2.5"} {
		_, err := derive.ParseRange(bad)
		assert.Error(t, err, bad)
	}
	f, err := derive.ParseFix("flashinfer 0.6.18rc4")
	require.NoError(t, err)
	assert.Equal(t, "flashinfer 0.6.18rc4", f.String())
	_, err = derive.ParseFix("flashinfer")
	assert.Error(t, err)
}

func TestVersionsOfTheBundle(t *testing.T) {
	f := &facts.Facts{
		Envs: []*facts.EnvReport{{Format: facts.KindPipList, Versions: map[string]string{"pip:nvidia-nccl-cu12": "2.21.5", "flashinfer": "0.6.17"}}},
		Logs: []*facts.Log{{Engine: facts.EngineSGLang, Version: "0.5.6.post1"}},
		Cmds: []*facts.Cmdline{{Container: map[string]string{"image": "vllm/vllm-openai:v0.8.5"}}},
	}
	got := derive.Derive(f, []*derive.Signature{}).Versions()
	for pkg, want := range map[string]string{"nccl": "2.21.5", "flashinfer": "0.6.17", "sglang": "0.5.6.post1", "vllm": "0.8.5"} {
		assert.Equal(t, want, got[pkg].Version.Text, pkg)
	}
	assert.Equal(t, "log banner", got["sglang"].From)
	// NCCL's own banner, when no package list says.
	f = &facts.Facts{Logs: []*facts.Log{{Unmatched: []*facts.LogEvent{{Msg: "NCCL INFO NCCL version 2.26.2+cuda12.8"}}}}}
	assert.Equal(t, "2.26.2", derive.Derive(f, []*derive.Signature{}).Versions()["nccl"].Version.Text)
}
