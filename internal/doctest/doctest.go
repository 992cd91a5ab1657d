// Package doctest keeps the generated parts of the documents true: a table made from the
// code (the catalogue, the flaws) stands between two markers in a Markdown file, and a
// test holds the file to what the code makes now. A leaf for tests: it imports nothing of
// ours.
package doctest

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// UpdateEnv names the environment variable that makes RequireSection rewrite the
// section instead of failing: IDEMPROOF_UPDATE_DOCS=1 go test ./pkg -run TestName.
const UpdateEnv = "IDEMPROOF_UPDATE_DOCS"

// RequireSection fails t unless the text of the file at path between the lines
// <!-- name:begin --> and <!-- name:end --> is content; with UpdateEnv=1 it writes
// content there instead. regenerate is the command that does it, for the message.
func RequireSection(t testing.TB, path, name, content, regenerate string) {
	t.Helper()
	begin, end := "<!-- "+name+":begin -->\n", "<!-- "+name+":end -->"
	doc, err := os.ReadFile(path)
	require.NoError(t, err)
	s := string(doc)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	require.True(t, i >= 0 && j > i, "%s lost its %s markers", path, name)
	want := s[:i+len(begin)] + content + s[j:]
	if os.Getenv(UpdateEnv) == "1" {
		require.NoError(t, os.WriteFile(path, []byte(want), 0o644))
		return
	}
	require.Equal(t, want, s, "%s: the %s section is stale: %s=1 %s", path, name, UpdateEnv, regenerate)
}
