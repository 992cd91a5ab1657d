package faultproxy_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/faultproxy"
)

func TestAfterCloseCommitsOnceClientGetsNoBytes(t *testing.T) {
	f := newFixture(t, faultproxy.Config{})
	f.addRule(faultproxy.Rule{Name: "fin", Fault: faultproxy.FaultSpec{Type: faultproxy.FaultAfterClose}})

	_, _, err := f.post("k1", `{}`)
	require.Error(t, err)
	require.Contains(t, err.Error(), "EOF")
	require.Equal(t, 1, f.up.commits("k1"))

	rec := f.only("k1")
	require.True(t, rec.ReachedUpstream)
	require.Equal(t, faultproxy.ClientClosed, rec.ClientResult)
	require.Zero(t, rec.ClientStatus)
	require.Equal(t, faultproxy.OutcomeInfo, rec.Outcome)
}
