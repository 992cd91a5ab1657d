package scenarios_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/scenarios"
	"github.com/idemproof/idemproof/verdict"
)

// Hand-written histories for the verdicts CI gates on: attempts nobody saw (Jepsen info)
// never fail a scenario by themselves, the settle step finds wedged keys, and replays
// that differ from what was committed fail.

const settle = scenarios.SettleStep

// burstOf is a burst of one success, refused attempts and timed-out ones.
func burstOf(refused, timedOut int) *history {
	h := newHistory().at(0, "burst", verdict.OpOK, 201, committed, nil)
	for i := 0; i < refused; i++ {
		h.at(1, "burst", verdict.OpFail, 409, "busy", nil)
	}
	for i := 0; i < timedOut; i++ {
		h.timeout(2, "burst")
	}
	return h
}

// Two copies sent at once with the slow hook must meet at the target for the pair to
// prove anything: the journal shows whether one was held while the other arrived.
func TestConcurrentPairNeedsTheCopiesTogetherAtTheTarget(t *testing.T) {
	t.Parallel()
	p := refProfile(t) // slow_operation holds the work 300 ms
	pair := func(first, second faultproxy.Record) verdict.Record {
		h := newHistory().span(0, 320, "burst", verdict.OpOK, 201, committed, nil).
			span(0, 321, "burst", verdict.OpOK, 201, committed, nil).
			at(400, settle, verdict.OpOK, 201, committed, nil)
		rec := h.record(1)
		first.Time, second.Time = h.t0.Add(first.Time.Sub(time.Time{})), h.t0.Add(second.Time.Sub(time.Time{}))
		rec.Journal = []faultproxy.Record{first, second, {Seq: 3, Attempt: 3, Time: h.t0.Add(400 * time.Millisecond), ReachedUpstream: true, UpstreamMillis: 1}}
		return rec
	}
	at := func(ms int) time.Time { return time.Time{}.Add(time.Duration(ms) * time.Millisecond) }
	judge := checker(t, "race/concurrent-pair")

	// One held 300 ms, the other waiting beside it: together at the target.
	v, msg, _ := judge(pair(faultproxy.Record{Seq: 1, Attempt: 1, Time: at(1), ReachedUpstream: true, UpstreamMillis: 300},
		faultproxy.Record{Seq: 2, Attempt: 2, Time: at(2), ReachedUpstream: true, UpstreamMillis: 299}), p)
	require.Equal(t, verdict.Pass, v, msg)

	// The hook held nothing: each answered in a millisecond, one after the other.
	v, msg, _ = judge(pair(faultproxy.Record{Seq: 1, Attempt: 1, Time: at(1), ReachedUpstream: true, UpstreamMillis: 0.5},
		faultproxy.Record{Seq: 2, Attempt: 2, Time: at(3), ReachedUpstream: true, UpstreamMillis: 0.4}), p)
	require.Equal(t, verdict.Unknown, v, msg)
	require.Contains(t, msg, "the slow hook did not hold the work: the target answered it in 500µs, and slow_operation declares 300ms")
	require.Contains(t, msg, "the 2 attempts were never at the target together")

	// Held, but the second arrived only after the first was done (a loaded machine).
	v, msg, _ = judge(pair(faultproxy.Record{Seq: 1, Attempt: 1, Time: at(1), ReachedUpstream: true, UpstreamMillis: 300},
		faultproxy.Record{Seq: 2, Attempt: 2, Time: at(305), ReachedUpstream: true, UpstreamMillis: 0.4}), p)
	require.Equal(t, verdict.Unknown, v, msg)
	require.NotContains(t, msg, "did not hold")
	require.Contains(t, msg, "never at the target together")
}

func TestBurstWithTimedOutAttemptsPasses(t *testing.T) {
	t.Parallel()
	for _, id := range []string{"race/burst-50", "race/burst-1000"} {
		h := burstOf(10, 37).at(3000, settle, verdict.OpOK, 201, committed, nil)
		v, msg, ev := checker(t, id)(h.record(1), refProfile(t))
		require.Equal(t, verdict.Pass, v, "%s: %s", id, msg)
		require.Equal(t, "one side effect from 48 attempts: 1 success, 10 refused with 409; 37 attempts timed out (info); up to 37 in flight at once", msg)
		require.Empty(t, ev.Categories, "nothing wrong was seen")
	}
}

func TestBurstWithoutASeenSuccess(t *testing.T) {
	t.Parallel()
	h := newHistory()
	for i := 0; i < 3; i++ {
		h.at(1, "burst", verdict.OpFail, 409, "busy", nil)
	}
	h.timeout(2, "burst")
	v, msg, _ := checker(t, "race/burst-50")(h.record(1), refProfile(t))
	require.Equal(t, verdict.Unknown, v, "only the unseen attempt could show the result, and nothing asked again")
	require.Contains(t, msg, "no answer showed the result")

	settled := *h
	settled.ops = append([]verdict.Op(nil), h.ops...)
	settled.at(3000, settle, verdict.OpOK, 201, committed, nil)
	v, msg, _ = checker(t, "race/burst-50")(settled.record(1), refProfile(t))
	require.Equal(t, verdict.Pass, v, msg)
	require.Equal(t, "one side effect from 4 attempts: none seen to succeed (3 refused; 1 attempt timed out (info)); the settle retry got 201", msg)

	v, _, ev := checker(t, "race/burst-50")(settled.record(0), refProfile(t))
	require.Equal(t, verdict.Fail, v, "a success with no effect anywhere")
	require.Equal(t, 1, ev.Categories["fabricated"])
}

// A 5xx in a race tells nothing of the attempt's fate (a gateway's 504 at its read
// timeout while the target executes it, its 503 for a rate limit): the side-effect count
// judges, as for an answer nobody saw. A 4xx that is no refusal stays a wrong answer.
func TestBurstWithAServerErrorIsJudgedByItsEffects(t *testing.T) {
	t.Parallel()
	h := burstOf(2, 5).at(4, "burst", verdict.OpInfo, 504, "<html>504 Gateway Time-out</html>", nil)
	v, msg, _ := checker(t, "race/burst-50")(h.record(1), refProfile(t))
	require.Equal(t, verdict.Pass, v, msg)
	require.Contains(t, msg, "1 got a 502, 503 or 504 (a gateway's or the target's: the operation's fate unknown)")

	v, msg, _ = checker(t, "race/burst-50")(h.record(2), refProfile(t))
	require.Equal(t, verdict.Fail, v, "two effects are two, whatever the 5xx hid")
	require.Contains(t, msg, "2 side effects")

	h = burstOf(2, 5).at(4, "burst", verdict.OpInfo, 500, "boom", nil)
	v, msg, _ = checker(t, "race/burst-50")(h.record(1), refProfile(t))
	require.Equal(t, verdict.Fail, v, "a 500 is the target's own answer, neither the refusal nor the replay")
	require.Equal(t, "1 attempts got neither the in-flight refusal (409) nor the replay", msg)

	h = burstOf(2, 5).at(4, "burst", verdict.OpFail, 422, `{"type":"mismatch"}`, nil)
	v, msg, _ = checker(t, "race/burst-50")(h.record(1), refProfile(t))
	require.Equal(t, verdict.Fail, v, "a 4xx that is no in-flight refusal is a definite wrong answer")
	require.Equal(t, "1 attempts got neither the in-flight refusal (409) nor the replay", msg)
}

// A burst whose copies the client gave up on unanswered may still be queued at the
// target when the settle step asks (a thousand copies waiting for a pool of
// connections): the settle window grows by one client timeout, and a refusal the target
// took longer than a lock may be held to give comes from a busy target, not a stuck key.
// Refusals answered at once over the whole grown window are a stuck key.
func TestABurstTheClientGaveUpOnIsNoStuckKeyWhileTheTargetIsBusy(t *testing.T) {
	t.Parallel()
	p := refProfile(t) // lock_timeout 600ms (settle window 800ms), client_timeout 2s
	judge := func(settleTries func(h *history)) (verdict.Verdict, string) {
		h := burstOf(0, 5)
		settleTries(h)
		v, msg, _ := checker(t, "race/burst-1000")(h.record(1), p)
		return v, msg
	}
	v, msg := judge(func(h *history) {
		for ms := 2100; ms <= 3100; ms += 250 {
			h.at(ms, settle, verdict.OpFail, 409, "busy", nil)
		}
	})
	require.Equal(t, verdict.Unknown, v, msg)
	require.Contains(t, msg, "into the 2.8s settle window", "past the lock's window, inside the one a queue of given-up attempts adds")

	v, msg = judge(func(h *history) { h.span(2100, 5100, settle, verdict.OpFail, 409, "busy", nil) })
	require.Equal(t, verdict.Unknown, v, msg)
	require.Contains(t, msg, "the target took 3s to answer its last try while 5 attempt(s) the client gave up on may still have been queued there")

	v, msg = judge(func(h *history) {
		for ms := 2100; ms <= 5100; ms += 300 {
			h.at(ms, settle, verdict.OpFail, 409, "busy", nil)
		}
	})
	require.Equal(t, verdict.Fail, v, msg)
	require.Contains(t, msg, "the key is stuck")
}

// A key that stays at 409 after one contended burst is wedged: the settle step's
// retries after every attempt ended all got 409.
func TestWedgedKeyFailsAsStuck(t *testing.T) {
	t.Parallel()
	// The settle tries span 900 ms: past the reference's settle window (its 600 ms lock
	// timeout plus the takeover margin).
	wedge := func(h *history) verdict.Record {
		for i := 0; i < 4; i++ {
			h.at(2000+i*300, settle, verdict.OpFail, 409, "busy", nil)
		}
		return h.record(1)
	}
	for _, id := range []string{"race/burst-50", "race/burst-1000", "race/concurrent-pair"} {
		v, msg, ev := checker(t, id)(wedge(burstOf(3, 0)), refProfile(t))
		require.Equal(t, verdict.Fail, v, id)
		require.True(t, strings.HasPrefix(msg, "the key is stuck: the settle retry got 409 (in_flight) after every attempt ended (4 tries over"), msg)
		require.Equal(t, 1, ev.Categories["stuck"], id)
	}
	inFlight := newHistory().span(0, 400, "original", verdict.OpOK, 201, committed, nil).
		span(5, 110, "repeat", verdict.OpFail, 409, "busy", map[string]string{"Retry-After": "1"})
	for _, id := range []string{"race/in-flight-409", "race/in-flight-not-fabricated", "race/in-flight-retry-after", "race/in-flight-other-payload"} {
		h := *inFlight
		h.ops = append([]verdict.Op(nil), inFlight.ops...)
		v, msg, _ := checker(t, id)(wedge(&h), refProfile(t))
		require.Equal(t, verdict.Fail, v, "%s: %s", id, msg)
		require.Contains(t, msg, "the key is stuck", id)
	}
}

// A settle step that never gets an answer cannot tell a hanging key from a machine too
// loaded to answer: UNKNOWN, never a pass and never a FAIL by itself.
func TestSettleThatNeverAnswersIsUnknown(t *testing.T) {
	t.Parallel()
	h := burstOf(3, 0).timeout(2000, settle).timeout(4000, settle).timeout(6000, settle)
	v, msg, ev := checker(t, "race/burst-50")(h.record(1), refProfile(t))
	require.Equal(t, verdict.Unknown, v)
	require.Equal(t, "the settle retry got no answer after every attempt ended (3 attempts timed out (info)): the key may hang, or the target is too slow to tell", msg)
	require.Empty(t, ev.Categories)

	v, _, _ = checker(t, "storage/5xx-not-pinned")(newHistory().at(0, "failing", verdict.OpInfo, 503, "x", nil).
		timeout(5, "retry").timeout(2000, settle).timeout(4000, settle).timeout(6000, settle).record(0), refProfile(t))
	require.Equal(t, verdict.Unknown, v)
}

func TestSettleThatDiffersFromTheCommittedResponseFails(t *testing.T) {
	t.Parallel()
	h := burstOf(3, 0).at(500, settle, verdict.OpOK, 201, `{"id":"re_9","amount":4900}`, nil)
	v, msg, ev := checker(t, "race/burst-50")(h.record(1), refProfile(t))
	require.Equal(t, verdict.Fail, v)
	require.Equal(t, `the settle retry got 201 (id "re_9", committed "re_1": not the committed execution's body), which differs from the committed 201`, msg)
	require.Equal(t, 1, ev.Categories["diverged"])

	past := burstOf(3, 0).at(1500, settle, verdict.OpOK, 201, `{"id":"re_9","amount":4900}`, nil)
	v, msg, _ = checker(t, "race/burst-50")(past.record(2), refProfile(t))
	require.Equal(t, verdict.Pass, v, "sent after the 1s retention: a new execution is allowed: %s", msg)
}

// A final retry that timed out proves nothing; the settle step asks again.
func TestTimedOutFinalRetryIsDecidedByTheSettleStep(t *testing.T) {
	t.Parallel()
	p := refProfile(t)
	h := newHistory().at(0, "original", verdict.OpOK, 201, committed, nil).timeout(10, "retry")
	v, msg, _ := checker(t, "race/duplicate-sequential")(h.record(1), p)
	require.Equal(t, verdict.Unknown, v, msg)

	h.at(2100, settle, verdict.OpOK, 201, committed, nil)
	v, msg, _ = checker(t, "race/duplicate-sequential")(h.record(1), p)
	require.Equal(t, verdict.Pass, v, msg)
	require.Equal(t, "one side effect; 1 attempt(s) ended without an answer, the settle retry got 201", msg)
}

// The wording of a pass says what happened: nothing was committed when the proxy
// stopped the request before the target, or when the original crashed after the key.
func TestPassWordingSaysWhatHappened(t *testing.T) {
	t.Parallel()
	p := refProfile(t)
	before := newHistory().at(0, "original", verdict.OpInfo, 503, "proxy", nil).at(10, "retry", verdict.OpOK, 201, committed, nil).record(1)
	before.Journal = []faultproxy.Record{{Seq: 1, Fault: faultproxy.FaultBeforeStatus}, {Seq: 2, ReachedUpstream: true, UpstreamCalls: 1, UpstreamStatus: 201}}
	v, msg, ev := checker(t, "before/503")(before, p)
	require.Equal(t, verdict.Pass, v)
	require.Equal(t, "one side effect; the request was stopped before the target (1 attempt(s)) and retry executed it once (201)", msg)
	require.NotContains(t, msg, "committed")
	require.Zero(t, ev.Categories["recovered"], "no response was lost: nothing to recover")

	crashed := newHistory().timeout(0, "original").at(800, "retry", verdict.OpOK, 201, committed, nil).
		at(810, settle, verdict.OpOK, 201, committed, nil).record(1)
	crashed.Journal = []faultproxy.Record{{Seq: 1, ReachedUpstream: true, UpstreamCalls: 1}, {Seq: 2, ReachedUpstream: true, UpstreamCalls: 1, UpstreamStatus: 201}}
	v, msg, _ = checker(t, "recovery/crash-after-key")(crashed, p)
	require.Equal(t, verdict.Pass, v, msg)
	require.NotContains(t, msg, "committed body")
}

// A stored business error replayed as a success is fabricated, whatever the policy.
func TestBusinessErrorReplayedAsSuccessIsFabricated(t *testing.T) {
	t.Parallel()
	p := refProfile(t)
	h := newHistory().at(0, "business", verdict.OpFail, 402, `{"title":"Refund limit exceeded"}`, nil).
		at(5, "repeat", verdict.OpOK, 200, "", nil).record(0)
	v, msg, ev := checker(t, "storage/business-4xx")(h, p)
	require.Equal(t, verdict.Fail, v)
	require.Equal(t, "a business 402 was answered 200 on the repeat (0 body bytes): an error turned into a success", msg)
	require.Equal(t, 1, ev.Categories["fabricated"])

	undeclared := *p
	undeclared.Expect.StoresBusinessErrors = nil
	v, _, _ = checker(t, "storage/business-4xx")(h, &undeclared)
	require.Equal(t, verdict.Fail, v, "a fabricated success is no policy")
}

func TestBusinessErrorReplayToldByTheUniqueField(t *testing.T) {
	t.Parallel()
	p := refProfile(t)
	p.Expect.UniqueField = "decline_id"
	p.Expect.ReplayHeader = ""
	same := newHistory().at(0, "business", verdict.OpFail, 402, `{"decline_id":"d1"}`, nil).
		at(5, "repeat", verdict.OpFail, 402, `{"decline_id":"d1"}`, nil).record(0)
	v, msg, _ := checker(t, "storage/business-4xx")(same, p)
	require.Equal(t, verdict.Pass, v, msg)
	require.Equal(t, "business 402 stored and replayed, as declared", msg)

	again := newHistory().at(0, "business", verdict.OpFail, 402, `{"decline_id":"d1"}`, nil).
		at(5, "repeat", verdict.OpFail, 402, `{"decline_id":"d2"}`, nil).record(0)
	v, msg, _ = checker(t, "storage/business-4xx")(again, p)
	require.Equal(t, verdict.Fail, v)
	require.Equal(t, "business 402 executed again, declared stored", msg)

	p.Expect.UniqueField = ""
	v, _, _ = checker(t, "storage/business-4xx")(same, p)
	require.Equal(t, verdict.Info, v, "without a marker or a unique field identical bodies cannot be told apart")
}

func TestMarkedBusinessReplayWithAnotherBodyDiverges(t *testing.T) {
	t.Parallel()
	// Settle tries that ended inside the window (the run was cut short) prove nothing:
	// the key may still have been legitimately held.
	short := burstOf(3, 0)
	for i := 0; i < 4; i++ {
		short.at(2000+i*100, settle, verdict.OpFail, 409, "busy", nil)
	}
	v, msg, _ := checker(t, "race/burst-50")(short.record(1), refProfile(t))
	require.Equal(t, verdict.Unknown, v, msg)
	require.Contains(t, msg, "into the 800ms settle window: the key may still have been legitimately held")

	h := newHistory().at(0, "business", verdict.OpFail, 402, `{"instance":"a"}`, nil).
		at(5, "repeat", verdict.OpFail, 402, `{"instance":"b"}`, map[string]string{"Idempotent-Replayed": "true"}).record(0)
	v, _, ev := checker(t, "storage/business-4xx")(h, refProfile(t))
	require.Equal(t, verdict.Fail, v)
	require.Equal(t, 1, ev.Categories["diverged"])
}

// A key that answers 409 for the whole retention after a 5xx is stuck.
func TestFiveHundredThenInFlightForeverIsStuck(t *testing.T) {
	t.Parallel()
	h := newHistory().at(0, "failing", verdict.OpInfo, 503, "failed", nil).at(5, "retry", verdict.OpFail, 409, "busy", nil)
	for i := 0; i < 4; i++ {
		h.at(100+i*300, settle, verdict.OpFail, 409, "busy", nil)
	}
	v, msg, ev := checker(t, "storage/5xx-not-pinned")(h.record(0), refProfile(t))
	require.Equal(t, verdict.Fail, v)
	require.True(t, strings.HasPrefix(msg, "the key is stuck: the settle retry got 409 (in_flight) after every attempt ended"), msg)
	require.Equal(t, 1, ev.Categories["stuck"])

	noSettle := newHistory().at(0, "failing", verdict.OpInfo, 503, "failed", nil).at(5, "retry", verdict.OpFail, 409, "busy", nil).record(0)
	v, msg, ev = checker(t, "storage/5xx-not-pinned")(noSettle, refProfile(t))
	require.Equal(t, verdict.Fail, v)
	require.Equal(t, "the key is stuck: the retry after the 503 got 409 (in_flight)", msg)
	require.Equal(t, 1, ev.Categories["stuck"])
}

// A 5xx the fail hook did not ask for (a key the target refuses with a 500, an outage)
// is no failed work: whether it is stored says nothing, and a retry that gets the same
// 500 again proves no replay.
func TestAFailureTheHookDidNotCauseIsUnknown(t *testing.T) {
	t.Parallel()
	p := refProfile(t) // fail_operation asks for 503
	rec := newHistory().at(0, "failing", verdict.OpInfo, 500, `invalid idempotency key`, nil).
		at(5, "retry", verdict.OpInfo, 500, `invalid idempotency key`, nil).record(0)
	for _, stores := range []bool{false, true} {
		p.Expect.Stores5xx = &stores
		v, msg, _ := checker(t, "storage/5xx-not-pinned")(rec, p)
		require.Equal(t, verdict.Unknown, v, msg)
		require.Contains(t, msg, "fail_operation did not act: the target answered 500 (server_error), and the hook asks for 503")
	}

	// A failure inside a 200 (an MCP tool's JSON-RPC error, classed server_error by the
	// profile's rules) has no HTTP status to compare with the hook's: judged as before.
	inside := newHistory().at(0, "failing", verdict.OpFail, 200, `{"error":{"code":-32603}}`, nil).
		at(5, "retry", verdict.OpOK, 201, committed, nil).record(1)
	inside.History[1].Class = outcome.ServerError
	no := false
	p.Expect.Stores5xx = &no
	v, msg, _ := checker(t, "storage/5xx-not-pinned")(inside, p)
	require.Equal(t, verdict.Pass, v, msg)
}

func TestStores5xxDeclared(t *testing.T) {
	t.Parallel()
	p := refProfile(t)
	yes := true
	p.Expect.Stores5xx = &yes
	replayed := newHistory().at(0, "failing", verdict.OpInfo, 503, `{"error":"x"}`, nil).
		at(5, "retry", verdict.OpInfo, 503, `{"error":"x"}`, nil).
		at(10, settle, verdict.OpInfo, 503, `{"error":"x"}`, nil).record(0)
	v, msg, _ := checker(t, "storage/5xx-not-pinned")(replayed, p)
	require.Equal(t, verdict.Pass, v, msg)
	require.Equal(t, "the 503 was stored and replayed to the retry, as expect.stores_5xx declares", msg)

	executed := newHistory().at(0, "failing", verdict.OpInfo, 503, `{"error":"x"}`, nil).
		at(5, "retry", verdict.OpOK, 201, committed, nil).record(1)
	v, msg, _ = checker(t, "storage/5xx-not-pinned")(executed, p)
	require.Equal(t, verdict.Fail, v)
	require.Equal(t, "the retry got 201; expect.stores_5xx declares the 503 stored and replayed", msg)

	v, _, _ = checker(t, "storage/5xx-not-pinned")(replayed, refProfile(t))
	require.Equal(t, verdict.Fail, v, "the reference declares stores_5xx: false")
}

func TestValidationStoragePolicy(t *testing.T) {
	t.Parallel()
	notStored := newHistory().at(0, "invalid", verdict.OpFail, 400, `{"title":"Invalid"}`, nil).
		at(5, "retry", verdict.OpOK, 201, committed, nil).
		at(10, settle, verdict.OpOK, 201, committed, nil).record(1)
	stored := newHistory().at(0, "invalid", verdict.OpFail, 400, `{"title":"Invalid"}`, nil).
		at(5, "retry", verdict.OpFail, 400, `{"title":"Invalid"}`, nil).record(0)

	p := refProfile(t) // stores_validation_errors: false
	v, msg, _ := checker(t, "storage/validation-not-stored")(notStored, p)
	require.Equal(t, verdict.Pass, v, msg)
	require.Equal(t, "validation 400 not stored: the corrected request executed (201), one side effect, as declared", msg)
	v, msg, _ = checker(t, "storage/validation-not-stored")(stored, p)
	require.Equal(t, verdict.Fail, v)
	require.Equal(t, "validation 400 stored: the corrected request got the stored 400 and did not execute; declared not stored", msg)

	silent := *p
	silent.Expect.StoresValidationErrors = nil
	v, msg, _ = checker(t, "storage/validation-not-stored")(stored, &silent)
	require.Equal(t, verdict.Info, v, "the draft is silent: the observed policy is reported")
	require.Equal(t, "validation 400 stored: the corrected request got the stored 400 and did not execute", msg)

	v, _, ev := checker(t, "storage/validation-not-stored")(newHistory().at(0, "invalid", verdict.OpFail, 400, "x", nil).
		at(5, "retry", verdict.OpOK, 201, committed, nil).record(2), &silent)
	require.Equal(t, verdict.Fail, v, "two effects are a duplicate whatever the policy")
	require.Equal(t, 1, ev.Categories["duplicated"])
}

// in_flight: wait, the block-and-replay school: the repeat waits and gets the committed
// response.
func TestInFlightWaitSchool(t *testing.T) {
	t.Parallel()
	p := refProfile(t)
	p.Expect.InFlight, p.Expect.InFlightWait = 0, true
	journal := []faultproxy.Record{{Seq: 2, Fault: faultproxy.FaultBeforeDelay, ReachedUpstream: true, UpstreamMillis: 296}}

	waited := newHistory().span(0, 400, "original", verdict.OpOK, 201, committed, nil).
		span(5, 401, "repeat", verdict.OpOK, 201, committed, nil).
		at(500, settle, verdict.OpOK, 201, committed, nil).record(1)
	waited.Journal = journal
	v, msg, _ := checker(t, "race/in-flight-409")(classedBy(waited, p), p)
	require.Equal(t, verdict.Pass, v, msg)
	require.Equal(t, "the repeat during the original waited and got the committed 201 (27 identical body bytes), as in_flight: wait declares", msg)

	refused := newHistory().span(0, 400, "original", verdict.OpOK, 201, committed, nil).
		span(5, 110, "repeat", verdict.OpFail, 409, "busy", nil).record(1)
	refused.Journal = journal
	v, msg, _ = checker(t, "race/in-flight-409")(classedBy(refused, p), p)
	require.Equal(t, verdict.Fail, v)
	require.Equal(t, "the repeat during the original got 409 (client_error); the profile declares in_flight: wait (wait, then the committed response)", msg)

	other := newHistory().span(0, 400, "original", verdict.OpOK, 201, committed, nil).
		span(5, 401, "repeat", verdict.OpOK, 200, `{"status":"processing"}`, nil).record(1)
	other.Journal = journal
	v, _, ev := checker(t, "race/in-flight-409")(classedBy(other, p), p)
	require.Equal(t, verdict.Fail, v, "a made-up answer is never a wait")
	require.Equal(t, 1, ev.Categories["diverged"])

	// Answered after the declared retention (1 s): the repeat may have reached the target
	// only then and executed anew, with a body of its own. Not a divergence.
	late := newHistory().span(0, 400, "original", verdict.OpOK, 201, committed, nil).
		span(5, 1500, "repeat", verdict.OpOK, 201, `{"id":"re_anew"}`, nil).record(2)
	late.Journal = journal
	v, msg, _ = checker(t, "race/in-flight-409")(classedBy(late, p), p)
	require.Equal(t, verdict.Unknown, v, msg)
	require.Contains(t, msg, "after the declared 1s retention, where a new execution is allowed")

	twice := newHistory().span(0, 400, "original", verdict.OpOK, 201, committed, nil).
		span(5, 401, "repeat", verdict.OpOK, 201, committed, nil).record(2)
	twice.Journal = journal
	v, _, ev = checker(t, "race/in-flight-409")(classedBy(twice, p), p)
	require.Equal(t, verdict.Fail, v, "waiting and executing again is a duplicate")
	require.Equal(t, 1, ev.Categories["duplicated"])

	h := newHistory()
	for i := 0; i < 5; i++ {
		h.span(i, 10+i, "burst", verdict.OpOK, 201, committed, nil)
	}
	v, msg, _ = checker(t, "race/burst-50")(classedBy(h.record(1), p), p)
	require.Equal(t, verdict.Pass, v, msg)
	require.Equal(t, "one side effect from 5 attempts: 5 identical successes; up to 5 in flight at once", msg)

	require.Equal(t, "an in-flight refusal; the profile declares in_flight: wait (a repeat waits and is never refused, so there is no refusal to carry Retry-After)",
		p.Missing(profile.CapInFlightRefusal))
	require.Empty(t, refProfile(t).Missing(profile.CapInFlightRefusal))
}

func TestPrincipalsNotDeclaredSaysWhatIsNeeded(t *testing.T) {
	t.Parallel()
	p := refProfile(t)
	p.Principals = p.Principals[:1]
	require.Equal(t, "two principals; the profile declares 1", p.Missing(profile.CapPrincipals))
}

// A replay whose class differs from the committed success diverged, whether a refusal or
// a server error.
func TestReplayOfAnotherClassDiverges(t *testing.T) {
	t.Parallel()
	p := refProfile(t)
	for _, status := range []int{400, 500} {
		typ := verdict.OpFail
		if status >= 500 {
			typ = verdict.OpInfo
		}
		after := newHistory().at(0, "original", verdict.OpInfo, 503, "", nil).at(10, "retry", typ, status, "nope", nil).record(1)
		v, _, ev := checker(t, "replay/after-503")(after, p)
		require.Equal(t, verdict.Fail, v, status)
		require.Equal(t, 1, ev.Categories["diverged"], status)

		seq := newHistory().at(0, "original", verdict.OpOK, 201, committed, nil).at(10, "repeat", typ, status, "nope", nil).record(1)
		v, msg, ev := checker(t, "replay/sequential")(seq, p)
		require.Equal(t, verdict.Fail, v, status)
		require.Equal(t, 1, ev.Categories["diverged"], status)
		require.Contains(t, msg, "the replay of a 201 got "+itoa(status))
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// On a loaded machine the original's answer reaches the client late: a repeat answered
// with the replay after the original finished at the target is no overlap, and the
// 409 school is not failed for it.
func TestInFlightOverlapIsJudgedAtTheTarget(t *testing.T) {
	t.Parallel()
	p := refProfile(t)
	h := newHistory().span(0, 600, "original", verdict.OpOK, 201, committed, nil).
		span(5, 350, "repeat", verdict.OpOK, 201, committed, nil)
	late := h.record(1)
	// The reference profile holds the original 300ms: it committed no earlier than 300ms;
	// the repeat was sent upstream no later than 349ms.
	late.Journal = []faultproxy.Record{
		{Seq: 1, Time: h.t0, ReachedUpstream: true, UpstreamMillis: 310},
		{Seq: 2, Time: h.t0, Fault: faultproxy.FaultBeforeDelay, ReachedUpstream: true, UpstreamMillis: 1},
	}
	v, msg, _ := checker(t, "race/in-flight-409")(late, p)
	require.Equal(t, verdict.Unknown, v, msg)
	require.Contains(t, msg, "no overlap")

	// The same hold declared as hold: with a templated value is the same hold: the
	// judgement must not fall back to the client's answer times (where the repeat's
	// replay would look like an answer during the original).
	templated := *p.Slow
	templated.Value, templated.Hold = "{{.HoldMs}}ms", profile.Duration(300*time.Millisecond)
	p.Slow = &templated
	v, msg, _ = checker(t, "race/in-flight-409")(late, p)
	require.Equal(t, verdict.Unknown, v, msg)
	require.Contains(t, msg, "no overlap")
	p = refProfile(t)

	waited := h.record(1)
	waited.Journal = []faultproxy.Record{
		{Seq: 1, Time: h.t0, ReachedUpstream: true, UpstreamMillis: 310},
		{Seq: 2, Time: h.t0, Fault: faultproxy.FaultBeforeDelay, ReachedUpstream: true, UpstreamMillis: 270},
	}
	v, msg, _ = checker(t, "race/in-flight-409")(waited, p)
	require.Equal(t, verdict.Fail, v, "the target held the repeat for the original: it waited, and the profile declares 409: %s", msg)
}

// A server polled for its answers (SEP-1699) delivers the repeat's answer on a resumed
// stream, long after the original committed; the proxy forwarded the repeat during the
// original all the same, and its record says when. A success there (not the committed
// response) is the definite violation it is. Without that field the answer time bounds
// the arrival, too late to prove anything.
func TestInFlightRepeatAnsweredLateOnAResumedStreamOverlapped(t *testing.T) {
	t.Parallel()
	p := refProfile(t)
	h := newHistory().span(0, 600, "original", verdict.OpOK, 201, committed, nil).
		span(5, 900, "repeat", verdict.OpOK, 201, `{"id":"re_other","amount":4900}`, nil)
	rec := h.record(1)
	rec.Journal = []faultproxy.Record{
		{Seq: 1, Time: h.t0, ReachedUpstream: true, UpstreamMillis: 310, ForwardedAfterMillis: 0.2},
		{Seq: 2, Time: h.t0.Add(5 * time.Millisecond), Fault: faultproxy.FaultBeforeDelay, ReachedUpstream: true, UpstreamMillis: 2, ForwardedAfterMillis: 80},
	}
	v, msg, _ := checker(t, "race/in-flight-409")(rec, p)
	require.Equal(t, verdict.Fail, v, msg)
	require.Contains(t, msg, "the repeat during the original got 201")

	rec.Journal[1].ForwardedAfterMillis = 0 // a proxy that does not record it
	v, msg, _ = checker(t, "race/in-flight-409")(rec, p)
	require.Equal(t, verdict.Unknown, v, msg)
	require.Contains(t, msg, "no overlap")

	rec.Journal[1].ForwardedAfterMillis = 400 // forwarded after the original could commit
	v, msg, _ = checker(t, "race/in-flight-409")(rec, p)
	require.Equal(t, verdict.Unknown, v, msg)
}

// On a loaded machine the repeat can reach the target first and execute; the original,
// arriving later, gets the replay without its hold. Nothing to judge, not a FAIL.
func TestRepeatThatReachedTheTargetFirstIsUnknown(t *testing.T) {
	t.Parallel()
	p := refProfile(t)
	h := newHistory().span(0, 600, "original", verdict.OpOK, 201, committed, nil).
		span(5, 350, "repeat", verdict.OpOK, 201, committed, nil)
	rec := h.record(1)
	rec.Journal = []faultproxy.Record{
		{Seq: 2, Time: h.t0.Add(200 * time.Millisecond), ReachedUpstream: true, UpstreamMillis: 4},
		{Seq: 1, Time: h.t0, Fault: faultproxy.FaultBeforeDelay, ReachedUpstream: true, UpstreamMillis: 2},
	}
	for _, id := range []string{"race/in-flight-409", "race/in-flight-not-fabricated", "race/in-flight-other-payload"} {
		v, msg, _ := checker(t, id)(rec, p)
		require.Equal(t, verdict.Unknown, v, "%s: %s", id, msg)
		require.Contains(t, msg, "reached the target before the original", id)
	}
}

// A target that does not apply the slow hook answers the original at once, before the
// repeat is even sent: no repeat met a running original, whatever the answers say. The
// journal shows it (the original left the proxy first and was answered well inside the
// hold), and the verdict is UNKNOWN naming the hook, not "the repeat went first" nor a
// PASS timed from a hold that never was.
func TestAnOriginalTheHookDidNotHoldIsUnknown(t *testing.T) {
	t.Parallel()
	p := refProfile(t) // slow_operation holds the work 300 ms
	journal := func(h *history) []faultproxy.Record {
		return []faultproxy.Record{
			{Seq: 1, Time: h.t0.Add(1 * time.Millisecond), ReachedUpstream: true, UpstreamMillis: 0.4},
			{Seq: 2, Time: h.t0.Add(2 * time.Millisecond), ForwardedAfterMillis: 75, Fault: faultproxy.FaultBeforeDelay, ReachedUpstream: true, UpstreamMillis: 0.3},
		}
	}
	h := newHistory().span(0, 2, "original", verdict.OpOK, 201, committed, nil).
		span(1, 78, "repeat", verdict.OpOK, 201, committed, nil).
		at(400, settle, verdict.OpOK, 201, committed, nil)
	rec := h.record(1)
	rec.Journal = journal(h)
	for _, id := range []string{"race/in-flight-409", "race/in-flight-not-fabricated", "race/in-flight-other-payload"} {
		v, msg, _ := checker(t, id)(rec, p)
		require.Equal(t, verdict.Unknown, v, "%s: %s", id, msg)
		require.Contains(t, msg, "the slow hook did not hold the original: the target answered it in 400µs, and slow_operation declares 300ms", id)
		require.NotContains(t, msg, "reached the target before the original", id)
	}

	// Held and then failed, as race/in-flight-original-fails asks: a target that applies
	// neither hook's hold answers its stored failure to the repeat. That proves nothing
	// about what a repeat is told while the original runs.
	h = newHistory().span(0, 2, "original", verdict.OpFail, 503, `{"error":"failed"}`, nil).
		span(1, 78, "repeat", verdict.OpFail, 503, `{"error":"failed"}`, nil)
	rec = h.record(0)
	rec.Journal = journal(h)
	v, msg, _ := checker(t, "race/in-flight-original-fails")(rec, p)
	require.Equal(t, verdict.Unknown, v, msg)
	require.Contains(t, msg, "the slow hook did not hold the original")

	// The same answers with the hold in the journal: judged.
	rec.Journal[0].UpstreamMillis = 301
	v, msg, _ = checker(t, "race/in-flight-original-fails")(rec, p)
	require.Equal(t, verdict.Pass, v, msg)
}

// A target that holds nothing in flight while work that fails runs (the reference on
// its one-transaction path: the key commits with the work) lets the repeat execute; the
// original, whose work fails, is then answered the repeat's committed result. The replay
// marker on the original's answer, and none on the repeat's, proves which executed.
func TestOriginalFailsAnsweredTheRepeatsResultAsAReplay(t *testing.T) {
	t.Parallel()
	p := refProfile(t)
	marked := map[string]string{p.Expect.ReplayHeader: "true"}
	h := newHistory().span(0, 310, "original", verdict.OpOK, 201, committed, marked).
		span(1, 90, "repeat", verdict.OpOK, 201, committed, nil)
	rec := h.record(1)
	rec.Journal = []faultproxy.Record{
		{Seq: 1, Time: h.t0.Add(1 * time.Millisecond), ReachedUpstream: true, UpstreamMillis: 305},
		{Seq: 2, Time: h.t0.Add(2 * time.Millisecond), ForwardedAfterMillis: 75, Fault: faultproxy.FaultBeforeDelay, ReachedUpstream: true, UpstreamMillis: 3},
	}
	v, msg, _ := checker(t, "race/in-flight-original-fails")(rec, p)
	require.Equal(t, verdict.Pass, v, msg)
	require.Contains(t, msg, "the repeat executed on its own while the original ran")

	// Without a marker the two stories look alike: the repeat promised the original's
	// result in advance would give the same answers and the same one side effect.
	unmarked := refProfile(t)
	unmarked.Expect.ReplayHeader = ""
	v, msg, _ = checker(t, "race/in-flight-original-fails")(rec, unmarked)
	require.Equal(t, verdict.Unknown, v, msg)
	require.Contains(t, msg, "nothing here tells them apart")
}

// An original whose upstream time is no replay's is judged, whatever made it a little
// shorter than the hold or hid it: a timer that fired early (Node), a gateway that gave
// up at its read timeout (504), a stream the server closed to be polled and answered on a
// later GET (the proxy saw that exchange end without the answer). The repeat, 75 ms in,
// was refused: that is the in-flight refusal.
func TestAnOriginalShortOfItsHoldButNoReplayIsJudged(t *testing.T) {
	t.Parallel()
	p := refProfile(t) // slow_operation holds the work 300 ms
	cases := []struct {
		name     string
		status   int
		upstream float64
		class    string
	}{
		{"a timer that fired early", 201, 299.6, ""},
		{"a gateway's 504", 504, 250, ""},
		{"a polled stream", 201, 3, faultproxy.OutcomeInfo},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHistory().span(0, 310, "original", verdict.OpOK, c.status, committed, nil).
				span(1, 90, "repeat", verdict.OpFail, 409, "busy", nil).
				at(400, settle, verdict.OpOK, 201, committed, nil)
			rec := h.record(1)
			rec.Journal = []faultproxy.Record{
				{Seq: 1, Time: h.t0.Add(2 * time.Millisecond), ReachedUpstream: true, UpstreamMillis: c.upstream, Class: c.class},
				{Seq: 2, Time: h.t0.Add(77 * time.Millisecond), Fault: faultproxy.FaultBeforeDelay, ReachedUpstream: true, UpstreamMillis: 2},
			}
			v, msg, _ := checker(t, "race/in-flight-409")(rec, p)
			require.NotContains(t, msg, "reached the target before the original")
			require.Equal(t, verdict.Pass, v, msg)
		})
	}

	// A gateway's 503 at once (its rate limit, a rule) never let the original reach the
	// target: the repeat became the first execution, and its 201 is no answer during it.
	h := newHistory().span(0, 3, "original", verdict.OpInfo, 503, "<html>503</html>", nil).
		span(1, 90, "repeat", verdict.OpOK, 201, committed, nil)
	rec := h.record(1)
	rec.Journal = []faultproxy.Record{
		{Seq: 1, Time: h.t0.Add(1 * time.Millisecond), ReachedUpstream: true, UpstreamMillis: 0.4},
		{Seq: 2, Time: h.t0.Add(2 * time.Millisecond), Fault: faultproxy.FaultBeforeDelay, ReachedUpstream: true, UpstreamMillis: 12},
	}
	for _, id := range []string{"race/in-flight-409", "race/in-flight-other-payload"} {
		v, msg, _ := checker(t, id)(rec, p)
		require.Equal(t, verdict.Unknown, v, "%s: %s", id, msg)
	}
}

func TestRepeatThatExecutedWhileTheOriginalGotTheReplayIsUnknown(t *testing.T) {
	t.Parallel()
	p := refProfile(t)
	marked := map[string]string{"Idempotent-Replayed": "true"}
	h := newHistory().span(0, 660, "original", verdict.OpOK, 201, committed, marked).
		span(1, 658, "repeat", verdict.OpOK, 201, committed, nil)
	rec := h.record(1)
	rec.Journal = []faultproxy.Record{
		{Seq: 1, Time: h.t0.Add(21 * time.Millisecond), Fault: faultproxy.FaultBeforeDelay, ReachedUpstream: true, UpstreamMillis: 407},
		{Seq: 2, Time: h.t0.Add(21 * time.Millisecond), ReachedUpstream: true, UpstreamMillis: 497},
	}
	v, msg, _ := checker(t, "race/in-flight-409")(rec, p)
	require.Equal(t, verdict.Unknown, v, msg)
	require.Contains(t, msg, "reached the target before the original")
}

func TestNotFabricatedWhenTheOriginalWasNotSeen(t *testing.T) {
	t.Parallel()
	p := refProfile(t)
	h := newHistory().timeout(0, "original").span(5, 100, "repeat", verdict.OpOK, 201, committed, nil)
	v, msg, _ := checker(t, "race/in-flight-not-fabricated")(h.record(1), p)
	require.Equal(t, verdict.Unknown, v, msg)

	v, _, ev := checker(t, "race/in-flight-not-fabricated")(h.record(0), p)
	require.Equal(t, verdict.Fail, v, "a success with nothing executed is made up whenever the original ended")
	require.Equal(t, 1, ev.Categories["fabricated"])

	h.at(3000, settle, verdict.OpOK, 201, committed, nil)
	v, msg, _ = checker(t, "race/in-flight-not-fabricated")(h.record(1), p)
	require.Equal(t, verdict.Pass, v, msg)
}

// Over JSON-RPC a refusal comes inside a 200: the message names the refusal by what it
// meant, never "validation 200", whose status says nothing of it.
func TestAStoragePolicyNamesARefusalInsideA200ByItsMeaning(t *testing.T) {
	t.Parallel()
	inside200 := func(class outcome.Class) func(verdict.Record) verdict.Record {
		return func(rec verdict.Record) verdict.Record {
			rec.History[1].Status, rec.History[1].Class = 200, class
			return rec
		}
	}
	p := refProfile(t)
	p.Expect.StoresValidationErrors = nil
	rec := inside200(outcome.ValidationError)(newHistory().at(0, "invalid", verdict.OpFail, 400, `{"error":{"code":-32602}}`, nil).
		at(5, "retry", verdict.OpOK, 201, committed, nil).
		at(10, settle, verdict.OpOK, 201, committed, nil).record(1))
	v, msg, _ := checker(t, "storage/validation-not-stored")(rec, p)
	require.Equal(t, verdict.Info, v, msg)
	require.Equal(t, "validation error (in a 200 answer) not stored: the corrected request executed (201), one side effect", msg)
}
