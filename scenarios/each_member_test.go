package scenarios_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/verdict"
)

// The reference profile's body changes in two members, amount and reason (order_id names
// the entity): member-1 is the amount, member-2 the reason.
func eachMember(amount, reason verdict.OpType, amountStatus, reasonStatus int, amountBody, reasonBody string, ledger int) verdict.Record {
	return newHistory().at(0, "original", verdict.OpOK, 201, committed, nil).
		at(2, "member-1", amount, amountStatus, amountBody, nil).
		at(4, "member-2", reason, reasonStatus, reasonBody, nil).
		record(ledger)
}

func TestEachMemberVerdicts(t *testing.T) {
	t.Parallel()
	p := refProfile(t)
	judge := checker(t, "fingerprint/each-member")
	refusal := `{"title":"reused with another payload"}`

	v, msg, _ := judge(eachMember(verdict.OpFail, verdict.OpFail, 422, 422, refusal, refusal, 1), p)
	require.Equal(t, verdict.Pass, v, msg)
	require.Contains(t, msg, "amount, reason")

	// The reason is not in the fingerprint: the reuse got the original's response.
	v, msg, ev := judge(eachMember(verdict.OpFail, verdict.OpOK, 422, 201, refusal, committed, 1), p)
	require.Equal(t, verdict.NonStrict, v, msg)
	require.Contains(t, msg, "the fingerprint ignores reason")
	require.Contains(t, msg, "expect.fingerprint_ignores: [reason]")
	require.Equal(t, 1, ev.Categories[verdict.CatLeaked])

	// Declared left out on purpose: the reason is not changed, the amount passes alone.
	declared := refProfile(t)
	declared.Expect.FingerprintIgnores = []string{"reason"}
	v, msg, _ = judge(newHistory().at(0, "original", verdict.OpOK, 201, committed, nil).at(2, "member-1", verdict.OpFail, 422, refusal, nil).record(1), declared)
	require.Equal(t, verdict.Pass, v, msg)

	// Executed under the same key.
	v, msg, _ = judge(eachMember(verdict.OpOK, verdict.OpFail, 201, 422, `{"id":"re_2","amount":4901}`, refusal, 2), p)
	require.Equal(t, verdict.Fail, v, msg)
	require.Contains(t, msg, "executed under the same key: 2 side effects")

	// A response of its own, yet nothing executed.
	v, msg, _ = judge(eachMember(verdict.OpOK, verdict.OpFail, 201, 422, `{"id":"re_2","amount":4901}`, refusal, 1), p)
	require.Equal(t, verdict.Fail, v, msg)

	// Refused as invalid before the key was looked at: nothing to judge for that member.
	v, msg, _ = judge(eachMember(verdict.OpFail, verdict.OpFail, 422, 400, refusal, `{"title":"bad reason"}`, 1), p)
	require.Equal(t, verdict.Pass, v, msg)
	require.Contains(t, msg, "refused otherwise (not judged): reason (400")
	v, msg, _ = judge(eachMember(verdict.OpFail, verdict.OpFail, 400, 400, `{}`, `{}`, 1), p)
	require.Equal(t, verdict.Info, v, msg)

	// A body with more members than a run changes: the verdict names the ones it did not.
	wide := refProfile(t)
	var members string
	for i := range 17 {
		members += fmt.Sprintf(`, "m%02d": %d`, i, i)
	}
	wide.Operation.Body = `{"order_id": "{{.Entity}}", "amount": 4900` + members + `}`
	h := newHistory().at(0, "original", verdict.OpOK, 201, committed, nil)
	for i := 1; i <= 16; i++ {
		h = h.at(2*i, fmt.Sprintf("member-%d", i), verdict.OpFail, 422, refusal, nil)
	}
	v, msg, _ = judge(h.record(1), wide)
	require.Equal(t, verdict.Pass, v, msg)
	require.Contains(t, msg, "not changed (a run changes the first 16 of the body's 18 members; what the verdict says holds for those alone): m15, m16")

	// Throttled or unseen: UNKNOWN, never a verdict on the fingerprint.
	v, msg, _ = judge(eachMember(verdict.OpFail, verdict.OpFail, 429, 429, `{}`, `{}`, 1), p)
	require.Equal(t, verdict.Unknown, v, msg)
}

// A target with no fingerprint at all: every changed member refused as a repeat in
// flight after the original had answered (moov-io/base idempotent's 412 for any seen
// key), or every one replayed the original's response. NON-STRICT, saying the target
// has no fingerprint — not the INFO of members "refused before the fingerprint could be
// seen", which told a reader nothing was wrong.
func TestEachMemberWithoutAFingerprint(t *testing.T) {
	t.Parallel()
	p := refProfile(t)
	judge := checker(t, "fingerprint/each-member")
	busy := `{"error":"in flight"}`
	v, msg, _ := judge(eachMember(verdict.OpFail, verdict.OpFail, 409, 409, busy, busy, 1), p)
	require.Equal(t, verdict.NonStrict, v, msg)
	require.Contains(t, msg, "refused as a repeat in flight, not with 422")
	require.Contains(t, msg, "amount (409")
	require.Contains(t, msg, "it has no request fingerprint")

	v, msg, _ = judge(eachMember(verdict.OpOK, verdict.OpOK, 201, 201, committed, committed, 1), p)
	require.Equal(t, verdict.NonStrict, v, msg)
	require.Contains(t, msg, "the target has no request fingerprint")
}
