package kernlog

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/rules/catalog"
	"github.com/coroner-dev/coroner/rules/catalog/jsonform"
)

const catalogURL = "https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html"

// TestXidCatalogLoads: the embedded catalog passes the checks init runs
// (which would stop the program otherwise), every entry cites NVIDIA's
// catalog, and an entry with causes cites the cause matrix they come from.
// TestXidCatalog checks what the entries say.
func TestXidCatalogLoads(t *testing.T) {
	es, err := loadXids(yamlOf(catalog.Xid))
	require.NoError(t, err)
	// The binary reads the JSON form: it must say what the YAML says.
	fromJSON, err := loadXids(func(v any) error { return jsonform.Decode(catalog.XidJSON, v) })
	require.NoError(t, err)
	require.Equal(t, es, fromJSON, "rules/catalog/json/xid.json is not xid.yaml: run go generate ./rules/catalog")
	assert.Len(t, es, 50)
	assert.Equal(t, len(es), len(XidCodes()))
	for _, e := range es {
		assert.Contains(t, e.References, catalogURL, "Xid %d", e.Code)
		if len(e.Causes) > 0 {
			assert.Contains(t, e.References, "https://docs.nvidia.com/deploy/xid-errors/index.html", "Xid %d", e.Code)
		}
	}
	x, ok := XidInfo(79)
	require.True(t, ok)
	assert.Equal(t, "GPU has fallen off the bus (not reachable over PCIe)", x.Meaning)
	assert.Equal(t, []string{"HW", "Drv", "Mem", "Bus", "Th"}, x.Causes)
}

func TestLoadXidsRejects(t *testing.T) {
	const ok = "- code: 8\n  name: A_B\n  meaning: m\n  severity: error\n  action: a\n  references: [" + catalogURL + "]\n"
	_, err := loadXids(yamlOf([]byte(ok)))
	require.NoError(t, err, "the base entry of the cases below")
	tests := []struct {
		name, yaml, err string
	}{
		{"empty", "", "no entries"},
		{"unknown field", ok + "  colour: red\n", "decoding"},
		{"not sorted", ok + "- code: 7\n  name: C\n  meaning: m\n  severity: error\n  action: a\n  references: [" + catalogURL + "]\n",
			"entry 2 (code 7): codes must ascend, each once: 7 comes after 8"},
		{"twice", ok + ok, "entry 2 (code 8): codes must ascend"},
		{"no code", "- name: A\n  meaning: m\n  severity: error\n  action: a\n  references: [" + catalogURL + "]\n", "code must be a positive number"},
		{"bad name", "- code: 8\n  name: fallen off\n  meaning: m\n  severity: error\n  action: a\n  references: [" + catalogURL + "]\n", `name "fallen off"`},
		{"no meaning", "- code: 8\n  name: A\n  severity: error\n  action: a\n  references: [" + catalogURL + "]\n", "meaning is empty"},
		{"no action", "- code: 8\n  name: A\n  meaning: m\n  severity: error\n  references: [" + catalogURL + "]\n", "action is empty"},
		{"bad severity", "- code: 8\n  name: A\n  meaning: m\n  severity: fatal\n  action: a\n  references: [" + catalogURL + "]\n", `severity "fatal"`},
		{"bad cause", "- code: 8\n  name: A\n  meaning: m\n  causes: [HW, GPU]\n  severity: error\n  action: a\n  references: [" + catalogURL + "]\n", `cause "GPU"`},
		{"no reference", "- code: 8\n  name: A\n  meaning: m\n  severity: error\n  action: a\n", "no references"},
		{"plain http", "- code: 8\n  name: A\n  meaning: m\n  severity: error\n  action: a\n  references: [http://example.com/x]\n", "not an https URL"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadXids(yamlOf([]byte(tc.yaml)))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.err)
		})
	}
}

// yamlOf decodes the YAML form itself.
func yamlOf(data []byte) func(any) error {
	return func(v any) error { return jsonform.DecodeYAML(data, v) }
}
