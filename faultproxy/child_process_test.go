package faultproxy_test

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// proxyChild is a proxy process (testdata/proxychild).
type proxyChild struct {
	cmd *exec.Cmd
	url string
}

func startProxyChild(t *testing.T, upstream string) *proxyChild {
	if runtime.GOOS != "linux" {
		t.Skip("reads the child's peak RSS from /proc")
	}
	// Built without the race detector: the tests measure the proxy, not the detector's
	// shadow memory.
	bin := filepath.Join(t.TempDir(), "proxychild")
	out, err := exec.Command("go", "build", "-o", bin, "./testdata/proxychild").CombinedOutput()
	require.NoError(t, err, "go build ./testdata/proxychild: %s", out)
	cmd := exec.Command(bin, upstream)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { stdin.Close(); cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	return &proxyChild{cmd: cmd, url: strings.TrimSpace(line)}
}

// peakRSS is the child's peak resident set (VmHWM), in bytes.
func (c *proxyChild) peakRSS(t *testing.T) int64 {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", c.cmd.Process.Pid))
	require.NoError(t, err, "the proxy process is gone")
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			require.NoError(t, err)
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc/PID/status")
	return 0
}

// The issue-38 reproduction: a 16.6 MB tool call whose argument nests 8.3 million
// arrays, with --key-field and a 16 MiB buffer limit. A recursive validator took ~1 GB
// of stack for it, or overflowed Go's 1 GB stack limit and ended the process; the proxy
// answers 400 and its peak RSS grows by less than 50 MB (the buffered body itself).
func TestNestedKeyFieldBodyIsRefusedInBoundedMemory(t *testing.T) {
	up := newUpstream(t, "a")
	child := startProxyChild(t, up.URL)
	client := &http.Client{Timeout: 2 * time.Minute} // bounds a broken test only
	call := func(body string) (int, string) {
		resp, err := client.Post(child.url+"/mcp", "application/json", strings.NewReader(body))
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	// Warm up: the paths a request takes are loaded before the baseline is read.
	small := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"idempotency_key":"k0"}}}`
	status, _ := call(small)
	require.Equal(t, http.StatusCreated, status)
	before := child.peakRSS(t)

	const levels = 8_300_000
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"pad":` +
		strings.Repeat("[", levels) + strings.Repeat("]", levels) + `,"idempotency_key":"k"}}}`
	status, msg := call(body)
	require.Equal(t, http.StatusBadRequest, status, msg)
	require.Contains(t, msg, "deeper than")
	grown := child.peakRSS(t) - before
	t.Logf("peak RSS grew by %.1f MB for one %d-byte body", float64(grown)/(1<<20), len(body))
	require.Less(t, grown, int64(50<<20), "peak RSS grew by %d MB for one %d-byte body", grown>>20, len(body))

	status, _ = call(small)
	require.Equal(t, http.StatusCreated, status, "the proxy still serves")
	require.Equal(t, 2, up.total(), "the refused body never reached the upstream")
}
