package scenarios_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/scenarios"
)

// The catalogue implements exactly the contract's IDs (docs/scenario-ids.md), each with
// its documented level, and every scenario is complete data.
func TestCatalogueMatchesContractIDs(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../docs/scenario-ids.md")
	require.NoError(t, err)
	row := regexp.MustCompile("(?m)^\\| ([a-z0-9-]+/[a-z0-9-]+) \\| ([A-Z]+) \\|")
	want := map[string]string{}
	for _, m := range row.FindAllStringSubmatch(string(doc), -1) {
		want[m[1]] = m[2]
	}
	require.Len(t, want, 74)

	got := map[string]string{}
	for _, s := range scenarios.Catalogue() {
		got[s.ID] = string(s.Level)
		require.NotEmpty(t, s.Description, s.ID)
		require.NotEmpty(t, s.Requirement, s.ID)
		require.NotEmpty(t, s.Source, s.ID)
		require.NotEmpty(t, s.Steps, s.ID)
		require.NotNil(t, s.Check, s.ID)
		require.Contains(t, s.Labels, "level:"+strings.ToLower(string(s.Level)), s.ID)
		require.Contains(t, s.Labels, "group:"+strings.SplitN(s.ID, "/", 2)[0], s.ID)
	}
	require.Equal(t, want, got)
}

func TestCatalogueIsSortedByID(t *testing.T) {
	t.Parallel()
	list := scenarios.Catalogue()
	for i := 1; i < len(list); i++ {
		require.Less(t, list[i-1].ID, list[i].ID)
	}
}

func TestSelectByGlobAndLabel(t *testing.T) {
	t.Parallel()
	got, err := scenarios.Select([]string{"replay/after-*"}, nil)
	require.NoError(t, err)
	require.Len(t, got, 8)

	got, err = scenarios.Select(nil, []string{"group:race", "level:must"})
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, "race/in-flight-409", got[0].ID)

	_, err = scenarios.Select([]string{"replay/nope"}, nil)
	require.ErrorContains(t, err, `"replay/nope"`)
	_, err = scenarios.Select([]string{"["}, nil)
	require.ErrorContains(t, err, "bad pattern")
}

func TestMarkdownTableHasARowPerScenario(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	require.NoError(t, scenarios.WriteMarkdownTable(&b, scenarios.Catalogue()))
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	require.Len(t, lines, 2+74)
	require.Contains(t, b.String(), "| `race/burst-1000` | SAFETY |")
}
