package faultproxy_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/faultproxy"
)

func TestDuplicateCommitsTwiceClientGetsOneAnswer(t *testing.T) {
	for _, mode := range []string{faultproxy.ModeSequential, faultproxy.ModeConcurrent} {
		t.Run(mode, func(t *testing.T) {
			f := newFixture(t, faultproxy.Config{})
			f.addRule(faultproxy.Rule{Name: "lb", Fault: faultproxy.FaultSpec{Type: faultproxy.FaultDuplicate, Mode: mode}})

			status, body, err := f.post("k1", `{"amount":4900}`)
			require.NoError(t, err)
			require.Equal(t, 201, status)
			require.Equal(t, float64(len(`{"amount":4900}`)), decode(t, body)["body_bytes"], "both copies carry the whole body")
			require.Equal(t, 2, f.up.commits("k1"))

			rec := f.only("k1")
			require.Equal(t, 2, rec.UpstreamCalls)
			require.Equal(t, faultproxy.OutcomeOK, rec.Outcome)
		})
	}
}

func TestDuplicateGoesToTwoDifferentUpstreams(t *testing.T) {
	a, b := newUpstream(t, "a"), newUpstream(t, "b")
	srv, err := faultproxy.Start(context.Background(), faultproxy.Config{Upstreams: []string{a.URL, b.URL}})
	require.NoError(t, err)
	t.Cleanup(func() { srv.Close() })
	f := &fixture{t: t, up: a, srv: srv, proxy: srv.Proxy(), client: newFixture(t, faultproxy.Config{}).client}
	f.addRule(faultproxy.Rule{Name: "lb", Fault: faultproxy.FaultSpec{Type: faultproxy.FaultDuplicate, Mode: faultproxy.ModeConcurrent}})

	for _, key := range []string{"k1", "k2", "k3"} {
		status, _, err := f.post(key, `{}`)
		require.NoError(t, err)
		require.Equal(t, 201, status)
		require.Equal(t, 1, a.commits(key), "key %s on replica a", key)
		require.Equal(t, 1, b.commits(key), "key %s on replica b", key)
	}
}
