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

func TestAfterHoldPastClientTimeout(t *testing.T) {
	f := newFixture(t, faultproxy.Config{})
	f.addRule(faultproxy.Rule{Name: "hold", Fault: faultproxy.FaultSpec{Type: faultproxy.FaultAfterHold, Duration: 10 * time.Second}})

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, f.srv.URL()+"/v1/refunds", strings.NewReader(`{}`))
	req.Header.Set("Idempotency-Key", "k1")
	_, err := f.client.Do(req)
	require.ErrorIs(t, err, context.DeadlineExceeded)

	rec := f.only("k1")
	require.Equal(t, 1, f.up.commits("k1"))
	require.True(t, rec.ReachedUpstream)
	require.Equal(t, 201, rec.UpstreamStatus)
	require.Equal(t, faultproxy.ClientTimedOut, rec.ClientResult)
	require.Equal(t, faultproxy.OutcomeInfo, rec.Outcome)
}

func TestAfterHoldThenDeliver(t *testing.T) {
	f := newFixture(t, faultproxy.Config{})
	f.addRule(faultproxy.Rule{Name: "hold", Fault: faultproxy.FaultSpec{Type: faultproxy.FaultAfterHold, Duration: 10 * time.Millisecond}})
	status, body, err := f.post("k1", `{}`)
	require.NoError(t, err)
	require.Equal(t, 201, status)
	require.Equal(t, "k1", decode(t, body)["key"])
	require.Equal(t, faultproxy.OutcomeOK, f.only("k1").Outcome)
}

func TestAfterHoldThenDrop(t *testing.T) {
	f := newFixture(t, faultproxy.Config{})
	f.addRule(faultproxy.Rule{Name: "hold", Fault: faultproxy.FaultSpec{Type: faultproxy.FaultAfterHold, Duration: 10 * time.Millisecond, Then: faultproxy.ThenDrop}})
	_, _, err := f.post("k1", `{}`)
	require.Error(t, err)
	require.Equal(t, 1, f.up.commits("k1"))
	require.Equal(t, faultproxy.ClientClosed, f.only("k1").ClientResult)
}
