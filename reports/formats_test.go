package reports

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFormatsTable checks the registry itself: every value --format
// accepts names one format, every format has a renderer, words for the
// help and a file suffix of its own.
func TestFormatsTable(t *testing.T) {
	require.NotEmpty(t, Formats)
	assert.Equal(t, "md", Formats[0].Name, "the first format is the default")
	values, exts := map[string]bool{}, map[string]bool{}
	for _, f := range Formats {
		assert.NotEmpty(t, f.Doc, f.Name)
		assert.NotNil(t, f.Render, f.Name)
		assert.False(t, exts[f.Ext], "two formats save to .%s", f.Ext)
		exts[f.Ext] = true
		for _, v := range append([]string{f.Name}, f.Aliases...) {
			assert.False(t, values[v], "--format %s names two formats", v)
			values[v] = true
			got, err := LookupFormat(v)
			require.NoError(t, err, v)
			assert.Equal(t, f.Name, got.Name, v)
		}
	}
	assert.Len(t, FormatValues(), len(values))
	_, err := LookupFormat("pdf")
	assert.EqualError(t, err, `no report format "pdf"; the formats are `+strings.Join(FormatValues(), ", "))
}

// TestFormatHelp: --format's help names every format with its words, in
// the table's order (the CLI's help is pinned in cmd/coroner).
func TestFormatHelp(t *testing.T) {
	parts := strings.Split(FormatHelp(), "), ")
	require.Len(t, parts, len(Formats))
	for i, f := range Formats {
		assert.Equal(t, f.Name+" ("+f.Doc, strings.TrimSuffix(parts[i], ")"))
	}
}
