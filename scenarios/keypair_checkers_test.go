package scenarios_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/scenarios"
	"github.com/idemproof/idemproof/verdict"
)

// The two scenarios that send one payload under two distinct keys a key-handling bug
// takes for one (case folded, key cut short) share their checker.
var keyPairIDs = []string{"key/case-distinct", "key/long-prefix-distinct"}

// keyPairRecord is the first key answered 201 re_1, the second key's answer, and the
// control repeat of the first key replaying re_1, with the ledger's count.
func keyPairRecord(second verdict.OpType, status int, body string, headers map[string]string, ledger int) verdict.Record {
	return newHistory().
		at(0, "first", verdict.OpOK, 201, `{"id":"re_1","amount":4900}`, nil).
		at(5, "second", second, status, body, headers).
		at(10, scenarios.ControlStep, verdict.OpOK, 201, `{"id":"re_1","amount":4900}`, map[string]string{"Idempotent-Replayed": "true"}).
		record(ledger)
}

func TestKeyPairPassesWhenBothKeysExecuted(t *testing.T) {
	t.Parallel()
	p := refProfile(t)
	for _, id := range keyPairIDs {
		v, msg, _ := judgeWith(t, id, keyPairRecord(verdict.OpOK, 201, `{"id":"re_2","amount":4900}`, nil, 2), p)
		require.Equal(t, verdict.Pass, v, id)
		require.Contains(t, msg, "two side effects", id)
		require.Contains(t, msg, `id "re_1" and "re_2"`, id)

		// An answer not seen does not stop a PASS the ledger proves.
		v, msg, _ = judgeWith(t, id, keyPairRecord(verdict.OpInfo, 0, "", nil, 2), p)
		require.Equal(t, verdict.Pass, v, msg)
	}
}

func TestKeyPairFailsWhenTheSecondKeyGetsTheFirstKeysResponse(t *testing.T) {
	t.Parallel()
	p := refProfile(t)
	for _, id := range keyPairIDs {
		replayed := map[string]string{"Idempotent-Replayed": "true"}
		v, msg, ev := judgeWith(t, id, keyPairRecord(verdict.OpOK, 201, `{"id":"re_1","amount":4900}`, replayed, 1), p)
		require.Equal(t, verdict.Fail, v, id)
		require.Contains(t, msg, "the second key was answered the first key's response with 1 side effect(s)", id)
		require.Equal(t, 1, ev.Categories["lost"], id)
		require.Len(t, ev.Blame, 1, id)
		require.Equal(t, 3, ev.Blame[0].Index, "the second key's answer is blamed")
		require.NotNil(t, ev.Blame[0].Committed)

		// Two successes of their own but one effect: one is a success with nothing behind it.
		v, msg, ev = judgeWith(t, id, keyPairRecord(verdict.OpOK, 201, `{"id":"re_2","amount":4900}`, nil, 1), p)
		require.Equal(t, verdict.Fail, v, id)
		require.Contains(t, msg, "2 success(es) but 1 side effect(s)", id)
		require.Equal(t, 1, ev.Categories["lost"], id)

		// Two effects, but the second key was still handed the first's stored response.
		v, msg, ev = judgeWith(t, id, keyPairRecord(verdict.OpOK, 201, `{"id":"re_1","amount":4900}`, nil, 2), p)
		require.Equal(t, verdict.Fail, v, id)
		require.Contains(t, msg, "the same id", id)
		require.Equal(t, 1, ev.Categories["leaked"], id)

		// The first key's record answered for the second: its in-flight lock or its
		// fingerprint.
		for _, status := range []int{409, 422} {
			v, msg, _ = judgeWith(t, id, keyPairRecord(verdict.OpFail, status, `{}`, nil, 1), p)
			require.Equal(t, verdict.Fail, v, "%s %d", id, status)
			require.Contains(t, msg, "as if it were the first", id)
		}

		v, _, ev = judgeWith(t, id, keyPairRecord(verdict.OpOK, 201, `{"id":"re_2"}`, nil, 3), p)
		require.Equal(t, verdict.Fail, v, id)
		require.Equal(t, 1, ev.Categories["duplicated"], id)

		v, msg, _ = judgeWith(t, id, keyPairRecord(verdict.OpInfo, 500, `{}`, nil, 1), p)
		require.Equal(t, verdict.Fail, v, id)
		require.Contains(t, msg, "the second key got 500", id)
	}
}

func TestKeyPairIsUnknownWithoutAnAnswerOrALedger(t *testing.T) {
	t.Parallel()
	p := refProfile(t)
	for _, id := range keyPairIDs {
		v, msg, _ := judgeWith(t, id, keyPairRecord(verdict.OpInfo, 0, "", nil, 1), p)
		require.Equal(t, verdict.Unknown, v, id)
		require.Contains(t, msg, "1 attempt timed out (info), so whether both executed cannot be told", id)

		rec := keyPairRecord(verdict.OpOK, 201, `{"id":"re_2","amount":4900}`, nil, 2)
		rec.LedgerErr = "connection refused"
		v, _, _ = judgeWith(t, id, rec, p)
		require.Equal(t, verdict.Unknown, v, id)

		v, _, _ = judgeWith(t, id, newHistory().at(0, "first", verdict.OpOK, 201, `{"id":"re_1"}`, nil).record(1), p)
		require.Equal(t, verdict.Unknown, v, id)
	}
}

// A target that refuses the key shape has recorded nothing a second key could collide
// with: INFO with the reason, never a FAIL (a too-long key is key/max-length's to judge).
func TestKeyPairRefusedShapeIsInfo(t *testing.T) {
	t.Parallel()
	p := refProfile(t)
	for _, id := range keyPairIDs {
		rec := newHistory().
			at(0, "first", verdict.OpFail, 400, `{"title":"Idempotency-Key invalid"}`, nil).
			at(5, "second", verdict.OpFail, 400, `{"title":"Idempotency-Key invalid"}`, nil).
			record(0)
		v, msg, _ := judgeWith(t, id, rec, p)
		require.Equal(t, verdict.Info, v, id)
		require.Contains(t, msg, "the target refused", id)
		if id == "key/long-prefix-distinct" {
			require.Contains(t, msg, "a 255-character key")
			require.Contains(t, msg, "key/max-length judges the length")
		}

		// Only the second refused: odd, but no collision either.
		v, msg, _ = judgeWith(t, id, keyPairRecord(verdict.OpFail, 400, `{"title":"Idempotency-Key invalid"}`, nil, 1), p)
		require.Equal(t, verdict.Info, v, id)
		require.Contains(t, msg, "not a collision", id)

		// A refusal does not excuse a success with nothing behind it.
		rec = newHistory().
			at(0, "first", verdict.OpFail, 400, `{}`, nil).
			at(5, "second", verdict.OpOK, 201, `{"id":"re_2"}`, nil).
			record(0)
		v, _, ev := judgeWith(t, id, rec, p)
		require.Equal(t, verdict.Fail, v, id)
		require.Equal(t, 1, ev.Categories["lost"], id)
	}

	// Where the mismatch status is the invalid key's too (Stripe: 400), the first key's
	// 400 is still a refused shape, not a collision.
	stripe := refProfile(t)
	stripe.Expect.Mismatch = 400
	rec := newHistory().at(0, "first", verdict.OpFail, 400, `{}`, nil).at(5, "second", verdict.OpFail, 400, `{}`, nil).record(0)
	for i := range rec.History {
		if rec.History[i].Type != verdict.OpInvoke {
			rec.History[i].Class = outcome.Mismatch
		}
	}
	v, msg, _ := checker(t, "key/long-prefix-distinct")(rec, stripe)
	require.Equal(t, verdict.Info, v, msg)
}

// The keys the two scenarios send: case-swapped twins, and 255-character twins that
// differ only in their last character.
func TestKeyPairsSendWhatTheyName(t *testing.T) {
	t.Parallel()
	key := func(r seenRequest) string { return r.Header.Get("Idempotency-Key") }

	cased := sent(t, "key/case-distinct")
	require.Len(t, cased, 3, "the first key, the second, and the first again (the control)")
	a, b := key(cased[0]), key(cased[1])
	require.Equal(t, a, key(cased[2]))
	require.NotEqual(t, a, b)
	require.True(t, strings.EqualFold(a, b), "%q and %q differ only in letter case", a, b)
	for _, k := range []string{a, b} {
		require.NotEqual(t, strings.ToLower(k), k, "%q has upper-case letters", k)
		require.NotEqual(t, strings.ToUpper(k), k, "%q has lower-case letters", k)
	}

	long := sent(t, "key/long-prefix-distinct")
	require.Len(t, long, 3, "the first key, the second, and the first again (the control)")
	a, b = key(long[0]), key(long[1])
	require.Equal(t, a, key(long[2]))
	require.Len(t, a, 255)
	require.Len(t, b, 255)
	require.Equal(t, a[:254], b[:254])
	require.NotEqual(t, a, b)
}
