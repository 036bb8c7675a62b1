package derive

import (
	"os"
	"path/filepath"
	"testing"

	catdata "github.com/coroner-dev/coroner/rules/catalog"

	"github.com/stretchr/testify/require"
)

// The binary reads these two from their JSON forms alone (no entry line is
// needed from them), so only the tests read the YAML.
var builtinVersions, builtinFrames = readCatalog("versions.yaml"), readCatalog("frames.yaml")

// readCatalog reads a YAML file of rules/catalog.
func readCatalog(name string) []byte {
	b, err := os.ReadFile(filepath.Join("..", "catalog", name))
	if err != nil {
		panic(err)
	}
	return b
}

// TestCatalogJSONForms: the binary decodes the JSON form of each embedded
// catalog; each must decode to what its YAML does, field by field.
func TestCatalogJSONForms(t *testing.T) {
	for _, tc := range []struct {
		file       string
		yaml, json []byte
		into       func() any
	}{
		{"catalog/signatures.yaml", catdata.Signatures, catdata.SignaturesJSON, func() any { return &[]*Signature{} }},
		{"catalog/exceptions.yaml", catdata.Exceptions, catdata.ExceptionsJSON, func() any { return &[]*Signature{} }},
		{"catalog/versions.yaml", builtinVersions, catdata.VersionsJSON, func() any { return &[]*DerivedRange{} }},
		{"catalog/frames.yaml", builtinFrames, catdata.FramesJSON, func() any { return &FrameMap{} }},
	} {
		t.Run(tc.file, func(t *testing.T) {
			fromYAML, fromJSON := tc.into(), tc.into()
			require.NoError(t, decodeYAML(tc.yaml, tc.file)(fromYAML))
			require.NoError(t, decodeJSON(tc.json, tc.file)(fromJSON))
			require.Equal(t, fromYAML, fromJSON, "%s and its JSON form differ: run go generate ./rules/catalog", tc.file)
		})
	}
}
