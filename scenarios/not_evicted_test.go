package scenarios_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/verdict"
)

// expiry/not-evicted: the key's original, n newer keys (each its own key, on the side
// entity), then the key's repeat.
func newerKeysRecord(newer int, newerStatus, repeatStatus int, repeatBody string, ledger int) verdict.Record {
	h := newHistory().at(0, "original", verdict.OpOK, 201, committed, nil)
	for i := 0; i < newer; i++ {
		typ := verdict.OpOK
		if newerStatus == 0 {
			typ = verdict.OpInfo
		}
		h.at(2+i, "newer-keys", typ, newerStatus, fmt.Sprintf(`{"id":"re_n%d","amount":100}`, i), nil).keyed(fmt.Sprintf("newer-%03d", i))
	}
	return h.at(2+newer+1, "repeat", verdict.OpOK, repeatStatus, repeatBody, nil).record(ledger)
}

func TestNotEvictedVerdicts(t *testing.T) {
	t.Parallel()
	p := refProfile(t)
	judge := checker(t, "expiry/not-evicted")

	v, msg, _ := judge(newerKeysRecord(500, 201, 201, committed, 1), p)
	require.Equal(t, verdict.Pass, v, msg)
	require.Contains(t, msg, "after 500 newer keys executed")

	// Forgotten: the repeat executed again, its own response, a second side effect.
	v, msg, ev := judge(newerKeysRecord(500, 201, 201, `{"id":"re_2","amount":4900}`, 2), p)
	require.Equal(t, verdict.Fail, v, msg)
	require.Contains(t, msg, "forgotten inside its retention (evicted for the newer keys")
	require.Equal(t, 1, ev.Categories[verdict.CatDuplicated])

	// Too few newer keys executed (rate-limited, refused, or too slow): a replay proves
	// nothing about eviction.
	v, msg, _ = judge(newerKeysRecord(150, 201, 201, committed, 1), p)
	require.Equal(t, verdict.Info, v, msg)
	require.Contains(t, msg, "only 150 newer keys executed")
	v, msg, _ = judge(newerKeysRecord(500, 400, 201, committed, 1), p)
	require.Equal(t, verdict.Info, v, msg)
	require.Contains(t, msg, "500 refused or failed")
}

// Under a global ledger every newer key's side effect is in the count: each executed one
// is taken off, and where some newer keys' answers were not seen, the verdict must be
// the same at both ends of what they may have added.
func TestNotEvictedUnderAGlobalLedger(t *testing.T) {
	t.Parallel()
	p := refProfile(t)
	p.SideEffects.Scope = profile.ScopeGlobal
	judge := checker(t, "expiry/not-evicted")

	v, msg, _ := judge(newerKeysRecord(500, 201, 201, committed, 501), p)
	require.Equal(t, verdict.Pass, v, msg)
	v, msg, _ = judge(newerKeysRecord(500, 201, 201, `{"id":"re_2","amount":4900}`, 502), p)
	require.Equal(t, verdict.Fail, v, msg)

	// 302 effects, 300 newer keys seen executing and one not seen: the replayed repeat
	// may have executed again (the unseen key added nothing) or not (it added one).
	v, msg, _ = judge(withTimedOutNewerKeys(newerKeysRecord(300, 201, 201, committed, 302), 300, 1), p)
	require.Equal(t, verdict.Unknown, v, msg)
	// A repeat with a response of its own FAILs at both ends: executed again, or a
	// divergent replay. The message is the one that holds at both: the replay differs.
	v, msg, ev := judge(withTimedOutNewerKeys(newerKeysRecord(300, 201, 201, `{"id":"re_2","amount":4900}`, 302), 300, 1), p)
	require.Equal(t, verdict.Fail, v, msg)
	require.Contains(t, msg, "the replay differs")
	require.Zero(t, ev.Categories[verdict.CatDuplicated], "no second side effect is claimed that an unseen newer key may account for")
}

// withTimedOutNewerKeys appends n newer-key attempts whose answers were not seen.
func withTimedOutNewerKeys(rec verdict.Record, from, n int) verdict.Record {
	h := &history{t0: newHistory().t0, ops: rec.History}
	for i := 0; i < n; i++ {
		h.timeout(1000+i, "newer-keys").keyed(fmt.Sprintf("late-%03d", from+i))
	}
	rec.History = h.ops
	return rec
}

// A repeat refused as a repeat (in flight, as moov-io/base's idempotent answers every
// key it has seen with 412) proves the key was still known: not evicted, a PASS here;
// the refusal instead of a replay is replay/sequential's finding, not this scenario's
// "stuck" FAIL.
func TestNotEvictedPassesWhenTheRepeatIsRefusedAsARepeat(t *testing.T) {
	t.Parallel()
	p := refProfile(t)
	judge := checker(t, "expiry/not-evicted")
	rec := newerKeysRecord(500, 201, 409, `{"error":"in flight"}`, 1)
	rec.History[len(rec.History)-1].Type = verdict.OpFail
	rec.History[len(rec.History)-1].Class = outcome.InFlight
	v, msg, _ := judge(rec, p)
	require.Equal(t, verdict.Pass, v, msg)
	require.Contains(t, msg, "not evicted: the key was still known after 500 newer keys executed")

	// Executed again after the refusal would be a second effect: still a FAIL.
	rec = newerKeysRecord(500, 201, 409, `{"error":"in flight"}`, 2)
	rec.History[len(rec.History)-1].Type = verdict.OpFail
	rec.History[len(rec.History)-1].Class = outcome.InFlight
	v, msg, _ = judge(rec, p)
	require.Equal(t, verdict.Fail, v, msg)
}
