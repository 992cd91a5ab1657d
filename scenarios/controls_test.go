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

// key/empty-quoted sends the literal key "" in every run: a target that takes it for an
// opaque key keeps the first run's record, and a later run's request meets it. With a
// fingerprint, the later run's body (another entity) is refused as a mismatch; without
// one, it gets the earlier run's response. Neither belongs to the later run: it is said,
// never passed or failed on.
func TestAFixedKeyMeetingAnEarlierRunIsNeitherPassNorFail(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		fake *fakeRefunds
		says string
	}{
		{"fingerprinted", &fakeRefunds{}, "cannot be told apart"},
		{"no fingerprint", &fakeRefunds{noFingerprint: true}, "met a record it did not leave"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := fakeProfile(t, startFake(t, tc.fake))
			first := runOn(t, p, "key/empty-quoted")["key/empty-quoted"]
			require.Equal(t, verdict.Info, first.Verdict, "the first run: \"\" used as a key: %s", first.Message)
			later := runOn(t, p, "key/empty-quoted")["key/empty-quoted"]
			require.NotContains(t, []verdict.Verdict{verdict.Pass, verdict.Fail, verdict.NonStrict}, later.Verdict, later.Message)
			require.Equal(t, verdict.Info, later.Verdict, later.Message)
			require.Contains(t, later.Message, tc.says)
			require.Contains(t, later.Message, "the same in every run")
		})
	}
}
