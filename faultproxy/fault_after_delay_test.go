package faultproxy_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/faultproxy"
)

func TestAfterDelayDeliversCommittedResponse(t *testing.T) {
	f := newFixture(t, faultproxy.Config{})
	f.addRule(faultproxy.Rule{Name: "late", Fault: faultproxy.FaultSpec{Type: faultproxy.FaultAfterDelay, Duration: 20 * time.Millisecond}})

	status, body, err := f.post("k1", `{}`)
	require.NoError(t, err)
	require.Equal(t, 201, status)
	require.Equal(t, "k1", decode(t, body)["key"])
	require.Equal(t, 1, f.up.commits("k1"))
	rec := f.only("k1")
	require.Equal(t, faultproxy.ClientDelivered, rec.ClientResult)
	require.Equal(t, faultproxy.OutcomeOK, rec.Outcome)
}
