package rules

import (
	_ "embed"
	"testing"

	"github.com/stretchr/testify/require"
)

// The binary reads these two from their JSON forms alone (no entry line is
// needed from them), so only the tests hold the YAML.
var (
	//go:embed catalog/versions.yaml
	builtinVersions []byte
	//go:embed catalog/frames.yaml
	builtinFrames []byte
)

// TestCatalogJSONForms: the binary decodes the JSON form of each embedded
// catalog; each must decode to what its YAML does, field by field.
func TestCatalogJSONForms(t *testing.T) {
	for _, tc := range []struct {
		file       string
		yaml, json []byte
		into       func() any
	}{
		{"catalog/signatures.yaml", builtinCatalog, builtinCatalogJSON, func() any { return &[]*Signature{} }},
		{"catalog/exceptions.yaml", builtinClasses, builtinClassesJSON, func() any { return &[]*Signature{} }},
		{"catalog/versions.yaml", builtinVersions, builtinVersionsJSON, func() any { return &[]*DerivedRange{} }},
		{"catalog/frames.yaml", builtinFrames, builtinFramesJSON, func() any { return &FrameMap{} }},
	} {
		t.Run(tc.file, func(t *testing.T) {
			fromYAML, fromJSON := tc.into(), tc.into()
			require.NoError(t, decodeYAML(tc.yaml, tc.file)(fromYAML))
			require.NoError(t, decodeJSON(tc.json, tc.file)(fromJSON))
			require.Equal(t, fromYAML, fromJSON, "%s and its JSON form differ: run go generate ./rules/catalog", tc.file)
		})
	}
}
