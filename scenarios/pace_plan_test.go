package scenarios_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/scenarios"
	"github.com/idemproof/idemproof/verdict"
)

// runPaced runs scenarios with the runner's own preflight, which measures the target's
// pace, under a scenario time limit (0: the default).
func runPaced(t *testing.T, p *profile.Profile, limit time.Duration, only ...string) map[string]verdict.Result {
	t.Helper()
	return runConfigured(t, 10*time.Minute, scenarios.RunConfig{Profiles: []*profile.Profile{p}, Only: only, ScenarioTimeout: limit, Seed: 1})
}

// A slow but correct target under a time limit made for a fast one: every call (ledger
// reads too) takes a deliberate 40 ms, and the scenario limit is 2 s (the targets
// took 300-500 ms a call against the default 20 s: the same proportion).
// race/keepalive-many-keys sends 800 requests four at a time and reads 42 ledgers, far
// past the limit: it was UNKNOWN on every target. Fitted to the pace the preflight
// measured, it gets the time those requests take, keeps its 200 keys per route, says so,
// and is judged: PASS for the correct target, FAIL for an engine that aliases keys on a
// reused connection.
func TestKeepAliveManyKeysScalesToASlowTarget(t *testing.T) {
	for _, tc := range []struct {
		name  string
		alias bool
		want  verdict.Verdict
	}{
		{"correct", false, verdict.Pass},
		{"aliasing", true, verdict.Fail},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := fakeProfile(t, startFake(t, &fakeRefunds{latency: 40 * time.Millisecond, aliasConn: tc.alias}))
			r := runPaced(t, p, 2*time.Second, "race/keepalive-many-keys")["race/keepalive-many-keys"]
			require.Equal(t, tc.want, r.Verdict, r.Message)
			require.NotNil(t, r.Evidence.Record.Plan, r.Message)
			require.Contains(t, r.Message, "not 2s: 200 requests in a row and 42 ledger reads at the", "what was scaled is in the message")
			keys := map[string]bool{}
			for _, op := range r.Evidence.Record.History {
				keys[op.Key] = true
			}
			require.Len(t, keys, 400, "the key count is kept: fewer keys would prove less")
		})
	}
}

// expiry/not-evicted sends 500 newer keys for at most 10 s; four at a time, a target
// that takes a deliberate 250 ms a call gets about 160 of them, too few to show that the
// key was not evicted (INFO), and a cache that holds 300 keys is never seen evicting.
// Fitted to the pace, the keys go more at a time: all of them are sent, the correct
// target PASSes and the bounded cache FAILs.
func TestNotEvictedScalesToASlowTarget(t *testing.T) {
	for _, tc := range []struct {
		name     string
		capacity int
		want     verdict.Verdict
	}{
		{"correct", 0, verdict.Pass},
		{"bounded cache", 300, verdict.Fail},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := fakeProfile(t, startFake(t, &fakeRefunds{latency: 250 * time.Millisecond, capacity: tc.capacity}))
			r := runPaced(t, p, 0, "expiry/not-evicted")["expiry/not-evicted"]
			require.Equal(t, tc.want, r.Verdict, r.Message)
			require.Contains(t, r.Message, "the 500 newer keys go", "what was scaled is in the message")
			require.Contains(t, r.Message, "not 4")
		})
	}
}
