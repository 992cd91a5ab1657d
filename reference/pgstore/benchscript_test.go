package pgstore

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// ci/bench database times the one-transaction statement for a new key with pgbench,
// from a copy in its script (pgbench sends its own parameters). The copy must stay the
// statement: every piece of it between two parameters appears in the script, in order.
func TestDatabaseBenchmarkRunsTheNewKeyStatement(t *testing.T) {
	script, err := os.ReadFile("../../ci/internal/dbbench/sql/keyed-two-rows.sql")
	require.NoError(t, err)
	var body []string
	for _, line := range strings.Split(string(script), "\n") {
		if !strings.HasPrefix(line, "--") && !strings.HasPrefix(line, `\`) {
			body = append(body, line)
		}
	}
	have := normaliseSQL(strings.Join(body, " "))
	pos := 0
	for _, piece := range regexp.MustCompile(`\$\d+::\w+`).Split(normaliseSQL(newKeyQueries[1]), -1) {
		i := strings.Index(have[pos:], piece)
		require.GreaterOrEqual(t, i, 0, "ci/internal/dbbench/sql/keyed-two-rows.sql lacks %q of newKeyQueries[1] after %q: update the script with the statement",
			piece, have[:pos])
		pos += i + len(piece)
	}
}

// normaliseSQL collapses white space, and drops it inside parentheses' edges.
func normaliseSQL(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.NewReplacer("( ", "(", " )", ")").Replace(s)
}
