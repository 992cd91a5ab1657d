package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/examples/mcp-gosdk-refunds/refunds"
	"github.com/idemproof/idemproof/faultproxy"
)

// target is the correct MCP refund server behind a fault proxy that loses the answer of
// the first attempt of every key AFTER the refund committed (a 503 from a gateway).
type target struct {
	endpoint string
	proxy    *faultproxy.Proxy
	ledger   func(orderID string) int
}

func startTarget(t *testing.T) target {
	t.Helper()
	up := httptest.NewServer(refunds.NewApp(refunds.Config{WorkMin: time.Millisecond, WorkMax: time.Millisecond}).Handler())
	t.Cleanup(up.Close)
	srv, err := faultproxy.Start(context.Background(), faultproxy.Config{
		Upstream: up.URL,
		KeyField: "params._meta.idempotency_key",
		Rules: []faultproxy.Rule{{
			Name:  "lose-first-answer",
			Match: faultproxy.Match{Key: "*", Attempts: &faultproxy.Range{From: 1, To: 1}},
			Fault: faultproxy.FaultSpec{Type: faultproxy.FaultAfterStatus, Status: http.StatusServiceUnavailable},
		}},
	})
	require.NoError(t, err)
	t.Cleanup(func() { srv.Close() })
	return target{
		endpoint: srv.URL() + "/mcp",
		proxy:    srv.Proxy(),
		ledger: func(orderID string) int {
			resp, err := http.Get(up.URL + "/v1/refunds?order_id=" + orderID)
			require.NoError(t, err)
			defer resp.Body.Close()
			var l struct{ Count int }
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&l))
			return l.Count
		},
	}
}

// toolCalls returns the proxy journal's keyed attempts (the refund tool calls), in order.
func (tg target) toolCalls(t *testing.T) []faultproxy.Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, tg.proxy.WaitIdle(ctx))
	recs, err := tg.proxy.Journal(ctx, faultproxy.JournalQuery{})
	require.NoError(t, err)
	var calls []faultproxy.Record
	for _, r := range recs {
		if r.HasKey {
			require.Equal(t, "tools/call", r.RPCMethod)
			calls = append(calls, r)
		}
	}
	return calls
}

func run(t *testing.T, tg target, keyPerAttempt bool) []Outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := Run(ctx, Config{
		Endpoint: tg.endpoint, Refunds: 3, OrderPrefix: "order-", KeyField: DefaultKeyField,
		KeyPerAttempt: keyPerAttempt, Attempts: 5, AttemptTimeout: 5 * time.Second,
	})
	require.NoError(t, err)
	require.Len(t, out, 3)
	return out
}

func TestRetriesKeepTheKeyOneRefundPerToolCall(t *testing.T) {
	tg := startTarget(t)
	outcomes := run(t, tg, false)

	calls := tg.toolCalls(t)
	byKey := map[string][]faultproxy.Record{}
	for _, r := range calls {
		byKey[r.Key] = append(byKey[r.Key], r)
	}
	require.Len(t, byKey, 3, "one key per tool call")
	for _, o := range outcomes {
		require.Equal(t, "ok", o.Outcome, "%+v", o)
		attempts := byKey[o.Key]
		require.Len(t, attempts, 2, "the lost answer was retried once, under the same key")
		require.Equal(t, http.StatusServiceUnavailable, attempts[0].ClientStatus)
		require.True(t, attempts[0].ReachedUpstream, "the first attempt committed")
		require.Equal(t, http.StatusOK, attempts[1].ClientStatus)
		require.Equal(t, 1, tg.ledger(o.Operation), "%s refunded exactly once", o.Operation)
	}
}

func TestKeyPerAttemptDuplicatesTheRefund(t *testing.T) {
	tg := startTarget(t)
	outcomes := run(t, tg, true)

	calls := tg.toolCalls(t)
	keys := map[string]bool{}
	for _, r := range calls {
		keys[r.Key] = true
		require.Equal(t, 1, r.Attempt, "every attempt is a first attempt for the server")
		require.True(t, r.ReachedUpstream)
	}
	require.Len(t, calls, 15, "3 tool calls × 5 attempts, each one faulted after the commit")
	require.Len(t, keys, len(calls), "a fresh key on every retry")
	for _, o := range outcomes {
		require.Equal(t, "unknown", o.Outcome, "never answered, never reported failed")
		require.Equal(t, 5, tg.ledger(o.Operation), "%s refunded once per attempt", o.Operation)
	}
}
