package jsonform

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGeneratedCurrent: every JSON form in rules/catalog/json is what gen
// writes from its YAML now, and no JSON form is left of a YAML that is gone.
// (That the JSON decodes to what the YAML does is tested where each catalog
// is decoded: rules and parser/kernlog.)
func TestGeneratedCurrent(t *testing.T) {
	yamls, err := filepath.Glob("../*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, yamls)
	for _, y := range yamls {
		src, err := os.ReadFile(y)
		require.NoError(t, err)
		want, err := FromYAML(src)
		require.NoError(t, err, y)
		j := filepath.Join("..", "json", strings.TrimSuffix(filepath.Base(y), ".yaml")+".json")
		got, err := os.ReadFile(j)
		require.NoError(t, err, "%s has no JSON form: run go generate ./rules/catalog", y)
		assert.True(t, string(want) == string(got), "%s is not what %s says now: run go generate ./rules/catalog", j, y)
	}
	jsons, err := filepath.Glob("../json/*.json")
	require.NoError(t, err)
	assert.Len(t, jsons, len(yamls), "a JSON form without its YAML in rules/catalog/json")
}

func TestFromYAML(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"order kept", "- b: 1\n  a: x\n", "[\n {\n  \"b\": 1,\n  \"a\": \"x\"\n }\n]\n"},
		{"block text and HTML", "t: |\n  <frozen> & more\n  two\n", "{\n \"t\": \"<frozen> & more\\ntwo\\n\"\n}\n"},
		{"numbers and null", "a: 0.9\nb: 13\nc:\nd: true\n", "{\n \"a\": 0.9,\n \"b\": 13,\n \"c\": null,\n \"d\": true\n}\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := FromYAML([]byte(tc.in))
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(got))
		})
	}
	_, err := FromYAML([]byte("a: [1,\n"))
	assert.Error(t, err)
	_, err = FromYAML([]byte("? [1, 2]\n: x\n"))
	assert.Error(t, err, "a key that is not a string")
}

func TestDecodeStrict(t *testing.T) {
	var v struct {
		A int `json:"a"`
	}
	require.NoError(t, Decode([]byte(`{"a": 1}`), &v))
	assert.Equal(t, 1, v.A)
	assert.Error(t, Decode([]byte(`{"a": 1, "b": 2}`), &v), "a field the type does not have")
	assert.Error(t, Decode([]byte(`{"a": 1} {"a": 2}`), &v), "data after the value")
	assert.Error(t, Decode([]byte(`{"a": 1}}`), &v), "a stray closing brace")
	assert.Error(t, Decode([]byte(`{"a": 1}]`), &v), "a stray closing bracket")
	require.NoError(t, Decode([]byte("{\"a\": 1}\n"), &v), "a final newline is no data")
}
