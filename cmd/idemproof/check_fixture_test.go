package main_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The MCP fixture's built-in profiles run as docs/mcp.md says: mcp-refunds against
// `serve --mcp --test-hooks --retention 5s` (the window it declares: the expiry
// scenarios PASS), and mcp-refunds-stdio by name alone — a target, not a preset — with
// the fixture started from this very binary (no idemproof on the PATH is needed).
func TestTheMCPFixturesBuiltinProfilesRunAsDocumented(t *testing.T) {
	t.Parallel()
	bin := checkBinary(t)
	t.Run("streamable HTTP", func(t *testing.T) {
		t.Parallel()
		serve := exec.Command(bin, "serve", "--mcp", "--test-hooks", "--retention", "5s", "--listen", "127.0.0.1:0")
		stderr, err := serve.StderrPipe()
		require.NoError(t, err)
		require.NoError(t, serve.Start())
		t.Cleanup(func() {
			_ = serve.Process.Kill()
			_ = serve.Wait()
		})
		addr := make(chan string, 1)
		go func() {
			lines := bufio.NewScanner(stderr)
			for lines.Scan() {
				if m := regexp.MustCompile(`listening on (http://\S+)`).FindStringSubmatch(lines.Text()); m != nil {
					addr <- m[1]
				}
			}
		}()
		var base string
		select {
		case base = <-addr:
		case <-time.After(30 * time.Second):
			t.Fatal("serve --mcp did not say where it listens within 30s")
		}
		out, errOut, code := runCLIEnv(t, []string{"IDEMPROOF_MCP_BASE_URL=" + base}, "check", "--profile", "mcp-refunds", "--only", "expiry/*,replay/sequential")
		require.Equal(t, 0, code, "%s\n%s", out, errOut)
		require.Regexp(t, `PASS\s+expiry/after-window\s`, out)
		require.Regexp(t, `PASS\s+replay/sequential\s`, out)
	})
	t.Run("stdio", func(t *testing.T) {
		t.Parallel()
		out, errOut, code := runCLIEnv(t, []string{"PATH=/nonexistent"}, "check", "--profile", "mcp-refunds-stdio", "--only", "replay/sequential,race/in-flight-409")
		require.Equal(t, 0, code, "%s\n%s", out, errOut)
		require.Regexp(t, `PASS\s+replay/sequential\s`, out)
		require.Regexp(t, `PASS\s+race/in-flight-409\s`, out)
	})
}

// runCLIEnv runs the binary as runCLI does, with env added to the environment (a later
// entry wins), bounded at three minutes.
func runCLIEnv(t *testing.T, env []string, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, checkBinary(t), args...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		require.NoError(t, err)
	}
	require.NoError(t, ctx.Err(), "idemproof %v: still running after three minutes\n%s", args, stdout.String())
	return stdout.String(), stderr.String(), cmd.ProcessState.ExitCode()
}
