package mcpstdio_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/faultproxy/stdio"
	"github.com/idemproof/idemproof/internal/proctest"
	"github.com/idemproof/idemproof/transport/mcpstdio"
)

func TestClientSpeaksToAStdioServer(t *testing.T) {
	t.Parallel()
	c, err := mcpstdio.Start(context.Background(), stdio.Command{Args: []string{os.Args[0]}, Env: serverEnv("refunds")}, mcpstdio.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	require.Equal(t, "test-refunds", c.Result.ServerInfo.Name)
	require.NotEmpty(t, c.ProtocolVersion)

	tools, err := c.ListTools(context.Background())
	require.NoError(t, err)
	require.Len(t, tools, 2)

	res, line, err := c.CallTool(context.Background(), "refund", json.RawMessage(`{"order_id":"o1","amount":5}`), map[string]any{"idempotency_key": "k1"})
	require.NoError(t, err)
	require.False(t, res.IsError)
	require.JSONEq(t, `{"count":1}`, string(must(json.Marshal(res.StructuredContent))))
	require.Contains(t, string(line), `"jsonrpc":"2.0"`)

	// A raw request goes as written, under the client's id; the answer is the raw line.
	answer, sent, err := c.SendRaw(context.Background(), []byte(`{"jsonrpc":"2.0","id":0,"method":"tools/call","params":{"name":"refund","arguments":{"order_id":"o1","amount":5}}}`), nil)
	require.NoError(t, err)
	require.NotContains(t, string(sent), `"id":0`)
	require.Contains(t, string(answer), `"count":2`)

	_, _, err = c.CallTool(context.Background(), "nope", json.RawMessage(`{}`), nil)
	require.Error(t, err)
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// A server that is not there, dies at start, writes garbage to stdout or never answers
// initialize is an error that says so with its stderr, fast, and leaves no process.
func TestStartFailuresSayWhyAndLeaveNoProcess(t *testing.T) {
	t.Parallel()
	// The crash and the banner end the start by themselves, so their bound is long (a
	// loaded machine may take more than a second to start a process); only the hang waits
	// its bound out.
	for _, tc := range []struct {
		kind, want, stderr string
		bound              time.Duration
	}{
		{"crash", "ended before it answered initialize: exited (exit status 3)", "permission denied", time.Minute},
		{"banner", "not a JSON-RPC message: \"refund server listening on stdio\"", "", time.Minute},
		{"hang", "did not answer initialize within 3s", "license server", 3 * time.Second},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			t.Parallel()
			marker := fmt.Sprintf("IDEMPROOF_MCPSTDIO_MARKER=%s-%d", tc.kind, time.Now().UnixNano())
			// A shell in front, with a child of its own: the whole group must go.
			cmd := stdio.Command{Args: []string{"sh", "-c", `sleep 300 & "$0"`, os.Args[0]}, Env: append(serverEnv(tc.kind), marker)}
			_, err := mcpstdio.Start(context.Background(), cmd, mcpstdio.Options{StartTimeout: tc.bound, StopGrace: 200 * time.Millisecond})
			var se *mcpstdio.StartError
			require.ErrorAs(t, err, &se)
			require.Contains(t, err.Error(), tc.want)
			require.Contains(t, err.Error(), tc.stderr)
			require.Contains(t, err.Error(), "sh -c")
			require.Empty(t, proctest.LiveWithEnv(t, marker), "no process of the server is left")
		})
	}
	_, err := mcpstdio.Start(context.Background(), stdio.Command{Args: []string{"idemproof-no-such-server"}}, mcpstdio.Options{})
	require.ErrorContains(t, err, `"idemproof-no-such-server" was not found`)
}
