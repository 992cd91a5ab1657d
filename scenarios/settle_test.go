package scenarios_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/scenarios"
	"github.com/idemproof/idemproof/verdict"
)

// The settle step end to end, against fakes with known flaws: the runner sends it after
// every attempt ended, and the named scenarios catch what only it can see.

func runFake(t *testing.T, p *profile.Profile, only ...string) *verdict.Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rep, err := scenarios.Run(ctx, scenarios.RunConfig{Profiles: []*profile.Profile{p}, Only: only})
	require.NoError(t, err)
	return rep
}

func TestSettleStepRunsAfterEveryAttempt(t *testing.T) {
	t.Parallel()
	rep := runFake(t, fakeProfile(t, startFake(t, &fakeRefunds{})), "race/burst-50", "race/in-flight-409", "storage/5xx-not-pinned")
	for _, r := range rep.Results {
		if r.ScenarioID == "storage/5xx-not-pinned" {
			require.Equal(t, verdict.NA, r.Verdict, "the fake profile declares no fail hook")
			continue
		}
		requirePassOrUnrefusedBurst(t, r.ScenarioID, r)
		h := r.Evidence.Record.History
		last := h[len(h)-1]
		require.Equal(t, scenarios.SettleStep, last.Step, "%s ends with the settle step", r.ScenarioID)
		require.Equal(t, verdict.OpOK, last.Type)
		var lastOther time.Time
		for _, op := range h {
			if op.Step != scenarios.SettleStep && op.Type != verdict.OpInvoke {
				lastOther = op.Time
			}
		}
		invoked := h[len(h)-2]
		require.Equal(t, verdict.OpInvoke, invoked.Type)
		require.False(t, invoked.Time.Before(lastOther), "%s: the settle step starts after every other attempt answered", r.ScenarioID)
	}
}

// A key that stays at 409 after one contended burst is caught by the bursts and the
// in-flight scenario, as stuck.
func TestWedgedKeyIsCaughtAsStuck(t *testing.T) {
	t.Parallel()
	// The burst wedges the key only if a copy meets the original in flight: its work is
	// held a second, long enough for 50 copies sent at once to meet it on a loaded
	// machine (with 50 ms, copies that arrived after the work ended were served the
	// replay, and the burst was rightly INFO).
	p := fakeProfile(t, startFake(t, &fakeRefunds{wedge: true, hold: time.Second}))
	rep := runFake(t, p, "race/burst-50", "race/concurrent-pair", "race/in-flight-409")
	require.Len(t, rep.Results, 3)
	for _, r := range rep.Results {
		require.Equal(t, verdict.Fail, r.Verdict, "%s: %s", r.ScenarioID, r.Message)
		require.True(t, strings.HasPrefix(r.Message, "the key is stuck: the settle retry got 409 (in_flight) after every attempt ended"), "%s: %s", r.ScenarioID, r.Message)
		require.Equal(t, 1, r.Evidence.Categories["stuck"], r.ScenarioID)
	}
}

// A key held past the settle step's backoff (8 tries, 6.35 s of pauses) by a long
// declared lock timeout is not stuck: the settle step asks until the window has passed
// and gets the replay.
func TestSettleOutlastsALongLockTimeout(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out an 8 s lock timeout")
	}
	t.Parallel()
	// Refused for 7.5 s from the pair's 409: past the 8 tries, inside the 8 s lock.
	const lock = 8 * time.Second
	p := fakeProfile(t, startFake(t, &fakeRefunds{wedgeFor: lock - 500*time.Millisecond, hold: 50 * time.Millisecond}))
	p.LockTimeout = profile.Duration(lock)
	r := runFake(t, p, "race/concurrent-pair").Results[0]
	require.Equal(t, verdict.Pass, r.Verdict, r.Message)
	h := r.Evidence.Record.History
	last := h[len(h)-1]
	require.Equal(t, scenarios.SettleStep, last.Step)
	require.Equal(t, verdict.OpOK, last.Type, "the settle step ends on the replay, not on a 409")
}

// A stored business error replayed as an empty 200 is a fabricated success.
func TestBusinessErrorReplayedAsSuccessIsCaught(t *testing.T) {
	t.Parallel()
	p := fakeProfile(t, startFake(t, &fakeRefunds{errorAsSuccess: true}))
	p.Business = &profile.Example{Body: `{"order_id": "{{.Entity}}", "amount": 2000000}`, Status: 402}
	yes := true
	p.Expect.StoresBusinessErrors = &yes
	rep := runFake(t, p, "storage/business-4xx")
	r := rep.Results[0]
	require.Equal(t, verdict.Fail, r.Verdict, r.Message)
	require.Equal(t, "a business 402 was answered 200 on the repeat (0 body bytes): an error turned into a success", r.Message)
	require.Equal(t, 1, r.Evidence.Categories["fabricated"])

	correct := fakeProfile(t, startFake(t, &fakeRefunds{}))
	correct.Business, correct.Expect.StoresBusinessErrors = p.Business, &yes
	r = runFake(t, correct, "storage/business-4xx").Results[0]
	require.Equal(t, verdict.Pass, r.Verdict, r.Message)
}

// The block-and-replay school, declared: repeats wait and get the replay.
func TestInFlightWaitDeclaredEndToEnd(t *testing.T) {
	t.Parallel()
	p := patientProfile(t, startFake(t, &fakeRefunds{waits: true})) // a waiting repeat a loaded machine times out is UNKNOWN
	p.Expect.InFlight, p.Expect.InFlightWait = 0, true
	rep := runFake(t, p, "race/in-flight-409", "race/concurrent-pair", "race/burst-50", "race/in-flight-retry-after", "race/in-flight-not-fabricated")
	got := verdicts(rep)
	require.Equal(t, map[string]verdict.Verdict{
		"race/in-flight-409":            verdict.Pass,
		"race/concurrent-pair":          verdict.Pass,
		"race/burst-50":                 verdict.Pass,
		"race/in-flight-retry-after":    verdict.NA,
		"race/in-flight-not-fabricated": verdict.Pass,
	}, got, "%v", rep.Results)

	refusing := fakeProfile(t, startFake(t, &fakeRefunds{}))
	refusing.Expect.InFlight, refusing.Expect.InFlightWait = 0, true
	r := runFake(t, refusing, "race/in-flight-409").Results[0]
	require.Equal(t, verdict.Fail, r.Verdict, "a 409 where the profile declares wait: %s", r.Message)
}
