package scenarios_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/scenarios"
)

// A scenario about a lost response proves nothing when no response was lost: a PASS
// there would be green without proof.
func TestAPassWithoutTheScenariosFaultIsUnknown(t *testing.T) {
	sc, ok := scenarios.Lookup("replay/after-503")
	require.True(t, ok)
	untouched := scenarios.Record{Journal: []faultproxy.Record{
		{Seq: 1, Key: "k", HasKey: true, Attempt: 1, ReachedUpstream: true, UpstreamStatus: 201, ClientStatus: 201},
		{Seq: 2, Key: "k", HasKey: true, Attempt: 2, ReachedUpstream: true, UpstreamStatus: 201, ClientStatus: 201},
	}}
	v, msg := scenarios.WithPremise(sc, untouched, scenarios.Pass, "one side effect; retry got 201", scenarios.Evidence{})
	require.Equal(t, scenarios.Unknown, v)
	require.Contains(t, msg, "fault (after-status) was applied to no attempt (2 in the proxy's journal)")
	require.Contains(t, msg, "one side effect; retry got 201", "what the checker saw is kept")

	v, _ = scenarios.WithPremise(sc, untouched, scenarios.Fail, "2 side effects", scenarios.Evidence{})
	require.Equal(t, scenarios.Fail, v, "a violation seen without the fault is still a violation")

	faulted := untouched
	faulted.Journal = append([]faultproxy.Record{{Seq: 1, Key: "k", HasKey: true, Attempt: 1, Fault: faultproxy.FaultAfterStatus, ReachedUpstream: true, UpstreamStatus: 201, ClientStatus: 503}}, untouched.Journal[1])
	v, _ = scenarios.WithPremise(sc, faulted, scenarios.Pass, "recovered", scenarios.Evidence{})
	require.Equal(t, scenarios.Pass, v)

	plain, ok := scenarios.Lookup("replay/sequential")
	require.True(t, ok)
	v, _ = scenarios.WithPremise(plain, untouched, scenarios.Pass, "replayed", scenarios.Evidence{})
	require.Equal(t, scenarios.Pass, v, "a scenario without a fault needs none")
}
