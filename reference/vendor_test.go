package reference_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/downstream"
	"github.com/idemproof/idemproof/reference"
	"github.com/idemproof/idemproof/reference/servertest"
)

// vendorServer is a reference server (test hooks on) notifying a recording sink.
func vendorServer(t *testing.T, flaws ...string) (*httptest.Server, *downstream.Sink) {
	t.Helper()
	sink, err := downstream.Start(downstream.Config{Listen: "127.0.0.1:0", EntityField: "order_id"})
	require.NoError(t, err)
	t.Cleanup(func() { sink.Close() })
	ref, err := reference.New(reference.WithTestHooks(true), reference.WithVendorURL(sink.URL()), reference.WithFlaws(flaws...),
		reference.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	require.NoError(t, err)
	srv := httptest.NewServer(ref)
	t.Cleanup(func() { srv.Close(); ref.Close() })
	return srv, sink
}

func refund(t *testing.T, url, order, key string, hooks map[string]string) (int, error) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+"/v1/refunds", strings.NewReader(`{"order_id":"`+order+`","amount":4900}`))
	require.NoError(t, err)
	req.Header.Set("Idempotency-Key", key)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hooks {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// t0ctx is the tests' context: the waits are bounded by their deadlines.
var t0ctx = context.Background()

func settled(sink *downstream.Sink, order string) downstream.Ledger {
	return downstream.LedgerOf(sink.Settle(t0ctx, order, 200*time.Millisecond, time.Now().Add(10*time.Second)))
}

func TestVendorIsNotifiedOnceWithADerivedKeyAndNotOnReplay(t *testing.T) {
	srv, sink := vendorServer(t)
	status, err := refund(t, srv.URL, "o1", "k1", nil)
	require.NoError(t, err)
	require.Equal(t, 201, status)
	status, err = refund(t, srv.URL, "o1", "k1", nil)
	require.NoError(t, err)
	require.Equal(t, 201, status, "the replay")
	l := settled(sink, "o1")
	require.Equal(t, 1, l.Calls, "a replay calls nobody")
	require.Equal(t, 1, l.Keys())
	calls := sink.Calls("o1")
	require.True(t, strings.HasPrefix(calls[0].Key, "refund-notify-"), calls[0].Key)
	require.Equal(t, "/v1/notifications", calls[0].Path)
}

func TestVendorCallSurvivesACrashAfterTheCommit(t *testing.T) {
	srv, sink := vendorServer(t)
	_, err := refund(t, srv.URL, "o2", "k2", map[string]string{reference.HeaderTestCrash: "after-commit"})
	require.Error(t, err, "the request was abandoned after the commit")
	l := settled(sink, "o2")
	require.Equal(t, 1, l.Effects, "the committed job is delivered by the outbox worker")

	srv, sink = vendorServer(t, "vendor-call-in-request")
	_, err = refund(t, srv.URL, "o3", "k3", map[string]string{reference.HeaderTestCrash: "after-commit"})
	require.Error(t, err)
	require.Zero(t, settledQuick(sink, "o3").Calls, "in the request, the crash lost the call")
}

func TestVendorRedriveAfterALostAnswerKeepsTheKey(t *testing.T) {
	for flaw, effects := range map[string]int{"": 1, "vendor-call-unkeyed": 2} {
		var flaws []string
		if flaw != "" {
			flaws = append(flaws, flaw)
		}
		srv, sink := vendorServer(t, flaws...)
		require.NoError(t, sink.AddRule(downstream.Rule{Entity: "o4", Nth: 1, Fault: downstream.Fault503After}))
		status, err := refund(t, srv.URL, "o4", "k4", nil)
		require.NoError(t, err)
		require.Equal(t, 201, status)
		deadline := time.Now().Add(10 * time.Second)
		for len(sink.Calls("o4")) < 2 && time.Now().Before(deadline) {
			sink.Settle(t0ctx, "o4", time.Millisecond, time.Now().Add(100*time.Millisecond))
		}
		l := settled(sink, "o4")
		require.Equal(t, 2, l.Calls, "flaw %q: the outbox re-drives after the 503", flaw)
		require.Equal(t, effects, l.Effects, "flaw %q", flaw)
	}
}

func settledQuick(sink *downstream.Sink, order string) downstream.Ledger {
	return downstream.LedgerOf(sink.Settle(t0ctx, order, 200*time.Millisecond, time.Now().Add(500*time.Millisecond)))
}

// vendorFlawCases show each vendor flaw misbehaving (TestEachFlawMisbehaves); they need
// a vendor, so each starts its own server with a sink instead of using the env's.
var vendorFlawCases = map[string]func(t *testing.T, _ *servertest.Env, order, key string){
	"vendor-call-unkeyed": func(t *testing.T, _ *servertest.Env, order, key string) {
		srv, sink := vendorServer(t, "vendor-call-unkeyed")
		require.NoError(t, sink.AddRule(downstream.Rule{Entity: order, Nth: 1, Fault: downstream.Fault503After}))
		status, err := refund(t, srv.URL, order, key, nil)
		require.NoError(t, err)
		require.Equal(t, 201, status)
		deadline := time.Now().Add(10 * time.Second)
		for len(sink.Calls(order)) < 2 && time.Now().Before(deadline) {
			sink.Settle(t0ctx, order, time.Millisecond, time.Now().Add(100*time.Millisecond))
		}
		l := settled(sink, order)
		require.Equal(t, 2, l.Effects, "the unkeyed re-drive notified twice")
		require.Equal(t, 2, l.Unkeyed)
	},
	"vendor-call-in-request": func(t *testing.T, _ *servertest.Env, order, key string) {
		srv, sink := vendorServer(t, "vendor-call-in-request")
		_, err := refund(t, srv.URL, order, key, map[string]string{reference.HeaderTestCrash: "after-commit"})
		require.Error(t, err)
		status, err := refund(t, srv.URL, order, key, nil)
		require.NoError(t, err)
		require.Equal(t, 201, status, "the retry replays the committed refund")
		require.Zero(t, settledQuick(sink, order).Calls, "the crash lost the call and the replay does not make it")
	},
}
