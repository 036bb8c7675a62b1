package derive

import (
	"strings"
	"testing"

	catdata "github.com/coroner-dev/coroner/rules/catalog"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every entry of the catalog is complete: a category (or a relay), a
// remedy, a version range (its own, or derived from the release tags by
// scripts/catalog-versions), references that are URLs, and, where it names
// its source, a reference to the source at a release tag.
func TestBuiltinCatalogEntriesAreComplete(t *testing.T) {
	sigs := BuiltinCatalog()
	n := 0
	for _, s := range sigs {
		if s.Layer == LayerClass {
			continue
		}
		n++
		assert.True(t, s.Relay || s.Category.Valid(), "%s: no category", s.ID)
		assert.NotEmpty(t, s.Remedy, "%s: no remedy", s.ID)
		assert.NotEmpty(t, s.AffectedRange(), "%s: no version range (affected, or a source the generator derives one from)", s.ID)
		assert.NotEmpty(t, s.References, "%s: no reference", s.ID)
		tagged := false
		for _, r := range s.References {
			assert.True(t, strings.HasPrefix(r, "https://"), "%s: reference %q is no https URL", s.ID, r)
			if strings.Contains(r, "/blob/") && !strings.Contains(r, "/blob/main/") {
				tagged = true
			}
		}
		if len(s.Source) > 0 {
			assert.True(t, tagged, "%s names its source but cites it at no release tag", s.ID)
		}
		for _, c := range s.AffectedRange() {
			assert.Contains(t, versionKeys, c.Package, "%s: %s is no package the bundle's versions are read for", s.ID, c.Package)
		}
		if f := s.FixedIn(); f != nil {
			assert.Contains(t, versionKeys, f.Package, "%s: fixed names %s, no package the bundle's versions are read for", s.ID, f.Package)
		}
	}
	assert.GreaterOrEqual(t, n, 150, "the catalog holds %d exact entries", n)
}

// The ranges derived from release tags name entries that exist, and an
// entry whose source was searched has its derived range or its own.
func TestDerivedVersionsAreCurrent(t *testing.T) {
	sigs, err := ParseCatalog(catdata.Signatures, "catalog/signatures.yaml")
	require.NoError(t, err)
	ds, err := ParseDerived(builtinVersions, "catalog/versions.yaml")
	require.NoError(t, err)
	require.NoError(t, ApplyDerived(sigs, ds))
	searched := map[string]bool{}
	for _, d := range ds {
		searched[d.Repo] = true
	}
	for _, s := range sigs {
		for _, p := range s.Source {
			if !searched[p.Repo] {
				continue
			}
			found := false
			for _, d := range s.Derived {
				found = found || d.Repo == p.Repo
			}
			assert.True(t, found, "%s names a source in %s, which scripts/catalog-versions searched, but catalog/versions.yaml has no range for it: run the generator again", s.ID, p.Repo)
		}
	}
}

func TestParseCatalogReportsAllErrors(t *testing.T) {
	bad := `- id: Bad_ID
  pattern: '('
  category: nonsense
  confidence: 2
  title: x
- id: ok-one
  pattern: 'x'
  category: config
  confidence: 0.5
  title: fine
`
	_, err := ParseCatalog([]byte(bad), "pack.yaml")
	require.Error(t, err)
	msg := err.Error()
	assert.Contains(t, msg, "pack.yaml:1")
	for _, want := range []string{"kebab-case", "pattern", "taxonomy", "confidence"} {
		assert.True(t, strings.Contains(msg, want), "error should mention %s: %s", want, msg)
	}
}

// The catalog is parsed once; each caller gets a slice of its own, so that
// appending a pack's signatures to one never shows in another's.
func TestBuiltinCatalogSlicesAreTheCallers(t *testing.T) {
	a, b := BuiltinCatalog(), BuiltinCatalog()
	require.NotEmpty(t, a)
	assert.Same(t, a[0], b[0], "entries are parsed once")
	c := append(a[:1], &Signature{ID: "mine"})
	assert.Equal(t, "mine", c[1].ID)
	assert.NotEqual(t, "mine", b[1].ID)
	assert.NotEqual(t, "mine", BuiltinCatalog()[1].ID)
}
