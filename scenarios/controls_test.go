package scenarios_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/scenarios"
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

// A control repeat that a loaded machine delayed past the declared retention (1 s in
// refProfile) may execute anew on a correct target: one more effect is then allowed,
// never a duplicate, and nothing is proven (UNKNOWN).
func TestALateControlIsNeverADuplicate(t *testing.T) {
	t.Parallel()
	p := refProfile(t)
	scope := newHistory().at(0, "original", verdict.OpOK, 201, `{"id":"re_1"}`, nil).
		at(5, "other", verdict.OpOK, 201, `{"id":"re_2"}`, nil).
		span(10, 1500, scenarios.ControlStep, verdict.OpOK, 201, `{"id":"re_3"}`, nil).record(3)
	v, msg, _ := judgeWith(t, "scope/other-principal", scope, p)
	require.Equal(t, verdict.Unknown, v, msg)

	pair := newHistory().at(0, "first", verdict.OpOK, 201, `{"id":"re_1"}`, nil).
		at(5, "second", verdict.OpOK, 201, `{"id":"re_2"}`, nil).
		span(10, 1500, scenarios.ControlStep, verdict.OpOK, 201, `{"id":"re_3"}`, nil).record(3)
	for _, id := range []string{"key/distinct-keys-same-body", "key/case-distinct"} {
		v, msg, _ := judgeWith(t, id, pair, p)
		require.NotEqual(t, verdict.Fail, v, "%s: %s", id, msg)
		require.NotEqual(t, verdict.Pass, v, "%s: %s", id, msg)
	}

	// Inside the window, the same third effect is the first key's record lost.
	inside := newHistory().at(0, "first", verdict.OpOK, 201, `{"id":"re_1"}`, nil).
		at(5, "second", verdict.OpOK, 201, `{"id":"re_2"}`, nil).
		at(10, scenarios.ControlStep, verdict.OpOK, 201, `{"id":"re_3"}`, nil).record(3)
	v, msg, _ = judgeWith(t, "key/distinct-keys-same-body", inside, p)
	require.Equal(t, verdict.Fail, v, msg)
}
