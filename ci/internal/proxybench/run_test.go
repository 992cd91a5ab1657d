package proxybench_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// One short run of the real thing, as ci/bench proxy starts it: every target reports a
// row at the one connection count asked for, with no errors. It asserts what is
// reported, never how fast. It needs wrk, nginx and Toxiproxy 2.12 (ci/bench proxy
// installs them) and skips without them.
func TestShortRunReportsEveryTarget(t *testing.T) {
	if testing.Short() {
		t.Skip("starts six servers and wrk")
	}
	toxiproxy := filepath.Join(goEnv(t, "GOPATH"), "bin", "server")
	for _, tool := range []string{"wrk", "nginx"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (ci/bench proxy installs it)", tool)
		}
	}
	if _, err := os.Stat(toxiproxy); err != nil {
		t.Skip("Toxiproxy is not installed (ci/bench proxy installs it)")
	}
	dir := t.TempDir()
	for bin, pkg := range map[string]string{"idemproof": "../../../cmd/idemproof", "proxybench": "./cmd/proxybench"} {
		out, err := exec.Command("go", "build", "-o", filepath.Join(dir, bin), pkg).CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	cmd := exec.Command(filepath.Join(dir, "proxybench"), "-idemproof", filepath.Join(dir, "idemproof"),
		"-toxiproxy", toxiproxy, "-rounds", "1", "-duration", "1s", "-conns", "1")
	out, err := cmd.Output()
	require.NoError(t, err, "%s", out)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	require.Len(t, lines, 2+6, "%s", out)
	for i, target := range []string{"direct", "reverseproxy", "idemproof proxy", "idemproof proxy, 100 rules", "nginx", "toxiproxy"} {
		row := lines[2+i]
		require.True(t, strings.HasPrefix(row, "| "+target+" | 1 | "), row)
		require.True(t, strings.HasSuffix(row, " | 0 |"), "no errors: %s", row)
	}
}

func goEnv(t *testing.T, name string) string {
	t.Helper()
	out, err := exec.Command("go", "env", name).Output()
	require.NoError(t, err)
	return strings.TrimSpace(string(out))
}
