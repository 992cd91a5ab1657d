package faultproxy_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/faultproxy"
)

func TestAfterResetCommitsOnceClientSeesReset(t *testing.T) {
	f := newFixture(t, faultproxy.Config{})
	f.addRule(faultproxy.Rule{Name: "rst", Fault: faultproxy.FaultSpec{Type: faultproxy.FaultAfterReset}})

	_, _, err := f.post("k1", `{}`)
	require.Error(t, err)
	require.Contains(t, err.Error(), "reset")
	require.Equal(t, 1, f.up.commits("k1"))

	rec := f.only("k1")
	require.True(t, rec.ReachedUpstream)
	require.Equal(t, 201, rec.UpstreamStatus)
	require.Equal(t, faultproxy.ClientReset, rec.ClientResult)
	require.Equal(t, faultproxy.OutcomeInfo, rec.Outcome)
}
