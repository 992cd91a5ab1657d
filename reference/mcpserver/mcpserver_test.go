package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/idemproof/idemproof/faultproxy/stdio"
	"github.com/idemproof/idemproof/reference"
	"github.com/idemproof/idemproof/reference/mcpserver"
	"github.com/idemproof/idemproof/transport/mcp"
	"github.com/idemproof/idemproof/transport/mcpstdio"
)

func session(t *testing.T, cfg mcpserver.Config) *mcpstdio.Client {
	t.Helper()
	s, err := mcpserver.New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	l, err := stdio.New(stdio.Config{Serve: s.ServeStdio})
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	conn, err := l.Connect()
	require.NoError(t, err)
	c, err := mcpstdio.Connect(context.Background(), conn, mcpstdio.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

func call(t *testing.T, c *mcpstdio.Client, tool, args string, meta map[string]any) string {
	t.Helper()
	_, line, err := c.CallTool(context.Background(), tool, json.RawMessage(args), meta)
	var rpc *mcpstdio.RPCError
	if err != nil && !errors.As(err, &rpc) {
		t.Fatalf("call %s: %v", tool, err)
	}
	return string(line)
}

func response(line string) string {
	return gjson.Get(line, "result").Raw + gjson.Get(line, "error").Raw
}

func TestRefundToolIsTheReferenceContract(t *testing.T) {
	t.Parallel()
	c := session(t, mcpserver.Config{})
	key := map[string]any{"idempotency_key": "k-1"}
	first := call(t, c, "refund", `{"order_id":"o1","amount":4900}`, key)
	require.True(t, gjson.Get(first, "result.structuredContent.id").Exists(), first)
	again := call(t, c, "refund", `{"order_id":"o1","amount":4900}`, key)
	require.Equal(t, response(first), response(again), "a replay, byte for byte")
	require.Equal(t, int64(mcpserver.CodeMismatch), gjson.Get(call(t, c, "refund", `{"order_id":"o1","amount":5000}`, key), "error.code").Int())
	require.Equal(t, int64(mcpserver.CodeMissingKey), gjson.Get(call(t, c, "refund", `{"order_id":"o1","amount":4900}`, nil), "error.code").Int())
	require.Equal(t, int64(mcpserver.CodeInvalidKey), gjson.Get(call(t, c, "refund", `{"order_id":"o1","amount":4900}`, map[string]any{"idempotency_key": 7}), "error.code").Int())
	require.Equal(t, int64(-32602), gjson.Get(call(t, c, "refund", `{"order_id":"o1","amount":-5}`, map[string]any{"idempotency_key": "k-2"}), "error.code").Int())
	declined := call(t, c, "refund", `{"order_id":"o1","amount":2000000}`, map[string]any{"idempotency_key": "k-3"})
	require.True(t, gjson.Get(declined, "result.isError").Bool(), declined)
	require.Equal(t, int64(1), gjson.Get(call(t, c, "list_refunds", `{"order_id":"o1"}`, nil), "result.structuredContent.count").Int())

	tools, err := c.ListTools(context.Background())
	require.NoError(t, err)
	require.Len(t, tools, 2)
}

func TestKeyAsAnArgumentAndFlaws(t *testing.T) {
	t.Parallel()
	c := session(t, mcpserver.Config{KeyIn: mcpserver.KeyInArgument, Reference: []reference.Option{reference.WithFlaws("no-fingerprint")}})
	first := call(t, c, "refund", `{"order_id":"o2","amount":4900,"idempotency_key":"k"}`, nil)
	require.True(t, gjson.Get(first, "result").Exists(), first)
	// The flaw: another payload under the key is answered with the first refund.
	other := call(t, c, "refund", `{"order_id":"o2","amount":5000,"idempotency_key":"k"}`, nil)
	require.Equal(t, response(first), response(other))
	_, err := mcpserver.New(mcpserver.Config{KeyIn: "header"})
	require.ErrorContains(t, err, "want meta, argument or params")
}

func TestTestHooksInMeta(t *testing.T) {
	t.Parallel()
	c := session(t, mcpserver.Config{TestHooks: true})
	failed := call(t, c, "refund", `{"order_id":"o3","amount":4900}`, map[string]any{"idempotency_key": "k", "test_fail": "503"})
	require.Equal(t, int64(-32603), gjson.Get(failed, "error.code").Int(), failed)
	ok := call(t, c, "refund", `{"order_id":"o3","amount":4900}`, map[string]any{"idempotency_key": "k"})
	require.True(t, gjson.Get(ok, "result").Exists(), "a failure is not stored: the retry executes: %s", ok)
}

// SEP-3182: the key is params.idempotencyKey, a member the SDK drops; the server reads it
// there (and only there) and advertises capabilities.tools.idempotency.
func TestKeyInParamsOverStdio(t *testing.T) {
	t.Parallel()
	c := session(t, mcpserver.Config{KeyIn: mcpserver.KeyInParams})
	require.True(t, gjson.GetBytes(c.Raw, "capabilities.tools.idempotency").IsObject(), string(c.Raw))
	require.True(t, gjson.GetBytes(c.Raw, "capabilities.tools").IsObject())
	require.Equal(t, "idemproof-refunds", gjson.GetBytes(c.Raw, "serverInfo.name").Str)
	call := func(params string) string {
		t.Helper()
		line, err := c.Call(context.Background(), "tools/call", json.RawMessage(params))
		require.NoError(t, err)
		return string(line)
	}
	first := call(`{"name":"refund","arguments":{"order_id":"o4","amount":4900},"idempotencyKey":"k-1"}`)
	require.True(t, gjson.Get(first, "result.structuredContent.id").Exists(), first)
	again := call(`{"name":"refund","arguments":{"order_id":"o4","amount":4900},"idempotencyKey":"k-1"}`)
	require.Equal(t, response(first), response(again), "a replay, byte for byte")
	require.Equal(t, int64(mcpserver.CodeMismatch), gjson.Get(call(`{"name":"refund","arguments":{"order_id":"o4","amount":5000},"idempotencyKey":"k-1"}`), "error.code").Int())
	require.Equal(t, int64(mcpserver.CodeInvalidKey), gjson.Get(call(`{"name":"refund","arguments":{"order_id":"o4","amount":4900},"idempotencyKey":7}`), "error.code").Int())
	for _, elsewhere := range []string{
		`{"name":"refund","arguments":{"order_id":"o4","amount":4900}}`,
		`{"name":"refund","arguments":{"order_id":"o4","amount":4900},"_meta":{"idempotency_key":"k-2"}}`,
		`{"name":"refund","arguments":{"order_id":"o4","amount":4900},"_meta":{"idemproof/idempotencyKey":"k-2"}}`,
	} {
		require.Equal(t, int64(mcpserver.CodeMissingKey), gjson.Get(call(elsewhere), "error.code").Int(), "a key anywhere but params.idempotencyKey is no key: %s", elsewhere)
	}
	require.Equal(t, int64(1), gjson.Get(call(`{"name":"list_refunds","arguments":{"order_id":"o4"}}`), "result.structuredContent.count").Int())
}

func TestKeyInParamsOverHTTP(t *testing.T) {
	t.Parallel()
	s, err := mcpserver.New(mcpserver.Config{KeyIn: mcpserver.KeyInParams})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	tr := &mcp.Transport{}
	sess, err := tr.Initialize(context.Background(), ts.URL+"/mcp", http.Header{})
	require.NoError(t, err)
	require.True(t, sess.AdvertisesIdempotency(), string(sess.Raw))
	post := func(id int, params string) string {
		t.Helper()
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}`, id, params)
		req, err := http.NewRequest(http.MethodPost, ts.URL+"/mcp", strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set(mcp.HeaderSessionID, sess.ID)
		req.Header.Set(mcp.HeaderProtocolVersion, sess.ProtocolVersion)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
		// One answer: a JSON body, or one event of a stream.
		line := string(b)
		if i := strings.Index(line, "data: "); i >= 0 {
			line = strings.TrimSpace(strings.SplitN(line[i+len("data: "):], "\n", 2)[0])
		}
		return line
	}
	first := post(1, `{"name":"refund","arguments":{"order_id":"o5","amount":4900},"idempotencyKey":"k-1"}`)
	require.True(t, gjson.Get(first, "result.structuredContent.id").Exists(), first)
	again := post(2, `{"name":"refund","arguments":{"order_id":"o5","amount":4900},"idempotencyKey":"k-1"}`)
	require.Equal(t, response(first), response(again), "a replay, byte for byte")
	require.Equal(t, int64(mcpserver.CodeMissingKey), gjson.Get(post(3, `{"name":"refund","arguments":{"order_id":"o5","amount":4900},"_meta":{"idempotency_key":"k-2"}}`), "error.code").Int())
	require.Equal(t, int64(1), gjson.Get(post(4, `{"name":"list_refunds","arguments":{"order_id":"o5"}}`), "result.structuredContent.count").Int())
}
