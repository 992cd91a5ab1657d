package scenarios_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/verdict"
)

// A middleware with no idempotency at all: every repeat executes again. The replay
// checks read the ledger before anything else, so a check about what a replay carries
// never passes where nothing was replayed.
func TestReplayChecksNeverPassWithoutAReplay(t *testing.T) {
	t.Parallel()
	p := fakeProfile(t, startFake(t, &fakeRefunds{broken: true}))
	p.Expect.ReplayHeaders = []string{"Content-Type"}
	got := runOn(t, p, "replay/fidelity-headers", "replay/marker")
	for _, id := range []string{"replay/fidelity-headers", "replay/marker"} {
		r := got[id]
		require.Equal(t, verdict.Fail, r.Verdict, "%s: %s", id, r.Message)
		require.Contains(t, r.Message, "2 side effects for one key", id)
		require.Contains(t, r.Message, "nothing was replayed", id)
		require.Equal(t, 1, r.Evidence.Categories[verdict.CatDuplicated], id)
	}
}

// An engine whose keys are not scoped by principal, and whose key store lost the first
// principal's record: the other principal's request executes on its own, but only
// because the record it should have met was gone. A control repeat of the first key
// after the second shows it: the first principal gets the other one's response.
func TestScopeNeedsTheFirstKeyHonouredAfterTheSecond(t *testing.T) {
	t.Parallel()
	p := fakeProfile(t, startFake(t, &fakeRefunds{globalScope: true, loseFirst: true}))
	p.Principals = []map[string]string{{"Authorization": "Bearer alice"}, {"Authorization": "Bearer bob"}}
	p.Expect.UniqueField = "id"
	r := runOn(t, p, "scope/other-principal")["scope/other-principal"]
	require.Equal(t, verdict.Fail, r.Verdict, r.Message)
	require.Contains(t, r.Message, "control")
	require.Equal(t, 1, r.Evidence.Categories[verdict.CatLeaked], r.Message)
}

// The same lost record under two distinct keys: the second key executes, and the
// control repeat of the first key executes again, a second effect for one key.
func TestDistinctKeysNeedTheFirstKeyHonouredAfterTheSecond(t *testing.T) {
	t.Parallel()
	p := fakeProfile(t, startFake(t, &fakeRefunds{loseFirst: true}))
	r := runOn(t, p, "key/distinct-keys-same-body")["key/distinct-keys-same-body"]
	require.Equal(t, verdict.Fail, r.Verdict, r.Message)
	require.Equal(t, 1, r.Evidence.Categories[verdict.CatDuplicated], r.Message)
	require.Contains(t, r.Message, "control")
}

// A correct target: the control repeat replays the first key's own response, and the
// PASS says so.
func TestScopeControlReplaysOnACorrectTarget(t *testing.T) {
	t.Parallel()
	p := fakeProfile(t, startFake(t, &fakeRefunds{}))
	p.Principals = []map[string]string{{"Authorization": "Bearer alice"}, {"Authorization": "Bearer bob"}}
	got := runOn(t, p, "scope/other-principal", "key/distinct-keys-same-body")
	for id, r := range got {
		require.Equal(t, verdict.Pass, r.Verdict, "%s: %s", id, r.Message)
		require.Contains(t, r.Message, "the control repeat of the first key replayed", id)
	}
}
