package profile_test

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/profile"
)

// TestPresetsAreDocumentedAsTheyAre checks the presets table of docs/profiles.md against
// the built-in profiles: the key, missing key, mismatch, in-flight, replay marker and
// retention columns must say what the code declares, and every built-in has its row.
func TestPresetsAreDocumentedAsTheyAre(t *testing.T) {
	doc, err := os.ReadFile("../docs/profiles.md")
	require.NoError(t, err)
	rows := map[string][]string{}
	inTable := false
	for _, line := range strings.Split(string(doc), "\n") {
		if strings.HasPrefix(line, "| preset | key | missing key | mismatch | in flight | replay marker | retention |") {
			inTable = true
			continue
		}
		if inTable && !strings.HasPrefix(line, "|") {
			break
		}
		if !inTable || strings.HasPrefix(line, "|---") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.Trim(strings.TrimSpace(cells[i]), "`")
		}
		rows[cells[0]] = cells[1:]
	}
	require.NotEmpty(t, rows, "docs/profiles.md lost its presets table")
	for _, name := range profile.BuiltinNames() {
		row, ok := rows[name]
		require.True(t, ok, "docs/profiles.md has no presets row for %s", name)
		p, err := profile.Builtin(name)
		require.NoError(t, err)
		if strings.HasPrefix(row[0], "the complete profile") {
			require.Equal(t, "Idempotency-Key", p.KeyHeader, name)
		} else {
			require.Equal(t, p.KeyHeader+p.KeyField, row[0], "%s: key", name)
		}
		require.Equal(t, orDash(p.Expect.MissingKey), row[1], "%s: missing key", name)
		require.Equal(t, itoaOrDash(p.Expect.Mismatch), row[2], "%s: mismatch", name)
		require.Equal(t, itoaOrDash(p.Expect.InFlight), row[3], "%s: in flight", name)
		require.Equal(t, orDash(p.Expect.ReplayHeader), row[4], "%s: replay marker", name)
		retention := "—"
		if p.Retention > 0 {
			retention = time.Duration(p.Retention).String()
			if strings.HasSuffix(retention, "h0m0s") {
				retention = strings.TrimSuffix(retention, "0m0s")
			}
		}
		require.Equal(t, retention, strings.Fields(row[5])[0], "%s: retention", name)
	}
}

func itoaOrDash(n int) string {
	if n == 0 {
		return "—"
	}
	return strconv.Itoa(n)
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}
