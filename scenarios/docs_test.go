package scenarios_test

import (
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/scenarios"
)

// The catalogue table in docs/scenarios.md is generated from the code and must not drift.
// Regenerate with IDEMPROOF_UPDATE_DOCS=1 go test ./scenarios -run TestDocsCatalogueTable.
func TestDocsCatalogueTable(t *testing.T) {
	const path, begin, end = "../docs/scenarios.md", "<!-- catalogue:begin -->\n", "<!-- catalogue:end -->"
	doc, err := os.ReadFile(path)
	require.NoError(t, err)
	var table strings.Builder
	require.NoError(t, scenarios.WriteMarkdownTable(&table, scenarios.Catalogue()))
	s := string(doc)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	require.True(t, i >= 0 && j > i, "docs/scenarios.md lost its catalogue markers")
	want := s[:i+len(begin)] + table.String() + s[j:]
	if os.Getenv("IDEMPROOF_UPDATE_DOCS") == "1" {
		require.NoError(t, os.WriteFile(path, []byte(want), 0o644))
		return
	}
	require.Equal(t, want, s, "docs/scenarios.md is stale: IDEMPROOF_UPDATE_DOCS=1 go test ./scenarios -run TestDocsCatalogueTable")
}

// The README's catalogue table (ID, level, what it checks) is generated from the code
// too. Regenerate with IDEMPROOF_UPDATE_DOCS=1 go test ./scenarios -run TestReadmeCatalogueTable.
func TestReadmeCatalogueTable(t *testing.T) {
	const path, begin, end = "../README.md", "<!-- scenarios:begin -->\n", "<!-- scenarios:end -->"
	doc, err := os.ReadFile(path)
	require.NoError(t, err)
	list := scenarios.Catalogue()
	sort.Slice(list, func(i, j int) bool { return list[i].ID < list[j].ID })
	var table strings.Builder
	table.WriteString("| ID | level | checks |\n|---|---|---|\n")
	for _, sc := range list {
		table.WriteString("| `" + sc.ID + "` | " + string(sc.Level) + " | " + strings.ReplaceAll(sc.Description, "|", `\|`) + " |\n")
	}
	s := string(doc)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	require.True(t, i >= 0 && j > i, "README.md lost its scenarios markers")
	want := s[:i+len(begin)] + table.String() + s[j:]
	if os.Getenv("IDEMPROOF_UPDATE_DOCS") == "1" {
		require.NoError(t, os.WriteFile(path, []byte(want), 0o644))
		return
	}
	require.Equal(t, want, s, "README.md's catalogue table is stale: IDEMPROOF_UPDATE_DOCS=1 go test ./scenarios -run TestReadmeCatalogueTable")
}
