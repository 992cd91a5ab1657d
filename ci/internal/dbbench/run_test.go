package dbbench_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idemproof/idemproof/ci/internal/dbbench"
	"github.com/idemproof/idemproof/internal/dockertest"
	"github.com/stretchr/testify/require"
)

// One short run of the real thing, as ci/bench database starts it: every model's scripts
// run against pgstore's schema, and the command checks that each run wrote one refund
// (and, keyed, one key record) per transaction pgbench reported, or it fails. It asserts
// what is reported, never how fast.
func TestShortRunReportsEveryModel(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL and runs pgbench")
	}
	dockertest.Require(t, dockertest.PostgresImage())
	bin := filepath.Join(t.TempDir(), "dbbench")
	out, err := exec.Command("go", "build", "-o", bin, "./cmd/dbbench").CombinedOutput()
	require.NoError(t, err, "%s", out)
	cmd := exec.Command(bin, "-rounds", "1", "-duration", "1s", "-clients", "2")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err = cmd.Output()
	require.NoError(t, err, "%s", stderr.String())
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	require.Len(t, lines, 2+len(dbbench.Models), "%s", out)
	for i, m := range dbbench.Models {
		require.True(t, strings.HasPrefix(lines[2+i], "| "+m.Name+" | 1 | "), lines[2+i])
	}
	require.Contains(t, stderr.String(), "fsync off")
}

func TestBadFlagsSayWhatToFix(t *testing.T) {
	out, err := exec.Command("go", "run", "./cmd/dbbench", "-duration", "1500ms").CombinedOutput()
	require.Error(t, err)
	require.Contains(t, string(out), "-duration must be whole seconds, such as 5s (pgbench -T), got 1.5s")
}
