package scenarios_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/scenarios"
	"github.com/idemproof/idemproof/verdict"
)

// A scenario about a lost response proves nothing when no response was lost: a PASS
// there would be green without proof.
func TestAPassWithoutTheScenariosFaultIsUnknown(t *testing.T) {
	t.Parallel()
	p := refProfile(t)
	sc, ok := scenarios.Lookup("replay/after-503")
	require.True(t, ok)
	untouched := verdict.Record{Journal: []faultproxy.Record{
		{Seq: 1, Key: "k", HasKey: true, Attempt: 1, ReachedUpstream: true, UpstreamStatus: 201, ClientStatus: 201},
		{Seq: 2, Key: "k", HasKey: true, Attempt: 2, ReachedUpstream: true, UpstreamStatus: 201, ClientStatus: 201},
	}}
	v, msg := scenarios.WithPremise(sc, untouched, p, verdict.Pass, "one side effect; retry got 201", verdict.Evidence{})
	require.Equal(t, verdict.Unknown, v)
	require.Contains(t, msg, "fault (after-status) was applied to no attempt (2 in the proxy's journal)")
	require.Contains(t, msg, "one side effect; retry got 201", "what the checker saw is kept")

	v, _ = scenarios.WithPremise(sc, untouched, p, verdict.Fail, "2 side effects", verdict.Evidence{})
	require.Equal(t, verdict.Fail, v, "a violation seen without the fault is still a violation")

	faulted := untouched
	faulted.Journal = append([]faultproxy.Record{{Seq: 1, Key: "k", HasKey: true, Attempt: 1, Fault: faultproxy.FaultAfterStatus, ReachedUpstream: true, UpstreamStatus: 201, ClientStatus: 503}}, untouched.Journal[1])
	v, _ = scenarios.WithPremise(sc, faulted, p, verdict.Pass, "recovered", verdict.Evidence{})
	require.Equal(t, verdict.Pass, v)

	plain, ok := scenarios.Lookup("replay/sequential")
	require.True(t, ok)
	v, _ = scenarios.WithPremise(plain, untouched, p, verdict.Pass, "replayed", verdict.Evidence{})
	require.Equal(t, verdict.Pass, v, "a scenario without a fault needs none")
}

// Over MCP, a fault that lost the server's 404 (the session was gone, no tool ran) lost
// no answer of the tool: the lost replay replay/lost-twice is about never happened.
func TestAFaultThatLostASessionsNotFoundIsNoPremise(t *testing.T) {
	t.Parallel()
	p := refProfile(t)
	sc, ok := scenarios.Lookup("replay/lost-twice")
	require.True(t, ok)
	rec := verdict.Record{Journal: []faultproxy.Record{
		{Seq: 1, Key: "k", HasKey: true, Attempt: 1, Fault: faultproxy.FaultAfterReset, ReachedUpstream: true, UpstreamStatus: 200},
		{Seq: 2, Key: "k", HasKey: true, Attempt: 2, Fault: faultproxy.FaultAfterReset, ReachedUpstream: true, UpstreamStatus: 404},
		{Seq: 3, Key: "k", HasKey: true, Attempt: 3, ReachedUpstream: true, UpstreamStatus: 200, ClientStatus: 200},
	}}
	v, _ := scenarios.WithPremise(sc, rec, p, verdict.Pass, "one side effect; 2 lost response(s) recovered", verdict.Evidence{})
	require.Equal(t, verdict.Pass, v, "over plain HTTP a 404 is the API's own answer")

	p.Transport = profile.TransportMCP
	v, msg := scenarios.WithPremise(sc, rec, p, verdict.Pass, "one side effect; 2 lost response(s) recovered", verdict.Evidence{})
	require.Equal(t, verdict.Unknown, v, msg)
	require.Contains(t, msg, "lost the server's 404 to attempt 2")

	// A duplicate delivery whose delivered (second) copy met a 404: no duplicate reached
	// the tool, so one effect proves no deduplication.
	dup, ok := scenarios.Lookup("race/duplicate-sequential")
	require.True(t, ok)
	rec = verdict.Record{Journal: []faultproxy.Record{
		{Seq: 1, Key: "k", HasKey: true, Attempt: 1, Fault: faultproxy.FaultDuplicate, ReachedUpstream: true, UpstreamCalls: 2, UpstreamStatus: 404, ClientStatus: 404},
	}}
	v, msg = scenarios.WithPremise(dup, rec, p, verdict.Pass, "one side effect", verdict.Evidence{})
	require.Equal(t, verdict.Unknown, v, msg)
	require.Contains(t, msg, "the duplicated copy of attempt 1 met the server's 404")
	rec.Journal[0].UpstreamStatus, rec.Journal[0].ClientStatus = 200, 200
	v, _ = scenarios.WithPremise(dup, rec, p, verdict.Pass, "one side effect", verdict.Evidence{})
	require.Equal(t, verdict.Pass, v)
}

// A replay scenario whose fault hid a polled stream (the upstream's 200 held only the
// priming event, the tool still ran): a retry refused as in flight is no stuck key.
func TestAnInFlightRetryAfterAPolledStreamIsUnknown(t *testing.T) {
	t.Parallel()
	p := refProfile(t)
	rec := newHistory().timeout(0, "original").at(10, "retry", verdict.OpFail, 409, "busy", nil).record(0)
	rec.Journal = []faultproxy.Record{
		{Seq: 1, Attempt: 1, Fault: faultproxy.FaultAfterStatus, ReachedUpstream: true, UpstreamStatus: 200, ClientResult: faultproxy.ClientError},
		{Seq: 2, Attempt: 2, ReachedUpstream: true, UpstreamStatus: 409, ClientResult: faultproxy.ClientDelivered},
	}
	v, msg, _ := checker(t, "replay/after-503")(rec, p)
	require.Equal(t, verdict.Fail, v, "the original's answer ended with it: the key is stuck (%s)", msg)

	rec.Journal[0].Note = scenarios.NoteAnswerWithoutResponse
	v, msg, _ = checker(t, "replay/after-503")(rec, p)
	require.Equal(t, verdict.Unknown, v, msg)
	require.Contains(t, msg, "the original may still be running")
}
