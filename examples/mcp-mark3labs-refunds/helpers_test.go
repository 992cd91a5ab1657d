package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// start serves app on a loopback port and returns its base URL.
func start(t *testing.T, app *App) string {
	t.Helper()
	srv := httptest.NewServer(app.Handler())
	t.Cleanup(srv.Close)
	return srv.URL
}

// headerTransport adds fixed headers to every request (the server's test hooks).
type headerTransport struct{ h http.Header }

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, vv := range t.h {
		r.Header[k] = vv
	}
	return http.DefaultTransport.RoundTrip(r)
}

// connect opens an MCP session with the SDK's own client; headers go on every request.
func connect(t *testing.T, base string, headers http.Header) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "refunds-test", Version: "1.0.0"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:             base + "/mcp",
		HTTPClient:           &http.Client{Transport: headerTransport{headers}},
		DisableStandaloneSSE: true,
		MaxRetries:           -1,
	}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	return cs
}

// ledgerCount reads the list_refunds tool and the HTTP ledger, which must agree.
func ledgerCount(t *testing.T, base string, cs *mcp.ClientSession, orderID string) int {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "list_refunds", Arguments: map[string]any{"order_id": orderID}})
	require.NoError(t, err)
	var viaTool Ledger
	raw, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &viaTool), "%s", raw)

	resp, err := http.Get(base + "/v1/refunds?order_id=" + url.QueryEscape(orderID))
	require.NoError(t, err)
	defer resp.Body.Close()
	var viaHTTP Ledger
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&viaHTTP))
	require.Equal(t, viaTool, viaHTTP, "the tool ledger and the HTTP ledger agree")
	return viaTool.Count
}

func encode(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// refund calls the refund tool with the key as an argument (none when key is "").
func refund(t *testing.T, cs *mcp.ClientSession, key, orderID string, amount float64) (*mcp.CallToolResult, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	args := map[string]any{"order_id": orderID, "amount": amount}
	if key != "" {
		args["idempotency_key"] = key
	}
	return cs.CallTool(ctx, &mcp.CallToolParams{Name: "refund", Arguments: args})
}
