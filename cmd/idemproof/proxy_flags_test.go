package main_test

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Every numeric flag of proxy and serve is checked before anything starts: a clear
// error and exit status 2, never a crash (--journal-capacity 9223372036854775807 used to
// panic in makeslice, 4000000000 ran out of memory).
func TestProxyAndServeRefuseBadNumbers(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"proxy", "--upstream", "http://127.0.0.1:1", "--journal-capacity", "9223372036854775807"}, "--journal-capacity must be 1 to 10000000"},
		{[]string{"proxy", "--upstream", "http://127.0.0.1:1", "--journal-capacity", "4000000000"}, "--journal-capacity must be 1 to 10000000"},
		{[]string{"proxy", "--upstream", "http://127.0.0.1:1", "--journal-capacity", "0"}, "--journal-capacity must be 1 to"},
		{[]string{"proxy", "--upstream", "http://127.0.0.1:1", "--journal-bytes", "10"}, "--journal-bytes must be at least 65536"},
		{[]string{"proxy", "--upstream", "http://127.0.0.1:1", "--buffer-limit", "-1"}, "--buffer-limit must be 1 to"},
		{[]string{"proxy", "--upstream", "http://127.0.0.1:1", "--attempt-key-bytes", "1"}, "--attempt-key-bytes must be at least"},
		{[]string{"proxy", "--upstream", "http://127.0.0.1:1", "--body-timeout", "0s"}, "--body-timeout must be a positive duration"},
		{[]string{"proxy", "--upstream", "http://127.0.0.1:1", "--stream-wait", "0s"}, "--stream-wait must be a positive duration"},
		{[]string{"proxy", "--upstream", "http://127.0.0.1:1", "--upstream-idle-timeout", "-1s"}, "--upstream-idle-timeout must be a positive duration"},
		{[]string{"proxy", "--upstream", "http://127.0.0.1:1", "--admin-token", "a", "--admin-token-file", "f"}, "not both"},
		{[]string{"proxy", "--upstream", "http://127.0.0.1:1", "--admin-token-file", "/nonexistent/token"}, "--admin-token-file"},
		{[]string{"serve", "--idle-timeout", "-1s"}, "must be positive durations"},
		{[]string{"serve", "--memory-limit", "1000"}, "--memory-limit must be at least 1048576"},
	} {
		_, stderr, code := runCLI(t, c.args...)
		require.Equal(t, 2, code, "%v: %s", c.args, stderr)
		require.Contains(t, stderr, c.want, c.args)
		require.NotContains(t, stderr, "panic")
	}
}

// startProxy runs `idemproof proxy` with extra environment until the test ends and
// returns its admin URL, read from the one line it prints once it listens.
func startProxy(t *testing.T, env []string, args ...string) string {
	t.Helper()
	_, admin := startProxyAt(t, "http://127.0.0.1:1", env, args...)
	return admin
}

// startProxyAt starts `idemproof proxy` in front of upstream and returns its proxy and
// admin URLs, as its first line prints them.
func startProxyAt(t *testing.T, upstream string, env []string, args ...string) (proxy, admin string) {
	t.Helper()
	cmd := exec.Command(checkBinary(t), append([]string{"proxy", "--upstream", upstream, "--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(stderr).ReadString('\n')
	require.NoError(t, err, "the proxy printed %q", line)
	proxy, admin, ok := strings.Cut(strings.TrimPrefix(strings.TrimSpace(line), "idemproof proxy: listening on "), ", admin ")
	require.True(t, ok, line)
	go io.Copy(io.Discard, stderr)
	return proxy, admin
}

func adminStatus(t *testing.T, url, token string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url+"/healthz", nil)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode
}

// The admin token need not be on the command line, where ps shows it: it also comes
// from $IDEMPROOF_ADMIN_TOKEN or --admin-token-file.
func TestProxyAdminTokenFromEnvironmentOrFile(t *testing.T) {
	admin := startProxy(t, []string{"IDEMPROOF_ADMIN_TOKEN=from-env"})
	require.Equal(t, http.StatusUnauthorized, adminStatus(t, admin, ""))
	require.Equal(t, http.StatusOK, adminStatus(t, admin, "from-env"))

	file := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(file, []byte("from-file\n"), 0o600))
	admin = startProxy(t, nil, "--admin-token-file", file)
	require.Equal(t, http.StatusUnauthorized, adminStatus(t, admin, "from-env"))
	require.Equal(t, http.StatusOK, adminStatus(t, admin, "from-file"))
}
