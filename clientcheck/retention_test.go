package clientcheck_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/clientcheck"
	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/reference"
	"github.com/idemproof/idemproof/verdict"
)

// The table row of issue 33: retention 2s, a hold of 3s, the correct client's retry
// reached the API at +3.4s under its one key and executed again. The finding is the
// retention against the client's retry horizon, never "duplicated".
func TestARetryAfterTheRetentionIsItsOwnFinding(t *testing.T) {
	t.Parallel()
	o := goodObservation()
	held := attempt(1, "k1", "b1", 0, 0)
	held.ClientResult, held.ClientStatus, held.Fault = faultproxy.ClientClosed, 0, faultproxy.FaultAfterHold
	o.Attempts[0], o.Attempts[1] = held, attempt(2, "k1", "b1", 201, 3400*time.Millisecond)
	o.Ledger["order-1"] = 2
	o.Retention = 2 * time.Second
	v := verdicts(o)
	require.Equal(t, verdict.Pass, v[clientcheck.IDOneEffect].Verdict, v[clientcheck.IDOneEffect].Message)
	require.NotContains(t, v[clientcheck.IDOneEffect].Message, "duplicated")
	require.Contains(t, v[clientcheck.IDOneEffect].Message, "took effect again after the declared retention (2s): client/retry-after-retention")
	late := v[clientcheck.IDRetryAfterRetention]
	require.Equal(t, verdict.Fail, late.Verdict, late.Message)
	require.Equal(t, "the client's retry horizon, 3.4s, outlives the API's retention, 2s: 1 operation(s) executed again after their key expired; size one past the other (a longer retention, or retries that end sooner)", late.Message)
	require.Contains(t, late.Evidence.Examples[0], "order-1: its retry reached the API 3.4s after its first attempt (attempt 2)")

	// Inside the retention, a second effect under one key is the duplicate it always was.
	o.Attempts[1].Time = t0.Add(1500 * time.Millisecond)
	v = verdicts(o)
	require.Equal(t, verdict.Fail, v[clientcheck.IDOneEffect].Verdict)
	require.Contains(t, v[clientcheck.IDOneEffect].Message, "1 duplicated")
	require.Equal(t, verdict.Pass, v[clientcheck.IDRetryAfterRetention].Verdict)

	// Past it, but under a fresh key: a key minted per attempt, whatever the window.
	o.Attempts[1].Time, o.Attempts[1].Key = t0.Add(3400*time.Millisecond), "k1-again"
	v = verdicts(o)
	require.Equal(t, verdict.Fail, v[clientcheck.IDOneEffect].Verdict)
	require.Equal(t, verdict.Pass, v[clientcheck.IDRetryAfterRetention].Verdict)

	// Without a declared retention there is no window to blame: not judged.
	o.Retention = 0
	_, listed := verdicts(o)[clientcheck.IDRetryAfterRetention]
	require.False(t, listed)
}

// refundsWithRetention is the reference server keeping keys for retention, and its
// profile declaring so.
func refundsWithRetention(t *testing.T, retention time.Duration) *profile.Profile {
	t.Helper()
	ref, err := reference.New(reference.WithRetention(retention), reference.WithCleanupInterval(50*time.Millisecond))
	require.NoError(t, err)
	srv := httptest.NewServer(ref)
	t.Cleanup(func() { srv.Close(); ref.Close() })
	p, err := profile.Builtin("reference")
	require.NoError(t, err)
	p.BaseURL, p.Retention = srv.URL, profile.Duration(retention)
	return p
}

// In client-check the hold fits inside the declared retention unless the user sets it:
// a correct client without a per-attempt timeout, retrying after the default hold,
// still finds its key. With hold=DUR past the retention, the second effect is named for
// what it is.
func TestTheHoldFitsInsideTheDeclaredRetention(t *testing.T) {
	t.Parallel()
	p := refundsWithRetention(t, 2*time.Second)
	client := policy{orders: 1, backoff: 200 * time.Millisecond, giveUp: clientcheck.OutcomeUnknown}.client()

	res, err := clientcheck.Run(context.Background(), clientcheck.Config{Profile: p, FaultSpec: "hold", Timeout: time.Minute}, client)
	require.NoError(t, err)
	require.NoError(t, res.Err())
	require.Equal(t, 1, res.Observation.Ledger["order-1"])
	require.Equal(t, 1000.0, res.Observation.Schedule.HoldMS, "half the retention")
	require.Contains(t, res.Observation.Schedule.HoldNote, "half the declared retention 2s")
	require.Equal(t, verdict.NA, resultOf(t, res, clientcheck.IDAttemptTimeout).Verdict, "a 1s hold says nothing of a 60s patience")

	p = refundsWithRetention(t, 2*time.Second) // a server of its own: order-1's key is fresh
	res, err = clientcheck.Run(context.Background(), clientcheck.Config{Profile: p, FaultSpec: "hold=2500ms", Timeout: time.Minute}, client)
	require.NoError(t, err)
	require.Equal(t, 2, res.Observation.Ledger["order-1"], "the retry came after the key expired")
	require.Equal(t, verdict.NA, resultOf(t, res, clientcheck.IDOneEffect).Verdict, "its one operation took effect again after the retention: not the key discipline's")
	late := resultOf(t, res, clientcheck.IDRetryAfterRetention)
	require.Equal(t, verdict.Fail, late.Verdict, late.Message)
	require.Contains(t, late.Message, "outlives the API's retention, 2s")
	require.Len(t, res.Findings(), 1, res.Err())
}

// expect.honours_key: false: the API executes every request, so the duplicates are the
// API's; the client is judged on a blind re-send after a lost answer.
func TestAnAPIThatIgnoresKeys(t *testing.T) {
	t.Parallel()
	o := goodObservation() // each operation's first answer lost, then retried under its key
	o.Ledger = map[string]int{"order-1": 2, "order-2": 2}
	o.KeyIgnored = true
	v := verdicts(o)
	require.Equal(t, verdict.NA, v[clientcheck.IDOneEffect].Verdict, v[clientcheck.IDOneEffect].Message)
	require.Contains(t, v[clientcheck.IDOneEffect].Message, "the API's duplicates")
	blind := v[clientcheck.IDBlindResend]
	require.Equal(t, verdict.Fail, blind.Verdict, blind.Message)
	require.Contains(t, blind.Evidence.Examples[0], "order-1: re-sent at attempt 2 after a lost answer at attempt 1")

	// A client that reports a lost answer unknown and does not re-send passes.
	o.Attempts = []faultproxy.Record{o.Attempts[0], o.Attempts[2]}
	o.Ledger = map[string]int{"order-1": 1, "order-2": 1}
	o.Outcomes = []clientcheck.Outcome{{Operation: "order-1", Outcome: "unknown"}, {Operation: "order-2", Outcome: "unknown"}}
	v = verdicts(o)
	require.Equal(t, verdict.Pass, v[clientcheck.IDBlindResend].Verdict, v[clientcheck.IDBlindResend].Message)
	require.Empty(t, clientcheck.Findings(clientcheck.Check(o), true))

	// Declared in a profile.
	p, err := profile.Parse("x.yaml", []byte(fmt.Sprintf("name: x\nbase_url: http://127.0.0.1:1\noperation: {path: /v1/refunds, body: '{\"order_id\": \"{{.Entity}}\"}', altered_body: '{\"order_id\": \"{{.Entity}}\", \"n\": 2}'}\nside_effects: {path: '/v1/refunds?order_id={{.Entity}}', count: data.#}\nexpect: {in_flight: 409, mismatch: 422, missing_key: optional, honours_key: %v}\n", false)))
	require.NoError(t, err)
	require.False(t, p.Expect.KeyHonoured())
}
