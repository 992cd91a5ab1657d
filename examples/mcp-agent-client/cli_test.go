package main

import (
	"bytes"
	"errors"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// The command line of the README, end to end: the idemproof program of this checkout
// runs this agent against the MCP fixture over stdio, giving it its own shim to start
// (idemproof proxy --stdio --attach ADDR).
func TestClientCheckCommandLineOverStdio(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	idemproof, agent := filepath.Join(dir, "idemproof"), filepath.Join(dir, "mcp-agent-client")
	build := exec.Command("go", "build", "-o", idemproof, "./cmd/idemproof")
	build.Dir = "../.."
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	out, err = exec.Command("go", "build", "-o", agent, ".").CombinedOutput()
	require.NoError(t, err, "%s", out)

	run := func(args ...string) (string, int) {
		cmd := exec.Command(idemproof, append([]string{"client-check", "--mcp", "stdio", "--timeout", "2m", "--"}, args...)...)
		var b bytes.Buffer
		cmd.Stdout, cmd.Stderr = &b, &b
		err := cmd.Run()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return b.String(), exit.ExitCode()
		}
		require.NoError(t, err)
		return b.String(), 0
	}
	log, code := run(agent)
	require.Equal(t, 0, code, log)
	log, code = run(agent, "-key-per-attempt")
	require.Equal(t, 1, code, log)
	require.Contains(t, log, "client/key-per-attempt")
}
