package scenarios_test

import (
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/internal/doctest"
	"github.com/idemproof/idemproof/scenarios"
)

// The catalogue table in docs/scenarios.md is generated from the code and must not drift.
func TestDocsCatalogueTable(t *testing.T) {
	t.Parallel()
	var table strings.Builder
	require.NoError(t, scenarios.WriteMarkdownTable(&table, scenarios.Catalogue()))
	doctest.RequireSection(t, "../docs/scenarios.md", "catalogue", table.String(), "go test ./scenarios -run TestDocsCatalogueTable")
}

// The README's catalogue table (ID, level, what it checks) is generated from the code
// too.
func TestReadmeCatalogueTable(t *testing.T) {
	t.Parallel()
	list := scenarios.Catalogue()
	sort.Slice(list, func(i, j int) bool { return list[i].ID < list[j].ID })
	var table strings.Builder
	table.WriteString("| ID | level | checks |\n|---|---|---|\n")
	for _, sc := range list {
		table.WriteString("| `" + sc.ID + "` | " + string(sc.Level) + " | " + strings.ReplaceAll(sc.Description, "|", `\|`) + " |\n")
	}
	doctest.RequireSection(t, "../README.md", "scenarios", table.String(), "go test ./scenarios -run TestReadmeCatalogueTable")
}
