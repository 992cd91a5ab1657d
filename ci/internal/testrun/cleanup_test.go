// Package testrun_test checks what ci/test leaves behind on the Docker engine.
package testrun_test

import (
	"archive/tar"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func docker(t *testing.T, args ...string) (string, error) {
	t.Helper()
	out, err := exec.Command("docker", args...).CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// ci/test removes what its own run started (the label dev.idemproof.run=<its run id>)
// and nothing else: a container another project's testcontainers run left — labelled
// org.testcontainers=true like ours — survives it. It used to remove every container
// with that label on the machine.
func TestCITestRemovesOnlyItsOwnRun(t *testing.T) {
	if _, err := docker(t, "info"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and no Docker engine answers: %v", err)
		}
		t.Skipf("skipped: no Docker engine answers: %v", err)
	}
	// An image without a registry: an empty file system, imported.
	var empty bytes.Buffer
	require.NoError(t, tar.NewWriter(&empty).Close())
	const image = "idemproof-test/empty:1"
	imp := exec.Command("docker", "import", "-", image)
	imp.Stdin = &empty
	out, err := imp.CombinedOutput()
	require.NoError(t, err, "%s", out)

	run := fmt.Sprintf("cleanup-test-%d", time.Now().UnixNano())
	foreign, err := docker(t, "create", "--label", "org.testcontainers=true", "--label", "org.testcontainers.sessionId=someone-else", image, "/none")
	require.NoError(t, err, foreign)
	t.Cleanup(func() { docker(t, "rm", "-f", foreign) })
	ours, err := docker(t, "create", "--label", "org.testcontainers=true", "--label", "dev.idemproof.run="+run, image, "/none")
	require.NoError(t, err, ours)
	t.Cleanup(func() { docker(t, "rm", "-f", ours) })
	netName := run + "-net"
	_, err = docker(t, "network", "create", "--label", "dev.idemproof.run="+run, netName)
	require.NoError(t, err)
	t.Cleanup(func() { docker(t, "network", "rm", netName) })

	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..", "..")
	cmd := exec.Command(filepath.Join(root, "ci", "test"), "./outcome/")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "IDEMPROOF_TEST_RUN="+run, "IDEMPROOF_SKIP_IMAGES=true", "FUZZ_TIME=0")
	log, err := cmd.CombinedOutput()
	t.Logf("ci/test ./outcome/ (%v):\n%s", err, log)

	_, err = docker(t, "inspect", foreign)
	require.NoError(t, err, "the foreign container survives")
	_, err = docker(t, "inspect", ours)
	require.Error(t, err, "the run's own container is removed")
	_, err = docker(t, "network", "inspect", netName)
	require.Error(t, err, "the run's own network is removed")
}
