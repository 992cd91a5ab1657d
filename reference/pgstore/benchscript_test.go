package pgstore

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// ci/bench database times the store's statements with pgbench, from copies in its
// scripts (pgbench sends its own parameters). The copies must stay the statements: every
// piece of each between two parameters appears in its script, in order, the statements
// in the order the store sends them.
func TestDatabaseBenchmarkRunsTheStoresStatements(t *testing.T) {
	for script, statements := range map[string][]string{
		"keyed-two-rows.sql":  {newKeyQueries[1]},
		"keyed-two-phase.sql": {insertKeyQuery, completeQueries[1]},
	} {
		t.Run(script, func(t *testing.T) {
			b, err := os.ReadFile("../../ci/internal/dbbench/sql/" + script)
			require.NoError(t, err)
			var body []string
			for _, line := range strings.Split(string(b), "\n") {
				if !strings.HasPrefix(line, "--") && !strings.HasPrefix(line, `\`) {
					body = append(body, line)
				}
			}
			have := normaliseSQL(strings.Join(body, " "))
			pos := 0
			for _, statement := range statements {
				for _, piece := range regexp.MustCompile(`\$\d+(::\w+)?`).Split(normaliseSQL(statement), -1) {
					i := strings.Index(have[pos:], piece)
					require.GreaterOrEqual(t, i, 0, "ci/internal/dbbench/sql/%s lacks %q after %q: update the script with the store's statement",
						script, piece, have[:pos])
					pos += i + len(piece)
				}
			}
		})
	}
}

// normaliseSQL collapses white space, and drops it inside parentheses' edges.
func normaliseSQL(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.NewReplacer("( ", "(", " )", ")").Replace(s)
}
