package clientcheck_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/clientcheck"
	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/verdict"
)

func keepsItsKey(order, _ int) string { return fmt.Sprintf("refund-order-%d", order) }

// Two kinds asked for: both are dealt, both are applied, and the schedule says so.
func TestTwoFaultKindsAreBothAppliedAndReported(t *testing.T) {
	res, err := clientcheck.Run(context.Background(), clientcheck.Config{FaultSpec: "409=1,422", Seed: 3, Timeout: 30 * time.Second}, refundLoop(4, keepsItsKey))
	require.NoError(t, err)

	kinds := map[string]int{}
	for _, a := range res.Observation.Schedule.Assignments {
		kinds[a.Kind]++
	}
	require.Equal(t, map[string]int{"409": 2, "422": 2}, kinds, "4 operations, 2 kinds: each kind dealt twice")

	delivered := map[int]int{}
	for _, r := range res.Observation.Attempts {
		if r.Fault != "" {
			delivered[r.ClientStatus]++
		}
	}
	require.Equal(t, map[int]int{409: 2, 422: 2}, delivered, "each operation's first attempt met its kind")

	lines := strings.Join(clientcheck.ScheduleLines(res.Observation), "\n")
	require.Contains(t, lines, ": 409, applied to 1 attempt(s)")
	require.Contains(t, lines, ": 422, applied to 1 attempt(s)")
	require.NotContains(t, lines, "never applied")

	var schedule *verdict.Result
	for _, r := range res.Report.Results {
		if r.ScenarioID == clientcheck.IDFaultSchedule {
			schedule = &r
		}
	}
	require.NotNil(t, schedule, "the schedule is a result of the report (JSON, JUnit, HTML)")
	require.Equal(t, verdict.Info, schedule.Verdict)
	require.Equal(t, map[string]int{faultproxy.FaultBeforeStatus: 4}, schedule.Evidence.Categories)
	require.Contains(t, schedule.Message, "409=1,422 (seed 3) over 4 operation(s)")

	// A 409 then a wait of its Retry-After, a 422 then no retry: the client is correct.
	require.NoError(t, res.Err())
}

func TestTheSameSeedDealsTheSame(t *testing.T) {
	deal := func(seed int64) []clientcheck.Assignment {
		res, err := clientcheck.Run(context.Background(), clientcheck.Config{FaultSpec: "reset,503,502", Seed: seed, Timeout: 30 * time.Second}, refundLoop(6, keepsItsKey))
		require.NoError(t, err)
		return res.Observation.Schedule.Assignments
	}
	first := deal(11)
	require.Len(t, first, 6)
	require.Equal(t, first, deal(11))
	perCycle := map[string]int{}
	for _, a := range first[:3] {
		perCycle[a.Kind]++
	}
	require.Equal(t, map[string]int{"reset": 1, "503": 1, "502": 1}, perCycle, "every cycle deals every kind once")
}

func TestHoldIsDealtToOneOperation(t *testing.T) {
	res, err := clientcheck.Run(context.Background(), clientcheck.Config{FaultSpec: "hold=400ms,503", Seed: 1, Timeout: 30 * time.Second}, refundLoop(4, keepsItsKey))
	require.NoError(t, err)
	kinds := map[string]int{}
	for _, a := range res.Observation.Schedule.Assignments {
		kinds[a.Kind]++
	}
	require.Equal(t, map[string]int{"hold": 1, "503": 3}, kinds)
	require.NoError(t, res.Err())
}

func TestAKindThatCouldNeverFireIsAnErrorBeforeTheRun(t *testing.T) {
	p, err := profile.Builtin("reference")
	require.NoError(t, err)
	// Rules that read a 422 as in flight: a "422" fault would never read as a mismatch.
	p.Outcomes = &profile.Outcomes{Classes: []outcome.ClassRules{{Class: outcome.InFlight, Rules: []outcome.Rule{{Status: []int{409, 422}}}}}}
	ran := false
	client := func(string) error { ran = true; return nil }
	_, err = clientcheck.Run(context.Background(), clientcheck.Config{Profile: p, FaultSpec: "422"}, client)
	require.ErrorContains(t, err, `fault "422": the profile reference classifies the answer it would send (status 422) as in_flight, not mismatch`)
	require.False(t, ran, "refused before the client runs")

	dir := t.TempDir()
	for rules, want := range map[string]string{
		`[{"name":"get","match":{"method":"GET"},"fault":{"type":"before-reset"}}]`:                                                                                `rule "get": matches method GET, but the operation is POST /v1/refunds`,
		`[{"name":"a","match":{"path":"/v1/refunds"},"fault":{"type":"before-reset"}},{"name":"b","match":{"path":"/v1/refunds"},"fault":{"type":"after-reset"}}]`: `rule "b": rule "a" has the same match and always fires first`,
		`[{"name":"other","match":{"path":"/v2/*"},"fault":{"type":"before-reset"}}]`:                                                                              `rule "other": path "/v2/*" does not match the operation's path /v1/refunds`,
	} {
		file := dir + "/rules.json"
		require.NoError(t, os.WriteFile(file, []byte(rules), 0o644))
		_, err := clientcheck.Run(context.Background(), clientcheck.Config{FaultSpec: "@" + file}, client)
		require.ErrorContains(t, err, want)
	}
	require.False(t, ran)
}

// A hold the client waited out (its timeout, or its SDK's, is longer than the hold)
// ended as a dropped connection: the schedule line says the timeout path was not tested.
func TestAHoldTheClientWaitedOutSaysSo(t *testing.T) {
	held := faultproxy.Record{Seq: 1, Key: "k1", HasKey: true, Attempt: 1, BodySHA256: "b1", Rule: "client-check-hold",
		Fault: faultproxy.FaultAfterHold, ReachedUpstream: true, ClientResult: faultproxy.ClientClosed}
	o := clientcheck.Observation{
		Attempts: []faultproxy.Record{held}, Entities: map[string]string{"b1": "order-1"},
		Schedule: clientcheck.AppliedSchedule{Spec: "hold", Kinds: []string{"hold"}, Assignments: []clientcheck.Assignment{{Operation: "order-1", Kind: "hold"}}},
	}
	lines := strings.Join(clientcheck.ScheduleLines(o), "\n")
	require.Contains(t, lines, "order-1: hold, applied to 1 attempt(s); the client waited out the whole hold, so its timeout path was not exercised")

	// A hold as long as client_patience, waited out, is client/attempt-timeout's finding.
	o.Patience, o.Schedule.HoldMS, o.Schedule.HoldNote = 2*time.Second, 2000, "until the client gives up, released at client_patience"
	lines = strings.Join(clientcheck.ScheduleLines(o), "\n")
	require.Contains(t, lines, "order-1: hold (2s: until the client gives up, released at client_patience), applied to 1 attempt(s); the client waited out the whole hold: client/attempt-timeout")

	o.Attempts[0].ClientResult = faultproxy.ClientTimedOut
	lines = strings.Join(clientcheck.ScheduleLines(o), "\n")
	require.NotContains(t, lines, "waited out")
}
