package rules_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/rules"
	catdata "github.com/coroner-dev/coroner/rules/catalog"
	"github.com/coroner-dev/coroner/rules/derive"
	"github.com/coroner-dev/coroner/rules/rulestest"
)

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

// The built-in catalog parses, its patterns compile, and every owner it
// names is a registered rule.
func TestBuiltinCatalogIsValid(t *testing.T) {
	sigs, err := derive.ParseCatalog(catdata.Signatures, "catalog/signatures.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, sigs)
	ids := map[string]bool{}
	for _, r := range rules.Registered() {
		ids[r.ID] = true
	}
	for _, s := range sigs {
		if s.Owner != "" {
			assert.True(t, ids[s.Owner], "signature %s names owner %s, which is no registered rule", s.ID, s.Owner)
		}
		assert.NotEmpty(t, s.Remedy, "signature %s needs a remedy (coroner rules explain prints it)", s.ID)
	}
	// Patterns compile at their first use; every one must.
	for _, s := range rules.BuiltinCatalog() {
		assert.NotNil(t, s.Regexp(), "signature %s: its pattern does not compile", s.ID)
	}
}
