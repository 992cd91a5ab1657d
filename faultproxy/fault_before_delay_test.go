package faultproxy_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/faultproxy"
)

func TestBeforeDelayThenForwards(t *testing.T) {
	f := newFixture(t, faultproxy.Config{})
	f.addRule(faultproxy.Rule{Name: "slow", Fault: faultproxy.FaultSpec{Type: faultproxy.FaultBeforeDelay, Duration: 20 * time.Millisecond}})

	status, body, err := f.post("k1", `{}`)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, status)
	require.Equal(t, "k1", decode(t, body)["key"])
	require.Equal(t, 1, f.up.commits("k1"))

	rec := f.only("k1")
	require.True(t, rec.ReachedUpstream)
	require.Equal(t, 1, rec.UpstreamCalls)
	require.Equal(t, faultproxy.OutcomeOK, rec.Outcome)
	require.GreaterOrEqual(t, rec.ForwardedAfterMillis, 20.0, "the hold is in the time to the upstream call")

	// Passed through (the fast path): it left at once, and the record says it left.
	status, _, err = f.post("k2", `{}`)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, status)
	plain := f.only("k2")
	require.Greater(t, plain.ForwardedAfterMillis, 0.0)
}

func TestBeforeDelayClientGivesUpNothingArrives(t *testing.T) {
	f := newFixture(t, faultproxy.Config{})
	f.addRule(faultproxy.Rule{Name: "slow", Fault: faultproxy.FaultSpec{Type: faultproxy.FaultBeforeDelay, Duration: 5 * time.Second}})

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, f.srv.URL()+"/v1/refunds", strings.NewReader(`{}`))
	req.Header.Set("Idempotency-Key", "k1")
	_, err := f.client.Do(req)
	require.Error(t, err)

	rec := f.only("k1")
	require.Equal(t, faultproxy.ClientTimedOut, rec.ClientResult)
	require.False(t, rec.ReachedUpstream)
	require.Zero(t, rec.ForwardedAfterMillis, "it never left")
	require.Equal(t, 0, f.up.total())
}
