package downstream_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/downstream"
)

func call(t *testing.T, url, key, body string) (int, error) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+"/v1/notifications", strings.NewReader(body))
	require.NoError(t, err)
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

func start(t *testing.T) *downstream.Sink {
	t.Helper()
	s, err := downstream.Start(downstream.Config{Listen: "127.0.0.1:0", EntityField: "order_id"})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

func TestSinkDeduplicatesKeyedCallsAndCountsUnkeyedOnes(t *testing.T) {
	s := start(t)
	for _, want := range []int{201, 200} {
		status, err := call(t, s.URL(), "k1", `{"order_id":"o1"}`)
		require.NoError(t, err)
		require.Equal(t, want, status)
	}
	for range 2 {
		status, err := call(t, s.URL(), "", `{"order_id":"o2"}`)
		require.NoError(t, err)
		require.Equal(t, 201, status)
	}
	l1 := downstream.LedgerOf(s.Calls("o1"))
	require.Equal(t, downstream.Ledger{Calls: 2, Effects: 1, PerKey: map[string]int{"k1": 2}}, l1)
	l2 := downstream.LedgerOf(s.Calls("o2"))
	require.Equal(t, 2, l2.Effects, "an unkeyed re-drive is a second effect")
	require.Equal(t, 2, l2.Unkeyed)
	require.Equal(t, 0, l2.Keys())
}

func TestSinkFaultsFireOnTheNthCallOfTheEntityOnce(t *testing.T) {
	s := start(t)
	require.NoError(t, s.AddRule(downstream.Rule{Entity: "o1", Nth: 1, Fault: downstream.Fault503After}))
	require.NoError(t, s.AddRule(downstream.Rule{Entity: "o2", Nth: 1, Fault: downstream.Fault503Before}))
	require.NoError(t, s.AddRule(downstream.Rule{Entity: "o3", Nth: 1, Fault: downstream.FaultResetAfter}))

	status, err := call(t, s.URL(), "k1", `{"order_id":"o1"}`)
	require.NoError(t, err)
	require.Equal(t, 503, status)
	status, err = call(t, s.URL(), "k1", `{"order_id":"o1"}`)
	require.NoError(t, err)
	require.Equal(t, 200, status, "committed before the 503: the retry is a replay")
	require.Equal(t, 1, downstream.LedgerOf(s.Calls("o1")).Effects)

	status, _ = call(t, s.URL(), "k2", `{"order_id":"o2"}`)
	require.Equal(t, 503, status)
	status, _ = call(t, s.URL(), "k2", `{"order_id":"o2"}`)
	require.Equal(t, 201, status, "nothing was committed before the 503")
	require.Equal(t, 1, downstream.LedgerOf(s.Calls("o2")).Effects)

	_, err = call(t, s.URL(), "k3", `{"order_id":"o3"}`)
	require.Error(t, err, "the connection was reset")
	require.Equal(t, downstream.AnswerResetAfter, s.Calls("o3")[0].Answer)

	require.ErrorContains(t, s.AddRule(downstream.Rule{Entity: "o", Nth: 1, Fault: "boom"}), "unknown fault")
}

func TestSettleReturnsAfterQuietOrAtTheDeadline(t *testing.T) {
	s := start(t)
	ctx := context.Background()
	calls := s.Settle(ctx, "none", time.Hour, time.Now().Add(50*time.Millisecond))
	require.Empty(t, calls, "no call: it waits to the deadline")

	_, err := call(t, s.URL(), "k", `{"order_id":"o1"}`)
	require.NoError(t, err)
	calls = s.Settle(ctx, "o1", time.Millisecond, time.Now().Add(time.Hour))
	require.Len(t, calls, 1, "a call and then quiet: it returns long before the deadline")
}

func TestAdminHandlerListsCallsAndTakesRules(t *testing.T) {
	s := start(t)
	admin := httptest.NewServer(s.AdminHandler())
	t.Cleanup(admin.Close)
	resp, err := http.Post(admin.URL+"/rules", "application/json", strings.NewReader(`{"entity":"o1","nth":1,"fault":"503-before"}`))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusCreated, resp.StatusCode)
	resp, err = http.Post(admin.URL+"/rules", "application/json", strings.NewReader(`{"entity":"o1","nth":1,"fault":"nope"}`))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)

	status, err := call(t, s.URL(), "k", `{"order_id":"o1"}`)
	require.NoError(t, err)
	require.Equal(t, 503, status)
	resp, err = http.Get(admin.URL + "/calls?entity=o1")
	require.NoError(t, err)
	defer resp.Body.Close()
	var got struct {
		Calls  []downstream.Call `json:"calls"`
		Ledger downstream.Ledger `json:"ledger"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&got))
	require.Len(t, got.Calls, 1)
	require.Equal(t, downstream.Answer503Before, got.Calls[0].Answer)
	require.Equal(t, 0, got.Ledger.Effects)
}

func TestRemoteDrivesASinkThroughItsAdminAPI(t *testing.T) {
	s := start(t)
	admin := httptest.NewServer(s.AdminHandler())
	t.Cleanup(admin.Close)
	var rec downstream.Recorder = downstream.NewRemote(admin.URL)
	require.NoError(t, rec.AddRule(downstream.Rule{Entity: "o1", Nth: 1, Fault: downstream.Fault503After}))
	require.ErrorContains(t, rec.AddRule(downstream.Rule{Entity: "o1", Nth: 0, Fault: downstream.Fault503After}), "nth >= 1")
	status, err := call(t, s.URL(), "k", `{"order_id":"o1"}`)
	require.NoError(t, err)
	require.Equal(t, 503, status)
	calls, err := rec.SettleCalls(context.Background(), "o1", 1, time.Millisecond, time.Now().Add(time.Minute))
	require.NoError(t, err)
	require.Len(t, calls, 1)
	require.Equal(t, 1, downstream.LedgerOf(calls).Effects)

	_, err = downstream.NewRemote("http://127.0.0.1:1").SettleCalls(context.Background(), "o1", 1, 0, time.Now())
	require.Error(t, err, "an unreachable sink is an error, never an empty ledger")
}

func TestSettleWaitsForTheMinimumCallsBeforeStoppingEarly(t *testing.T) {
	s := start(t)
	var rec downstream.Recorder = s
	_, err := call(t, s.URL(), "k", `{"order_id":"o1"}`)
	require.NoError(t, err)
	started := time.Now()
	calls, err := rec.SettleCalls(context.Background(), "o1", 2, time.Millisecond, time.Now().Add(150*time.Millisecond))
	require.NoError(t, err)
	require.Len(t, calls, 1)
	require.GreaterOrEqual(t, time.Since(started), 150*time.Millisecond, "one call of the two wanted: it waits to the deadline")
}

func TestSinkRecordsACallerThatLeftBeforeItsAnswer(t *testing.T) {
	s := start(t)
	// A slow vendor: the answer waits until the caller has hung up (or 5 s).
	s.SetBeforeAnswer(func(ctx context.Context) {
		select {
		case <-ctx.Done():
		case <-time.After(5 * time.Second):
		}
	})
	impatient := &http.Client{Timeout: 100 * time.Millisecond}
	req, err := http.NewRequest(http.MethodPost, s.URL()+"/v1/notifications", strings.NewReader(`{"order_id":"o-1"}`))
	require.NoError(t, err)
	req.Header.Set("Idempotency-Key", "k-1")
	_, err = impatient.Do(req)
	require.Error(t, err, "the caller's own timeout must fire first")
	require.Eventually(t, func() bool {
		calls := s.Calls("o-1")
		return len(calls) == 1 && calls[0].CallerLeft
	}, 5*time.Second, 10*time.Millisecond, "the call is recorded as one whose caller left before the answer")

	// The re-send with the same key is answered and delivered: a replay, and no caller left.
	s.SetBeforeAnswer(nil)
	status, err := call(t, s.URL(), "k-1", `{"order_id":"o-1"}`)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, status)
	calls := s.Calls("o-1")
	require.Len(t, calls, 2)
	require.Equal(t, downstream.AnswerCommitted, calls[0].Answer, "the effect was done before the answer was lost")
	require.Equal(t, downstream.AnswerReplayed, calls[1].Answer)
	require.False(t, calls[1].CallerLeft)
	require.Equal(t, 1, downstream.LedgerOf(calls).Effects)
}
