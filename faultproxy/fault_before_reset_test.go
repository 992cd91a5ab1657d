package faultproxy_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/faultproxy"
)

func TestBeforeResetNeverReachesUpstream(t *testing.T) {
	f := newFixture(t, faultproxy.Config{})
	f.addRule(faultproxy.Rule{Name: "rst", Fault: faultproxy.FaultSpec{Type: faultproxy.FaultBeforeReset}})

	_, _, err := f.post("k1", `{"amount":1}`)
	require.Error(t, err)
	require.Contains(t, err.Error(), "reset")
	require.Equal(t, 0, f.up.total())

	rec := f.only("k1")
	require.False(t, rec.ReachedUpstream)
	require.Equal(t, faultproxy.ClientReset, rec.ClientResult)
	require.Equal(t, faultproxy.OutcomeInfo, rec.Outcome)
	require.Equal(t, sha(`{"amount":1}`), rec.BodySHA256)
}
