package faultproxy_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/faultproxy"
)

func TestAfterStatusCommitsOnceClientSeesStatus(t *testing.T) {
	for _, status := range []int{502, 503, 504} {
		f := newFixture(t, faultproxy.Config{})
		f.addRule(faultproxy.Rule{Name: "lost", Fault: faultproxy.FaultSpec{Type: faultproxy.FaultAfterStatus, Status: status}})

		got, _, err := f.post("k1", `{"amount":4900}`)
		require.NoError(t, err)
		require.Equal(t, status, got)
		require.Equal(t, 1, f.up.commits("k1"), "the upstream commits exactly once")

		rec := f.only("k1")
		require.True(t, rec.ReachedUpstream)
		require.Equal(t, 1, rec.UpstreamCalls)
		require.Equal(t, 201, rec.UpstreamStatus)
		require.Equal(t, "k1", decode(t, rec.UpstreamBody)["key"], "the committed body is journaled")
		require.Equal(t, status, rec.ClientStatus)
		require.Equal(t, faultproxy.OutcomeInfo, rec.Outcome)
	}
}
