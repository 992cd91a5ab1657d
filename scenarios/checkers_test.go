package scenarios_test

import (
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

// history builds hand-written histories: each attempt is an invoke and its completion.
type history struct {
	t0  time.Time
	ops []verdict.Op
}

func newHistory() *history { return &history{t0: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} }

// at adds one attempt of step invoked at ms and answered at ms+1.
func (h *history) at(ms int, step string, typ verdict.OpType, status int, body string, headers map[string]string) *history {
	return h.span(ms, ms+1, step, typ, status, body, headers)
}

func (h *history) span(from, to int, step string, typ verdict.OpType, status int, body string, headers map[string]string) *history {
	done := verdict.Op{Index: len(h.ops) + 1, Type: typ, Step: step, Status: status, Body: []byte(body), Headers: headers, Time: h.t0.Add(time.Duration(to) * time.Millisecond)}
	// Classed as the runner classes the reference profile's answers; an answer without a
	// status is one the client never saw.
	done.Class = referenceStatuses.Classify(outcome.Answer{Status: status, Body: done.Body})
	if status == 0 {
		done.Class, done.Error = outcome.Info, "timed-out"
	}
	h.ops = append(h.ops,
		verdict.Op{Index: len(h.ops), Type: verdict.OpInvoke, Step: step, Time: h.t0.Add(time.Duration(from) * time.Millisecond)},
		done)
	return h
}

// referenceStatuses classes answers by the reference profile's declared statuses.
var referenceStatuses = outcome.Statuses{InFlight: 409, Mismatch: 422, MissingKey: 400, Business: 402, Validation: 400}

// timeout adds one attempt of step whose answer the client never saw.
func (h *history) timeout(ms int, step string) *history {
	return h.span(ms, ms+1, step, verdict.OpInfo, 0, "", nil)
}

func (h *history) record(ledger int) verdict.Record {
	return verdict.Record{History: h.ops, Ledger: map[string]int{"operation": ledger}}
}

// refProfile is the built-in reference profile with its retention pinned to 1s: the
// hand-written histories below place their attempts around that window, so they must
// not follow later changes to the shipped profile.
func refProfile(t *testing.T) *profile.Profile {
	t.Helper()
	p, err := profile.Builtin("reference")
	require.NoError(t, err)
	p.BaseURL = "http://127.0.0.1:8080" // whatever IDEMPROOF_BASE_URL says: the histories are hand-written
	p.Retention = profile.Duration(time.Second)
	return p
}

func checker(t *testing.T, id string) scenarios.Checker {
	t.Helper()
	s, ok := scenarios.Lookup(id)
	require.True(t, ok, id)
	return s.Check
}

const committed = `{"id":"re_1","amount":4900}`

func TestAfterUpstreamReplayPasses(t *testing.T) {
	t.Parallel()
	rec := newHistory().
		at(0, "original", verdict.OpInfo, 503, "upstream lost", nil).
		at(10, "retry", verdict.OpOK, 201, committed, nil).
		record(1)
	rec.Journal = []faultproxy.Record{{Seq: 1, Attempt: 1, ReachedUpstream: true, UpstreamCalls: 1, UpstreamStatus: 201, UpstreamBody: []byte(committed)}}
	v, msg, ev := checker(t, "replay/after-503")(rec, refProfile(t))
	require.Equal(t, verdict.Pass, v, msg)
	require.Equal(t, 1, ev.Categories["recovered"])
}

func TestAfterUpstreamDuplicateFails(t *testing.T) {
	t.Parallel()
	rec := newHistory().
		at(0, "original", verdict.OpInfo, 503, "", nil).
		at(10, "retry", verdict.OpOK, 201, `{"id":"re_2"}`, nil).
		record(2)
	v, msg, ev := checker(t, "replay/after-503")(rec, refProfile(t))
	require.Equal(t, verdict.Fail, v)
	require.Equal(t, "2 side effects for one key, want 1", msg)
	require.Equal(t, 1, ev.Categories["duplicated"])
}

func TestReplayThatDiffersFromTheCommittedResponseFails(t *testing.T) {
	t.Parallel()
	rec := newHistory().
		at(0, "original", verdict.OpInfo, 0, "", nil).
		at(10, "retry", verdict.OpOK, 201, `{"id":"re_regenerated","amount":4900}`, nil).
		record(1)
	rec.Journal = []faultproxy.Record{{Seq: 1, ReachedUpstream: true, UpstreamStatus: 201, UpstreamBody: []byte(committed)}}
	v, _, ev := checker(t, "replay/after-reset")(rec, refProfile(t))
	require.Equal(t, verdict.Fail, v)
	require.Equal(t, 1, ev.Categories["diverged"])
	require.Len(t, ev.Examples, 2)
}

func TestKeyStuckAt409Fails(t *testing.T) {
	t.Parallel()
	rec := newHistory().
		at(0, "original", verdict.OpInfo, 0, "", nil).
		at(1300, "retry", verdict.OpFail, 409, `{"title":"in use"}`, nil).
		record(0)
	v, msg, ev := checker(t, "recovery/crash-after-key")(rec, refProfile(t))
	require.Equal(t, verdict.Fail, v)
	require.Contains(t, msg, "stuck")
	require.Equal(t, 1, ev.Categories["stuck"])
}

func TestSuccessWithoutEffectIsFabricated(t *testing.T) {
	t.Parallel()
	rec := newHistory().at(0, "original", verdict.OpFail, 503, "", nil).at(5, "retry", verdict.OpOK, 201, committed, nil).record(0)
	v, _, ev := checker(t, "before/503")(rec, refProfile(t))
	require.Equal(t, verdict.Fail, v)
	require.Equal(t, 1, ev.Categories["fabricated"], "nothing reached the upstream per the (empty) journal")

	rec.Journal = []faultproxy.Record{{Seq: 2, ReachedUpstream: true, UpstreamCalls: 1, UpstreamStatus: 201}}
	v, _, ev = checker(t, "before/503")(rec, refProfile(t))
	require.Equal(t, verdict.Fail, v)
	require.Equal(t, 1, ev.Categories["lost"], "it reached the upstream, the ledger lost it")
}

func TestLedgerProbeFailureIsUnknown(t *testing.T) {
	t.Parallel()
	rec := newHistory().at(0, "original", verdict.OpOK, 201, committed, nil).at(5, "repeat", verdict.OpOK, 201, committed, nil).record(0)
	rec.Ledger, rec.LedgerErr = map[string]int{}, "read ledger: connection refused"
	for _, id := range []string{"replay/sequential", "replay/after-503", "race/burst-50", "fingerprint/mismatch", "key/missing", "expiry/after-window"} {
		v, msg, _ := checker(t, id)(rec, refProfile(t))
		require.Equal(t, verdict.Unknown, v, id)
		require.Contains(t, msg, "connection refused", id)
	}
}

// Window-aware: a second effect from an attempt started after the retention is allowed;
// the same second effect inside the window is a duplicate.
func TestDuplicateCountIsWindowAware(t *testing.T) {
	t.Parallel()
	p := refProfile(t) // retention 1s
	after := newHistory().at(0, "original", verdict.OpOK, 201, committed, nil).at(1600, "repeat", verdict.OpOK, 201, `{"id":"re_2"}`, nil).record(2)
	v, msg, _ := checker(t, "expiry/after-window")(after, p)
	require.Equal(t, verdict.Pass, v, msg)

	inside := newHistory().at(0, "original", verdict.OpOK, 201, committed, nil).at(750, "repeat", verdict.OpOK, 201, `{"id":"re_2"}`, nil).record(2)
	v, msg, ev := checker(t, "expiry/inside-window")(inside, p)
	require.Equal(t, verdict.Fail, v)
	require.Equal(t, "the key was not honoured for the whole declared retention: the repeat late in the window executed again (the repeat was sent 750ms and answered 751ms after the original's send, of a declared 1s retention): 2 side effects for one key, want 1; a key honoured by an immediate repeat (replay/sequential) but not here was kept for less than the declared 1s (if replay/sequential fails too, the key was never honoured)", msg)
	require.Equal(t, 1, ev.Categories["duplicated"])

	never := newHistory().at(0, "original", verdict.OpOK, 201, committed, nil).at(1600, "repeat", verdict.OpOK, 201, committed, nil).record(1)
	v, msg, _ = checker(t, "expiry/after-window")(never, p)
	require.Equal(t, verdict.Fail, v)
	require.Contains(t, msg, "still replayed after the declared 1s retention")
}

func TestBurstOneWinner(t *testing.T) {
	t.Parallel()
	h := newHistory()
	h.at(0, "burst", verdict.OpOK, 201, committed, nil)
	for i := 0; i < 3; i++ {
		h.at(1, "burst", verdict.OpFail, 409, "busy", nil)
	}
	h.at(2, "burst", verdict.OpOK, 201, committed, nil)
	v, msg, _ := checker(t, "race/burst-50")(h.record(1), refProfile(t))
	require.Equal(t, verdict.Pass, v)
	require.Equal(t, "one side effect from 5 attempts: 2 identical successes, 3 refused with 409; up to 3 in flight at once", msg)

	h.at(3, "burst", verdict.OpOK, 201, `{"id":"re_other"}`, nil)
	v, _, ev := checker(t, "race/burst-50")(h.record(1), refProfile(t))
	require.Equal(t, verdict.Fail, v)
	require.Equal(t, 1, ev.Categories["diverged"])
}

// race/in-flight-original-fails: the original is held, then fails. A success for the
// repeat with nothing executed was promised before any outcome existed; a success with
// its own effect, or a refusal, is honest; an original that did not fail proves nothing.
func TestInFlightOriginalFailsVerdicts(t *testing.T) {
	t.Parallel()
	p := refProfile(t)
	check := checker(t, "race/in-flight-original-fails")
	promised := newHistory().span(0, 400, "original", verdict.OpInfo, 503, "failed", nil).
		span(100, 110, "repeat", verdict.OpOK, 201, committed, nil)
	v, msg, ev := check(promised.record(0), p)
	require.Equal(t, verdict.Fail, v, msg)
	require.Equal(t, 1, ev.Categories["fabricated"])
	require.Contains(t, msg, "the client was told of an operation that never happened")
	v, msg, _ = check(promised.record(1), p)
	require.Equal(t, verdict.Pass, v, "the repeat ran on its own once the original failed: %s", msg)

	refused := newHistory().span(0, 400, "original", verdict.OpInfo, 503, "failed", nil).
		span(100, 110, "repeat", verdict.OpFail, 409, "busy", nil).record(0)
	v, msg, _ = check(refused, p)
	require.Equal(t, verdict.Pass, v, msg)
	// The PASS says when each thing happened, so a reader sees the repeat was answered
	// before the original failed (not, say, given the failure once it was stored).
	require.Contains(t, msg, "the repeat was sent at +100ms, the original failed at +400ms, the repeat was answered at +110ms (from the original's send; slow_operation holds 300ms)")

	succeeded := newHistory().span(0, 400, "original", verdict.OpOK, 201, committed, nil).
		span(100, 110, "repeat", verdict.OpFail, 409, "busy", nil).record(1)
	v, msg, _ = check(succeeded, p)
	require.Equal(t, verdict.Unknown, v, msg)
	require.Contains(t, msg, "did not make it fail")

	late := newHistory().span(0, 10, "original", verdict.OpInfo, 503, "failed", nil).
		span(100, 110, "repeat", verdict.OpFail, 409, "busy", nil).record(0)
	v, msg, _ = check(late, p)
	require.Equal(t, verdict.Unknown, v, msg)
	require.Contains(t, msg, "no overlap")
}

// An API that refuses a repeat in flight with a 503 and a body its in_flight rule
// matches, in a rule that names no status: the 503 is a server error, and the FAIL says
// how to declare it.
func TestA5xxRefusalNeedsItsStatusInTheRule(t *testing.T) {
	t.Parallel()
	p, err := profile.Parse("x.yaml", []byte(fakeProfileDoc("http://127.0.0.1:9")+"outcomes:\n  in_flight: {text: in progress}\n"))
	require.NoError(t, err)
	rec := newHistory().span(0, 400, "original", verdict.OpOK, 201, committed, nil).
		span(5, 110, "repeat", verdict.OpInfo, 503, `{"error":"request in progress"}`, nil).record(1)
	for i := range rec.History {
		rec.History[i].Class = p.Classifier().Classify(outcome.Answer{Status: rec.History[i].Status, Body: rec.History[i].Body})
	}
	v, msg, _ := checker(t, "race/in-flight-409")(rec, p)
	require.Equal(t, verdict.Fail, v, msg)
	require.Contains(t, msg, "if the 503 is this API's in_flight answer, add status: 503 to the rule")
}

func TestInFlightVerdicts(t *testing.T) {
	t.Parallel()
	p := refProfile(t)
	refused := newHistory().span(0, 400, "original", verdict.OpOK, 201, committed, nil).
		span(5, 110, "repeat", verdict.OpFail, 409, "busy", map[string]string{"Retry-After": "1"}).record(1)
	for _, id := range []string{"race/in-flight-409", "race/in-flight-not-fabricated", "race/in-flight-retry-after"} {
		v, msg, _ := checker(t, id)(refused, p)
		require.Equal(t, verdict.Pass, v, "%s: %s", id, msg)
	}

	fabricated := newHistory().span(0, 400, "original", verdict.OpOK, 201, committed, nil).
		span(5, 110, "repeat", verdict.OpOK, 200, `{"status":"processing"}`, nil).record(1)
	v, _, ev := checker(t, "race/in-flight-not-fabricated")(fabricated, p)
	require.Equal(t, verdict.Fail, v)
	require.Equal(t, 1, ev.Categories["fabricated"])
	v, _, _ = checker(t, "race/in-flight-409")(fabricated, p)
	require.Equal(t, verdict.Fail, v)
	v, _, _ = checker(t, "race/in-flight-retry-after")(fabricated, p)
	require.Equal(t, verdict.Unknown, v, "no 409 to inspect")

	noOverlap := newHistory().span(0, 10, "original", verdict.OpOK, 201, committed, nil).
		span(20, 30, "repeat", verdict.OpOK, 201, committed, nil).record(1)
	v, msg, _ := checker(t, "race/in-flight-409")(noOverlap, p)
	require.Equal(t, verdict.Unknown, v)
	require.Contains(t, msg, "no overlap")
	// The repeat met a finished original: nothing could be fabricated, so its replay
	// proves nothing about the invariant.
	v, msg, _ = checker(t, "race/in-flight-not-fabricated")(noOverlap, p)
	require.Equal(t, verdict.Unknown, v, msg)
	require.Contains(t, msg, "no overlap")
	// Likewise another payload refused after the original finished says nothing about
	// one that arrives while it runs.
	lateOther := newHistory().span(0, 10, "original", verdict.OpOK, 201, committed, nil).
		span(20, 30, "repeat", verdict.OpFail, 422, "mismatch", nil).record(1)
	v, msg, _ = checker(t, "race/in-flight-other-payload")(lateOther, p)
	require.Equal(t, verdict.Unknown, v, msg)
	require.Contains(t, msg, "no overlap")
	duringOther := newHistory().span(0, 400, "original", verdict.OpOK, 201, committed, nil).
		span(5, 110, "repeat", verdict.OpFail, 422, "mismatch", nil).record(1)
	v, msg, _ = checker(t, "race/in-flight-other-payload")(duringOther, p)
	require.Equal(t, verdict.Pass, v, msg)

	noRetryAfter := newHistory().span(0, 400, "original", verdict.OpOK, 201, committed, nil).
		span(5, 110, "repeat", verdict.OpFail, 409, "busy", nil).record(1)
	v, _, _ = checker(t, "race/in-flight-retry-after")(noRetryAfter, p)
	require.Equal(t, verdict.NonStrict, v)

	// Both refused: whichever took the key first should have run, so the target refused
	// the request it was running (a refusal that clears the key's record). Not "the repeat
	// went first": that order leaves the repeat running, not refused.
	bothInFlight := newHistory().span(0, 430, "original", verdict.OpFail, 409, "busy", nil).
		span(100, 110, "repeat", verdict.OpFail, 409, "busy", nil).record(1)
	v, msg, _ = checker(t, "race/in-flight-409")(bothInFlight, p)
	require.Equal(t, verdict.Fail, v, msg)
	require.Contains(t, msg, "both were refused; the target refused the request it was running")
	v, msg, _ = checker(t, "race/in-flight-not-fabricated")(bothInFlight, p)
	require.Equal(t, verdict.Pass, v, msg)
	bothMismatch := newHistory().span(0, 430, "original", verdict.OpFail, 409, "busy", nil).
		span(100, 110, "repeat", verdict.OpFail, 422, "mismatch", nil).record(1)
	v, msg, _ = checker(t, "race/in-flight-other-payload")(bothMismatch, p)
	require.Equal(t, verdict.Fail, v, msg)
	// The other payload went first and ran: the original is rightly a mismatch.
	otherFirst := newHistory().span(0, 30, "original", verdict.OpFail, 422, "mismatch", nil).
		span(5, 20, "repeat", verdict.OpOK, 201, committed, nil).record(1)
	v, msg, _ = checker(t, "race/in-flight-other-payload")(otherFirst, p)
	require.NotEqual(t, verdict.Fail, v, msg)
}

func TestMismatchVerdicts(t *testing.T) {
	t.Parallel()
	p := refProfile(t)
	ok := newHistory().at(0, "original", verdict.OpOK, 201, committed, nil).at(5, "altered", verdict.OpFail, 422, "mismatch", nil).record(1)
	v, _, _ := checker(t, "fingerprint/mismatch")(ok, p)
	require.Equal(t, verdict.Pass, v)

	replayed := newHistory().at(0, "original", verdict.OpOK, 201, committed, nil).at(5, "altered", verdict.OpOK, 201, committed, nil).record(1)
	v, msg, _ := checker(t, "fingerprint/mismatch")(replayed, p)
	require.Equal(t, verdict.Fail, v)
	require.Contains(t, msg, "answered 201 with the original's response, want 422 (mismatch)")

	classOnly := *p
	classOnly.Expect.Mismatch = 0 // an MCP profile: the refusal is a class read from the body, no status
	_, msg, _ = checker(t, "fingerprint/mismatch")(replayed, &classOnly)
	require.Contains(t, msg, "answered 201 with the original's response, want mismatch", "no status declared: the class, never \"want 0\"")
	require.NotContains(t, msg, "want 0")

	stripe := *p
	stripe.Expect.Mismatch = 400
	v, _, _ = checker(t, "fingerprint/mismatch")(classedBy(ok, &stripe), &stripe)
	require.Equal(t, verdict.Fail, v, "a 422 where the profile declared 400")
}

func TestFingerprintPolicyIsInfoUnlessItExecutesTwice(t *testing.T) {
	t.Parallel()
	p := refProfile(t)
	same := newHistory().at(0, "original", verdict.OpOK, 201, committed, nil).at(5, "variant", verdict.OpOK, 201, committed, nil).record(1)
	v, msg, _ := checker(t, "fingerprint/json-key-order")(same, p)
	require.Equal(t, verdict.Info, v)
	require.Equal(t, "same request: the original response was replayed", msg)

	refused := newHistory().at(0, "original", verdict.OpOK, 201, committed, nil).at(5, "variant", verdict.OpFail, 422, "", nil).record(1)
	v, msg, _ = checker(t, "fingerprint/json-key-order")(refused, p)
	require.Equal(t, verdict.Info, v)
	require.Equal(t, "different request: refused with 422 (mismatch)", msg)

	twice := newHistory().at(0, "original", verdict.OpOK, 201, committed, nil).at(5, "variant", verdict.OpOK, 201, `{"id":"re_2"}`, nil).record(2)
	v, _, _ = checker(t, "fingerprint/json-key-order")(twice, p)
	require.Equal(t, verdict.Fail, v)
}

func TestScopeLeakFails(t *testing.T) {
	t.Parallel()
	p := refProfile(t)
	leaked := newHistory().at(0, "original", verdict.OpOK, 201, committed, nil).
		at(5, "other", verdict.OpOK, 201, committed, map[string]string{"Idempotent-Replayed": "true"}).record(1)
	v, _, ev := checker(t, "scope/other-principal")(leaked, p)
	require.Equal(t, verdict.Fail, v)
	require.Equal(t, 1, ev.Categories["leaked"])

	independent := newHistory().at(0, "original", verdict.OpOK, 201, committed, nil).
		at(5, "other", verdict.OpOK, 201, `{"id":"inv_1"}`, nil).
		at(10, scenarios.ControlStep, verdict.OpOK, 201, committed, nil).record(1)
	rec := independent
	rec.Ledger["other_operation"] = 1
	v, msg, _ := checker(t, "scope/other-endpoint")(rec, p)
	require.Equal(t, verdict.Pass, v, msg)
}

// An empty key accepted, and the second request with it answered the first's response:
// the empty string was a key, shared by every request that sends it.
func TestAnEmptyKeyUsedAsAKeyIsSaidSo(t *testing.T) {
	t.Parallel()
	rec := newHistory().at(0, "empty", verdict.OpOK, 201, committed, nil).at(1, "empty-again", verdict.OpOK, 201, committed, nil).record(1)
	v, msg, _ := checker(t, "key/empty")(rec, refProfile(t))
	require.Equal(t, verdict.NonStrict, v, msg)
	require.Contains(t, msg, "the key was used as a key, shared by every request that sends it")
}

// A repeat inside the window that executed again says the record may have expired early.
func TestInsideWindowNamesAnEarlyExpiry(t *testing.T) {
	t.Parallel()
	p := refProfile(t)
	p.Retention = profile.Duration(10 * time.Second)
	rec := newHistory().at(0, "original", verdict.OpOK, 201, committed, nil).at(9000, "repeat", verdict.OpOK, 201, `{"id":"re_2"}`, nil).record(2)
	v, msg, _ := checker(t, "expiry/inside-window")(rec, p)
	require.Equal(t, verdict.Fail, v, msg)
	require.True(t, strings.HasPrefix(msg, "the key was not honoured for the whole declared retention: the repeat late in the window executed again (the repeat was sent 9s"), msg)
	require.Contains(t, msg, "kept for less than the declared 10s")
	require.NotContains(t, msg, "every repeat executed again", "one late repeat cannot tell a key never honoured from one that expired early")
}

func TestMissingKeyPolicies(t *testing.T) {
	t.Parallel()
	p := refProfile(t)
	refused := newHistory().at(0, "unkeyed", verdict.OpFail, 400, "", nil).record(0)
	v, _, _ := checker(t, "key/missing")(refused, p)
	require.Equal(t, verdict.Pass, v)

	optional := *p
	optional.Expect.MissingKey = "optional"
	executed := newHistory().at(0, "unkeyed", verdict.OpOK, 201, committed, nil).record(1)
	v, _, _ = checker(t, "key/missing")(executed, &optional)
	require.Equal(t, verdict.Pass, v)
	v, _, _ = checker(t, "key/missing")(executed, p)
	require.Equal(t, verdict.Fail, v, "declared 400 but executed")

	// Twice without a key: each executes. One side effect for the two is a keyless
	// request taken for a repeat (a key derived from the payload), whatever it answered.
	twice := newHistory().at(0, "unkeyed", verdict.OpOK, 201, committed, nil).at(1, "unkeyed-again", verdict.OpOK, 201, `{"id":"re_2"}`, nil)
	v, msg, _ := checker(t, "key/missing")(twice.record(2), &optional)
	require.Equal(t, verdict.Pass, v, msg)
	v, msg, ev := checker(t, "key/missing")(twice.record(1), &optional)
	require.Equal(t, verdict.Fail, v, msg)
	require.Contains(t, msg, "made one side effect: a keyless request was taken for a repeat")
	require.Equal(t, 1, ev.Categories["lost"])
	replayed := newHistory().at(0, "unkeyed", verdict.OpOK, 201, committed, nil).at(1, "unkeyed-again", verdict.OpOK, 201, committed, nil).record(1)
	_, msg, _ = checker(t, "key/missing")(replayed, &optional)
	require.Contains(t, msg, "byte for byte: a replay")
	refusedTwice := newHistory().at(0, "unkeyed", verdict.OpFail, 400, "", nil).at(1, "unkeyed-again", verdict.OpOK, 201, committed, nil).record(0)
	v, msg, _ = checker(t, "key/missing")(refusedTwice, p)
	require.Equal(t, verdict.Fail, v, "the second request without a key was not refused: %s", msg)
}

func TestStoragePolicies(t *testing.T) {
	t.Parallel()
	p := refProfile(t) // stores_business_errors: true
	replayed := newHistory().at(0, "business", verdict.OpFail, 402, "limit", nil).
		at(5, "repeat", verdict.OpFail, 402, "limit", map[string]string{"Idempotent-Replayed": "true"}).record(0)
	v, _, _ := checker(t, "storage/business-4xx")(replayed, p)
	require.Equal(t, verdict.Pass, v)

	reexecuted := newHistory().at(0, "business", verdict.OpFail, 402, `{"instance":"a"}`, nil).
		at(5, "repeat", verdict.OpFail, 402, `{"instance":"b"}`, nil).record(0)
	v, msg, _ := checker(t, "storage/business-4xx")(reexecuted, p)
	require.Equal(t, verdict.Fail, v)
	require.Equal(t, "business 402 executed again, declared stored", msg)

	pinned := newHistory().at(0, "failing", verdict.OpInfo, 503, "", nil).at(5, "retry", verdict.OpInfo, 503, "", nil).record(0)
	v, _, ev := checker(t, "storage/5xx-not-pinned")(pinned, p)
	require.Equal(t, verdict.Fail, v)
	require.Equal(t, 1, ev.Categories["stuck"])

	hookIgnored := newHistory().at(0, "failing", verdict.OpOK, 201, committed, nil).at(5, "retry", verdict.OpOK, 201, committed, nil).record(1)
	v, _, _ = checker(t, "storage/5xx-not-pinned")(hookIgnored, p)
	require.Equal(t, verdict.Unknown, v, "the fail hook did not fail: nothing to judge")
}

// A burst that outlasts a short retention may execute once per window; within a window
// every success must still be the same response.
func TestBurstIsWindowAware(t *testing.T) {
	t.Parallel()
	p := refProfile(t) // retention 1s
	h := newHistory().
		span(0, 600, "burst", verdict.OpOK, 201, committed, nil).
		at(500, "burst", verdict.OpOK, 201, committed, nil).
		at(1200, "burst", verdict.OpOK, 201, `{"id":"re_2"}`, nil).
		at(1300, "burst", verdict.OpOK, 201, `{"id":"re_2"}`, nil)
	for i := range h.ops {
		h.ops[i].Client = i / 2 // one logical client per attempt, as in a burst
	}
	v, msg, _ := checker(t, "race/burst-1000")(h.record(2), p)
	// No copy was refused, so nothing concurrent was proven (INFO); the windows are
	// counted all the same.
	require.Equal(t, verdict.Info, v, msg)
	require.Contains(t, msg, "spanning 2 retention windows")

	v, _, _ = checker(t, "race/burst-1000")(h.record(3), p)
	require.Equal(t, verdict.Fail, v, "three effects in two windows")

	h.ops[7].Body = []byte(`{"id":"re_3"}`)
	v, _, ev := checker(t, "race/burst-1000")(h.record(2), p)
	require.Equal(t, verdict.Fail, v, "two different successes inside the second window")
	require.Equal(t, 1, ev.Categories["diverged"])
}

// A server that makes the repeat wait for the original (no 409) overlapped all the same:
// the journal shows the repeat spent most of its time at the target.
func TestInFlightRepeatThatWaitedIsNot409(t *testing.T) {
	t.Parallel()
	p := refProfile(t)
	waited := newHistory().span(0, 400, "original", verdict.OpOK, 201, committed, nil).
		span(5, 401, "repeat", verdict.OpOK, 201, committed, nil).record(1)
	waited.Journal = []faultproxy.Record{{Seq: 2, Fault: faultproxy.FaultBeforeDelay, ReachedUpstream: true, UpstreamMillis: 296}}
	v, msg, _ := checker(t, "race/in-flight-409")(waited, p)
	require.Equal(t, verdict.Fail, v)
	require.Equal(t, "the repeat during the original got 201, want 409 (in_flight)", msg)
	v, _, _ = checker(t, "race/in-flight-not-fabricated")(waited, p)
	require.Equal(t, verdict.Pass, v, "answered after the original: a replay, not a fabrication")

	late := newHistory().span(0, 2, "original", verdict.OpOK, 201, committed, nil).
		span(1, 103, "repeat", verdict.OpOK, 201, committed, nil).record(1)
	late.Journal = []faultproxy.Record{{Seq: 2, Fault: faultproxy.FaultBeforeDelay, ReachedUpstream: true, UpstreamMillis: 1}}
	v, msg, _ = checker(t, "race/in-flight-409")(late, p)
	require.Equal(t, verdict.Unknown, v, "the slow hook did not hold the original: no overlap to judge")
	require.Contains(t, msg, "no overlap")
}

func TestInFlightReplayReleasedWithTheOriginalIsNotFabricated(t *testing.T) {
	t.Parallel()
	p := refProfile(t)
	h := newHistory().span(0, 401, "original", verdict.OpOK, 201, committed, nil).
		span(5, 400, "repeat", verdict.OpOK, 201, committed, nil).record(1)
	v, msg, _ := checker(t, "race/in-flight-not-fabricated")(h, p)
	require.Equal(t, verdict.Pass, v, msg)
}

// An attempt still unanswered when the window ran out may have arrived after it: a new
// execution is then allowed and the scenario has nothing to judge.
func TestLateRepeatIsUnknownNotDuplicate(t *testing.T) {
	t.Parallel()
	p := refProfile(t) // retention 1s
	late := newHistory().at(0, "original", verdict.OpOK, 201, committed, nil).
		span(750, 1100, "repeat", verdict.OpOK, 201, `{"id":"re_2"}`, nil).record(2)
	v, msg, _ := checker(t, "expiry/inside-window")(late, p)
	require.Equal(t, verdict.Unknown, v)
	require.Contains(t, msg, "may have reached the target after the declared 1s retention")

	onTime := newHistory().at(0, "original", verdict.OpOK, 201, committed, nil).
		span(750, 760, "repeat", verdict.OpOK, 201, `{"id":"re_2"}`, nil).record(2)
	v, _, _ = checker(t, "expiry/inside-window")(onTime, p)
	require.Equal(t, verdict.Fail, v, "answered inside the window: a second execution is a duplicate")
}

func TestTakeoverThatMetALiveLockIsUnknown(t *testing.T) {
	t.Parallel()
	p := refProfile(t)
	h := newHistory().span(0, 1300, "original", verdict.OpFail, 409, "taken over", nil).
		span(800, 810, "takeover", verdict.OpFail, 409, "in use", nil).record(0)
	v, msg, _ := checker(t, "recovery/slow-past-lock")(h, p)
	require.Equal(t, verdict.Unknown, v)
	require.Contains(t, msg, "no takeover to judge")

	// The original committed while the takeover was refused: one side effect, but no
	// takeover happened, so the fencing it is about was not exercised. That is what a
	// target holding its lock for the whole request (a transaction) always does: INFO,
	// the observed policy, not a PASS.
	lateOriginal := newHistory().span(0, 1300, "original", verdict.OpOK, 201, committed, nil).
		span(800, 810, "takeover", verdict.OpFail, 409, "in use", nil).record(1)
	v, msg, _ = checker(t, "recovery/slow-past-lock")(lateOriginal, p)
	require.Equal(t, verdict.Info, v, "a refused takeover proves no fencing: %s", msg)
	require.Contains(t, msg, "no takeover")
	require.Contains(t, msg, "fencing was not exercised")

	fenced := newHistory().span(0, 1300, "original", verdict.OpFail, 409, "taken over", nil).
		span(800, 810, "takeover", verdict.OpOK, 201, committed, nil).record(1)
	v, _, _ = checker(t, "recovery/slow-past-lock")(fenced, p)
	require.Equal(t, verdict.Pass, v)

	both := newHistory().span(0, 1300, "original", verdict.OpOK, 201, `{"id":"re_0"}`, nil).
		span(800, 810, "takeover", verdict.OpOK, 201, committed, nil).record(2)
	v, _, ev := checker(t, "recovery/slow-past-lock")(both, p)
	require.Equal(t, verdict.Fail, v)
	require.Equal(t, 1, ev.Categories["duplicated"])

	// A takeover that waited for the live original (a lock held for the whole request)
	// and got its committed response when it finished: nothing took over, nothing was
	// fenced — the observed policy, not a PASS.
	waited := newHistory().span(0, 1300, "original", verdict.OpOK, 201, committed, nil).
		span(800, 1301, "takeover", verdict.OpOK, 201, committed, nil).record(1)
	v, msg, _ = checker(t, "recovery/slow-past-lock")(waited, p)
	require.Equal(t, verdict.Info, v, msg)
	require.Contains(t, msg, "no takeover: the takeover got the original's committed response (201) only when the original finished")

	// The takeover executed while the original was held, and the fenced original was
	// answered the takeover's stored response: the same body, but the takeover's came
	// first — a takeover, fenced.
	tookOver := newHistory().span(0, 1300, "original", verdict.OpOK, 201, committed, nil).
		span(800, 810, "takeover", verdict.OpOK, 201, committed, nil).record(1)
	v, msg, _ = checker(t, "recovery/slow-past-lock")(tookOver, p)
	require.Equal(t, verdict.Pass, v, msg)
}

// classedBy re-classes a hand-written record's answers by the profile's own rules, as
// the runner would have for that profile.
func classedBy(rec verdict.Record, p *profile.Profile) verdict.Record {
	cl := p.Classifier()
	out := rec
	out.History = append([]verdict.Op(nil), rec.History...)
	for i, op := range out.History {
		if op.Type != verdict.OpInvoke && op.Class != outcome.Info {
			out.History[i].Class = cl.Classify(outcome.Answer{Status: op.Status, Body: op.Body})
		}
	}
	return out
}

// Bytes of its own are no proof that the other principal's request executed: a leaked
// stored response with a per-response member differs too. Its own unique_field value,
// or the ledger counting both, is.
func TestOtherPrincipalPassesOnlyWithProofOfItsOwnExecution(t *testing.T) {
	t.Parallel()
	p := refProfile(t) // unique_field: id
	own := newHistory().at(0, "original", verdict.OpOK, 201, `{"id":"re_1","request_id":"a"}`, nil).
		at(5, "other", verdict.OpOK, 201, `{"id":"re_2","request_id":"b"}`, nil).
		at(10, scenarios.ControlStep, verdict.OpOK, 201, `{"id":"re_1","request_id":"c"}`, nil).record(1)
	v, msg, _ := checker(t, "scope/other-principal")(own, p)
	require.Equal(t, verdict.Pass, v, msg)
	require.Contains(t, msg, `its own id ("re_2", the original's "re_1")`)

	leakedWithNewRequestID := newHistory().at(0, "original", verdict.OpOK, 201, `{"id":"re_1","request_id":"a"}`, nil).
		at(5, "other", verdict.OpOK, 201, `{"id":"re_1","request_id":"b"}`, nil).record(1)
	v, _, _ = checker(t, "scope/other-principal")(leakedWithNewRequestID, p)
	require.Equal(t, verdict.Fail, v, "the same id is the original's execution")

	noUnique := *p
	noUnique.Expect.UniqueField = ""
	oneEffect := newHistory().at(0, "original", verdict.OpOK, 201, `{"amount":4900,"request_id":"a"}`, nil).
		at(5, "other", verdict.OpOK, 201, `{"amount":4900,"request_id":"b"}`, nil).record(1)
	v, msg, _ = checker(t, "scope/other-principal")(oneEffect, &noUnique)
	require.Equal(t, verdict.Unknown, v, msg)
	require.Contains(t, msg, "declare expect.unique_field to tell")

	bothCounted := newHistory().at(0, "original", verdict.OpOK, 201, `{"amount":4900,"request_id":"a"}`, nil).
		at(5, "other", verdict.OpOK, 201, `{"amount":4900,"request_id":"b"}`, nil).
		at(10, scenarios.ControlStep, verdict.OpOK, 201, `{"amount":4900,"request_id":"a"}`, nil).record(2)
	v, msg, _ = checker(t, "scope/other-principal")(bothCounted, &noUnique)
	require.Equal(t, verdict.Pass, v, msg)
	require.Contains(t, msg, "the ledger counts both requests")

	three := newHistory().at(0, "original", verdict.OpOK, 201, `{"amount":4900}`, nil).
		at(5, "other", verdict.OpOK, 201, `{"amount":4900,"x":1}`, nil).record(3)
	v, _, _ = checker(t, "scope/other-principal")(three, &noUnique)
	require.Equal(t, verdict.Fail, v)
}

// A burst whose attempts never overlapped (each answered before the next left) raced
// nothing: the one side effect is no proof of what the scenario is about.
func TestBurstWhoseAttemptsNeverOverlappedIsInfo(t *testing.T) {
	t.Parallel()
	p := refProfile(t)
	h := newHistory()
	for i := 0; i < 4; i++ {
		h.at(10*i, "burst", verdict.OpOK, 201, committed, nil)
	}
	v, msg, _ := checker(t, "race/burst-50")(h.record(1), p)
	require.Equal(t, verdict.Info, v, msg)
	require.Contains(t, msg, "no two were ever in flight at once")

	h = newHistory().span(0, 15, "burst", verdict.OpOK, 201, committed, nil).at(10, "burst", verdict.OpFail, 409, "busy", nil)
	v, msg, _ = checker(t, "race/burst-50")(h.record(1), p)
	require.Equal(t, verdict.Pass, v, msg)
	require.Contains(t, msg, "up to 2 in flight at once")
}

// A burst in which no copy was refused, under a profile that declares a refusal for a
// repeat in flight: every copy after the execution met the key committed (the copies
// were served one after the other), which a check-then-set target shows too. INFO, not
// PASS; under in_flight: wait the identical replays are what the school promises.
func TestBurstWithNoRefusalUnderARefusingSchoolIsInfo(t *testing.T) {
	t.Parallel()
	p := refProfile(t)
	h := newHistory().span(0, 15, "burst", verdict.OpOK, 201, committed, nil).at(10, "burst", verdict.OpOK, 201, committed, nil)
	v, msg, _ := checker(t, "race/burst-50")(h.record(1), p)
	require.Equal(t, verdict.Info, v, msg)
	require.Contains(t, msg, "no copy was refused with 409")
	require.Contains(t, msg, "nothing concurrent was proven")

	p.Expect.InFlightWait, p.Expect.InFlight = true, 0
	v, msg, _ = checker(t, "race/burst-50")(h.record(1), p)
	require.Equal(t, verdict.Pass, v, msg)
}

// Another principal's request that met the original in flight: given the original's
// response (a shared wait) or refused FAILs; its own execution passes only when it
// really arrived while the original ran.
func TestOtherPrincipalInFlight(t *testing.T) {
	t.Parallel()
	p := refProfile(t)
	check := checker(t, "scope/other-principal-in-flight")
	shared := newHistory().span(0, 400, "original", verdict.OpOK, 201, committed, nil).
		span(100, 401, "other", verdict.OpOK, 201, committed, nil).record(1)
	v, msg, _ := check(shared, p)
	require.Equal(t, verdict.Fail, v, msg)
	require.Equal(t, "the other request received the original's stored response", msg)

	refused := newHistory().span(0, 400, "original", verdict.OpOK, 201, committed, nil).
		at(100, "other", verdict.OpFail, 409, `{"error":"in flight"}`, nil).record(1)
	v, _, _ = check(refused, p)
	require.Equal(t, verdict.Fail, v)

	during := newHistory().span(0, 400, "original", verdict.OpOK, 201, committed, nil).
		at(100, "other", verdict.OpOK, 201, `{"id":"re_2","amount":4900}`, nil).
		at(450, "after", verdict.OpOK, 201, committed, nil).record(2)
	v, msg, _ = check(during, p)
	require.Equal(t, verdict.Pass, v, msg)
	require.Contains(t, msg, "during the original: executed independently")

	after := newHistory().span(0, 400, "original", verdict.OpOK, 201, committed, nil).
		at(500, "other", verdict.OpOK, 201, `{"id":"re_2","amount":4900}`, nil).record(2)
	v, msg, _ = check(after, p)
	require.Equal(t, verdict.Unknown, v, msg)
	require.Contains(t, msg, "the in-flight case was not exercised")

	// A gateway in front answered the original 504 (its read timeout shorter than the
	// work): no bytes to compare, but two effects for two requests are two executions.
	gateway := newHistory().span(0, 400, "original", verdict.OpInfo, 504, `<html>504 Gateway Time-out</html>`, nil).
		at(100, "other", verdict.OpOK, 201, `{"id":"re_2","amount":4900}`, nil).
		at(450, "after", verdict.OpOK, 201, `{"id":"re_1","amount":4900}`, nil)
	v, msg, _ = check(gateway.record(2), p)
	require.Equal(t, verdict.Pass, v, msg)
	require.Contains(t, msg, "the original's answer was a gateway's 504")
	v, msg, _ = check(gateway.record(1), p)
	require.Equal(t, verdict.Unknown, v, msg)
	v, _, _ = check(gateway.record(3), p)
	require.Equal(t, verdict.Fail, v)
	own := newHistory().span(0, 400, "original", verdict.OpInfo, 500, `{"error":"boom"}`, nil).
		at(100, "other", verdict.OpOK, 201, `{"id":"re_2","amount":4900}`, nil)
	v, msg, _ = check(own.record(2), p)
	require.Equal(t, verdict.Unknown, v, "the target's own 500 is no gateway's: %s", msg)
}

// The retry in a new session proves a key that outlives its session only when the
// journal shows the key's attempts in two sessions.
func TestNewSessionReplayNeedsTwoSessions(t *testing.T) {
	t.Parallel()
	p := refProfile(t)
	rec := newHistory().timeout(0, "original").at(10, "retry", verdict.OpOK, 201, committed, nil).record(1)
	rec.Journal = []faultproxy.Record{
		{Seq: 1, ReachedUpstream: true, UpstreamStatus: 201, UpstreamBody: []byte(committed), Fault: "after-reset", Headers: map[string]string{"Mcp-Session-Id": "s1"}},
		{Seq: 2, ReachedUpstream: true, UpstreamStatus: 201, Headers: map[string]string{"Mcp-Session-Id": "s1"}},
	}
	v, msg, _ := checker(t, "replay/new-session")(rec, p)
	require.Equal(t, verdict.Unknown, v, msg)
	require.Contains(t, msg, "came in 1 distinct session(s)")

	rec.Journal[1].Headers["Mcp-Session-Id"] = "s2"
	v, msg, _ = checker(t, "replay/new-session")(rec, p)
	require.Equal(t, verdict.Pass, v, msg)
	require.Contains(t, msg, "the retry came in a new session")

	rec.Ledger["operation"] = 2 // a server whose dedup lives in the session
	v, _, _ = checker(t, "replay/new-session")(rec, p)
	require.Equal(t, verdict.Fail, v)

	// A stateless server issues no session id: nothing to scope the key by. Its retry
	// is still judged.
	rec.Ledger["operation"] = 1
	delete(rec.Journal[0].Headers, "Mcp-Session-Id")
	delete(rec.Journal[1].Headers, "Mcp-Session-Id")
	v, msg, _ = checker(t, "replay/new-session")(rec, p)
	require.Equal(t, verdict.Info, v, msg)
	require.Contains(t, msg, "the server issues no session")
	rec.Ledger["operation"] = 2
	v, _, _ = checker(t, "replay/new-session")(rec, p)
	require.Equal(t, verdict.Fail, v)
}

// A client that gave up on an attempt the target had not answered yet leaves the target
// working on it: a 409 after that is no stuck key, and a fault that acts on the target's
// answer never acted.
func TestAnAttemptGivenUpBeforeTheTargetAnsweredProvesNothing(t *testing.T) {
	t.Parallel()
	p := refProfile(t)
	rec := newHistory().timeout(0, "original").at(10, "retry", verdict.OpFail, 409, `{"error":"in flight"}`, nil).record(0)
	rec.Journal = []faultproxy.Record{
		{Seq: 1, Attempt: 1, Fault: faultproxy.FaultAfterStatus, ReachedUpstream: true, ClientResult: faultproxy.ClientTimedOut},
		{Seq: 2, Attempt: 2, ReachedUpstream: true, UpstreamStatus: 409, ClientResult: faultproxy.ClientDelivered},
	}
	v, msg, _ := checker(t, "replay/after-503")(rec, p)
	require.Equal(t, verdict.Unknown, v, msg)
	require.Contains(t, msg, "the original may still be running")

	rec.Journal[0].ClientResult = faultproxy.ClientError // the target failed it: it is not running
	v, _, _ = checker(t, "replay/after-503")(rec, p)
	require.Equal(t, verdict.Fail, v, "a 409 after an attempt the target ended is a stuck key")

	passed := newHistory().timeout(0, "original").at(10, "retry", verdict.OpOK, 201, committed, nil).record(1)
	passed.Journal = []faultproxy.Record{
		{Seq: 1, Attempt: 1, Fault: faultproxy.FaultAfterStatus, ReachedUpstream: true, ClientResult: faultproxy.ClientTimedOut},
		{Seq: 2, Attempt: 2, ReachedUpstream: true, UpstreamStatus: 201, ClientResult: faultproxy.ClientDelivered},
	}
	sc, ok := scenarios.Lookup("replay/after-503")
	require.True(t, ok)
	v, msg, ev := sc.Check(passed, p)
	require.Equal(t, verdict.Pass, v, msg)
	v, msg = scenarios.WithPremise(sc, passed, p, v, msg, ev)
	require.Equal(t, verdict.Unknown, v, "the 503 after the commit never happened: %s", msg)
	require.Contains(t, msg, "was applied to no attempt")
}

// A repeat that reached the target during the original and got its committed response,
// identical, well after the original was answered, may have met a target that looks its
// key up only after other work: no FAIL against the declared 409. Released with the
// original, it was made to wait, which a declared 409 rules out.
func TestInFlightIdenticalReplayLongAfterTheOriginalIsUnknown(t *testing.T) {
	t.Parallel()
	p := refProfile(t) // slow_operation 300ms, in_flight 409
	late := newHistory().span(0, 400, "original", verdict.OpOK, 201, committed, nil).
		span(5, 2000, "repeat", verdict.OpOK, 201, committed, nil).record(1)
	late.Journal = []faultproxy.Record{{Seq: 2, Fault: faultproxy.FaultBeforeDelay, ReachedUpstream: true, UpstreamMillis: 1920}}
	v, msg, _ := checker(t, "race/in-flight-409")(late, p)
	require.Equal(t, verdict.Unknown, v, msg)
	require.Contains(t, msg, "may have looked its key up only after the commit")

	together := newHistory().span(0, 400, "original", verdict.OpOK, 201, committed, nil).
		span(5, 450, "repeat", verdict.OpOK, 201, committed, nil).record(1)
	together.Journal = []faultproxy.Record{{Seq: 2, Fault: faultproxy.FaultBeforeDelay, ReachedUpstream: true, UpstreamMillis: 370}}
	v, msg, _ = checker(t, "race/in-flight-409")(together, p)
	require.Equal(t, verdict.Fail, v, msg)

	// Released with the original but at the target only 60 ms of the 300 ms hold: the
	// proxy forwarded it just before the commit, and on a loaded machine the target's
	// key lookup may have come just after it, where a replay is right. No FAIL.
	brief := newHistory().span(0, 400, "original", verdict.OpOK, 201, committed, nil).
		span(5, 420, "repeat", verdict.OpOK, 201, committed, nil).record(1)
	brief.Journal = []faultproxy.Record{{Seq: 2, Fault: faultproxy.FaultBeforeDelay, ReachedUpstream: true, UpstreamMillis: 60}}
	v, msg, _ = checker(t, "race/in-flight-409")(brief, p)
	require.Equal(t, verdict.Unknown, v, msg)
	require.Contains(t, msg, "the target had the repeat for only 60ms of the 300ms hold")
}

// Attempts a rate limit refused (429, throttled) never reached the key: a burst with one
// attempt looked at and the rest throttled raced nothing, however many were in flight.
func TestBurstOfThrottledAttemptsIsInfo(t *testing.T) {
	t.Parallel()
	p := refProfile(t)
	burst := func(looked int) verdict.Record {
		h := newHistory()
		for i := 0; i < 50; i++ {
			status, typ, body := 429, verdict.OpFail, `{"error":"rate_limited"}`
			if i < looked {
				status, typ, body = 201, verdict.OpOK, committed
			}
			h.span(0, 20, "burst", typ, status, body, nil)
			h.ops[len(h.ops)-2].Client, h.ops[len(h.ops)-1].Client = i, i
		}
		return h.record(1)
	}
	v, msg, _ := checker(t, "race/burst-50")(burst(1), p)
	require.Equal(t, verdict.Info, v, msg)
	require.Contains(t, msg, "49 of 50 attempts were throttled (a rate limit refused them)")

	v, msg, _ = checker(t, "race/burst-50")(burst(2), p)
	require.Equal(t, verdict.Info, v, "two successes and no refusal under in_flight: 409: %s", msg)
	require.Contains(t, msg, "48 attempts unseen (info: 48 throttled (429))")
	require.Contains(t, msg, "up to 2 in flight at once", "the throttled attempts are not counted as in flight")
}

// A server that sends its replay header on every response, "false" on a fresh execution,
// marks no replay with it: the first response is not a replay, and a fresh execution
// under another key is not "answered the first key's response".
func TestAFalseReplayHeaderIsNoReplay(t *testing.T) {
	t.Parallel()
	p := refProfile(t)
	fresh := map[string]string{"Idempotent-Replayed": "false"}
	replayed := map[string]string{"Idempotent-Replayed": "true"}
	rec := newHistory().at(0, "original", verdict.OpOK, 201, committed, fresh).at(5, "repeat", verdict.OpOK, 201, committed, replayed).record(1)
	v, msg, _ := checker(t, "replay/marker")(rec, p)
	require.Equal(t, verdict.Pass, v, msg)
	require.Contains(t, msg, `the first response says "false"`)

	for _, value := range []string{"false", "0", "?0", "FALSE"} {
		own := newHistory().at(0, "original", verdict.OpOK, 201, committed, nil).
			at(5, "other", verdict.OpOK, 201, `{"id":"re_2","amount":4900}`, map[string]string{"Idempotent-Replayed": value}).
			at(10, scenarios.ControlStep, verdict.OpOK, 201, committed, replayed).record(2)
		v, msg, _ = checker(t, "scope/other-principal")(own, p)
		require.Equal(t, verdict.Pass, v, "%s: %s", value, msg)
	}
	marked := newHistory().at(0, "original", verdict.OpOK, 201, committed, nil).
		at(5, "other", verdict.OpOK, 201, `{"id":"re_2","amount":4900}`, replayed).record(2)
	v, _, _ = checker(t, "scope/other-principal")(marked, p)
	require.Equal(t, verdict.Fail, v, "a true marker still marks the answer a replay")
}

// Refusals of the other request: a refusal of the key (409, 422) shows a scope shared
// across principals (FAIL), but across endpoints only a policy (INFO: Stripe's keys are per
// account, and reuse elsewhere is refused); a 404 or 403 is about the entity, not the key.
func TestScopeRefusalsAreJudgedByWhatTheyRefuse(t *testing.T) {
	t.Parallel()
	p := refProfile(t)
	rec := func(status int, body string) verdict.Record {
		return newHistory().at(0, "original", verdict.OpOK, 201, committed, nil).at(5, "other", verdict.OpFail, status, body, nil).record(1)
	}
	v, msg, _ := checker(t, "scope/other-principal")(rec(422, `{"title":"reused"}`), p)
	require.Equal(t, verdict.Fail, v, msg)
	v, msg, _ = checker(t, "scope/other-principal")(rec(404, `{"error":"no such order"}`), p)
	require.Equal(t, verdict.Info, v, msg)
	require.Contains(t, msg, "no refusal of the key")
	v, msg, _ = checker(t, "scope/other-endpoint")(rec(422, `{"title":"reused"}`), p)
	require.Equal(t, verdict.Info, v, msg)
	require.Contains(t, msg, "keys are shared across endpoints")
}

// A held original that a rate limit refused (429) was never in flight: the repeat that
// "met it" was the first execution, and a takeover took over nothing. Its PASS and its
// FAIL are UNKNOWN, unless the FAIL counts more effects than the requests allow.
func TestAThrottledOriginalIsNoPremise(t *testing.T) {
	t.Parallel()
	p := refProfile(t)
	for id, second := range map[string]string{"race/in-flight-409": "repeat", "race/in-flight-other-payload": "repeat",
		"race/in-flight-not-fabricated": "repeat", "recovery/slow-past-lock": "takeover"} {
		rec := newHistory().span(0, 300, "original", verdict.OpInfo, 429, `{"error":"rate_limited"}`, nil).
			at(75, second, verdict.OpOK, 201, committed, nil).record(1)
		sc, ok := scenarios.Lookup(id)
		require.True(t, ok)
		checked, msg, ev := sc.Check(rec, p)
		v, msg := scenarios.WithPremise(sc, rec, p, checked, msg, ev)
		require.Equal(t, verdict.Unknown, v, "%s: %s", id, msg)
		if checked == verdict.Pass || checked == verdict.Fail {
			require.Contains(t, msg, "the original step was throttled (429 (throttled))", id)
		}
	}
	sc, _ := scenarios.Lookup("race/in-flight-409")
	dup := newHistory().span(0, 300, "original", verdict.OpInfo, 429, `{}`, nil).at(75, "repeat", verdict.OpOK, 201, committed, nil).record(2)
	checked, msg, ev := sc.Check(dup, p)
	require.Equal(t, verdict.Fail, checked, msg)
	v, msg := scenarios.WithPremise(sc, dup, p, checked, msg, ev)
	require.Equal(t, verdict.Fail, v, "two side effects from a throttled original and one repeat are still two: %s", msg)
}

// expiry/after-window's repeat with a response of its own but one side effect in the
// ledger: with a per-execution value of its own it executed anew and the ledger does not
// show it (lost, read again at the end of the run); without one it cannot be told.
func TestExecutedAnewWithALedgerBehind(t *testing.T) {
	t.Parallel()
	p := refProfile(t)
	rec := newHistory().at(0, "original", verdict.OpOK, 201, committed, nil).at(1600, "repeat", verdict.OpOK, 201, `{"id":"re_2","amount":4900}`, nil).record(1)
	v, msg, ev := checker(t, "expiry/after-window")(rec, p)
	require.Equal(t, verdict.Fail, v, msg)
	require.Equal(t, 1, ev.Categories[verdict.CatLost], "lost: judged again once the ledger is read at the end of the run")
	require.Contains(t, msg, `executed anew (its own id "re_2")`)

	p.Expect.UniqueField = ""
	v, msg, _ = checker(t, "expiry/after-window")(rec, p)
	require.Equal(t, verdict.Unknown, v, msg)
}

// expiry/inside-window's PASS says what it is about: the key honoured late in its
// window, with when the repeat was sent and answered against the declared retention.
func TestInsideWindowPassSaysWhenTheRepeatCame(t *testing.T) {
	t.Parallel()
	p := refProfile(t) // retention 1s
	rec := newHistory().span(0, 10, "original", verdict.OpOK, 201, committed, nil).
		span(750, 760, "repeat", verdict.OpOK, 201, committed, nil).record(1)
	v, msg, _ := checker(t, "expiry/inside-window")(rec, p)
	require.Equal(t, verdict.Pass, v, msg)
	require.Contains(t, msg, "the key was honoured late in its window: ")
	require.Contains(t, msg, "(the repeat was sent 750ms and answered 760ms after the original's send, of a declared 1s retention)")
}

// A repeat late in the window refused as a repeat (moov-io/base idempotent's 412 for a
// key it has seen) shows the key still honoured: the retention holds, and the refusal
// instead of a replay is replay/sequential's finding, not a "stuck" FAIL of this one.
func TestInsideWindowRefusedAsARepeatIsHonoured(t *testing.T) {
	t.Parallel()
	p := refProfile(t) // retention 1s
	rec := newHistory().span(0, 10, "original", verdict.OpOK, 201, committed, nil).
		span(750, 760, "repeat", verdict.OpFail, 409, `{"error":"in flight"}`, nil).record(1)
	v, msg, _ := checker(t, "expiry/inside-window")(rec, p)
	require.Equal(t, verdict.Pass, v, msg)
	require.Contains(t, msg, "the repeat was refused as a repeat (409 (in_flight)) and did not execute again")

	rec = newHistory().span(0, 10, "original", verdict.OpOK, 201, committed, nil).
		span(750, 760, "repeat", verdict.OpFail, 409, `{"error":"in flight"}`, nil).record(2)
	v, msg, _ = checker(t, "expiry/inside-window")(rec, p)
	require.Equal(t, verdict.Fail, v, "a second effect is never honoured: %s", msg)
}

func TestKeyIgnoredIsSaidPlainly(t *testing.T) {
	t.Parallel()
	rec := newHistory().
		at(0, "original", verdict.OpInfo, 503, "", nil).
		at(10, "retry", verdict.OpOK, 201, `{"id":"re_2"}`, nil).
		record(2)
	rec.Journal = []faultproxy.Record{
		{Seq: 1, Attempt: 1, ReachedUpstream: true, UpstreamCalls: 1, UpstreamStatus: 201},
		{Seq: 2, Attempt: 2, ReachedUpstream: true, UpstreamCalls: 1, UpstreamStatus: 201},
	}
	v, msg, _ := checker(t, "replay/after-503")(rec, refProfile(t))
	require.Equal(t, verdict.Fail, v)
	require.Equal(t, "every repeat executed again (the key was not honoured for it: ignored, or scoped narrower than the retry, per session or per connection); 2 side effects for one key, want 1", msg)

	// Three deliveries, two effects: the key did something, the wording stays factual.
	rec.Journal[0].UpstreamCalls = 2
	_, msg, _ = checker(t, "replay/after-503")(rec, refProfile(t))
	require.Equal(t, "2 side effects for one key, want 1", msg)
}

// A pre-commit delay over stdio forwards the original after its client gave up, and its
// late answer is still written to the pipe (the journal says delivered): a retry that
// arrived while that work ran met it in flight, and its in-flight answer is no stuck key.
// The same answer after the work had ended is one.
func TestARetryThatMetADelayedOriginalAtWorkIsNoStuckKey(t *testing.T) {
	t.Parallel()
	p := refProfile(t)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rec := newHistory().timeout(0, "original").at(10, "retry", verdict.OpFail, 409, `{"error":"in flight"}`, nil).record(0)
	rec.Journal = []faultproxy.Record{
		{Seq: 1, Key: "K1", Time: t0, Attempt: 1, Fault: faultproxy.FaultBeforeDelay, ReachedUpstream: true, UpstreamStatus: 200,
			ForwardedAfterMillis: 2500, UpstreamMillis: 400, ClientResult: faultproxy.ClientDelivered},
		{Seq: 2, Key: "K1", Time: t0.Add(2600 * time.Millisecond), Attempt: 2, ReachedUpstream: true, UpstreamStatus: 409, ClientResult: faultproxy.ClientDelivered},
	}
	v, msg, _ := checker(t, "before/delay")(rec, p)
	require.Equal(t, verdict.Unknown, v, msg)
	require.Contains(t, msg, "the original may still be running")

	rec.Journal[1].Time = t0.Add(3 * time.Second) // the original's work ended at 2.9 s
	v, msg, _ = checker(t, "before/delay")(rec, p)
	require.Equal(t, verdict.Fail, v, msg)
	require.Contains(t, msg, "the key is stuck")

	// Forwarded well inside its client's timeout, the delayed attempt was waited for:
	// its overlap with a later one proves no abandoned work.
	rec.Journal[0].ForwardedAfterMillis = 100
	rec.Journal[1].Time = t0.Add(300 * time.Millisecond)
	v, msg, _ = checker(t, "before/delay")(rec, p)
	require.Equal(t, verdict.Fail, v, msg)
}

// Two copies race a hung store and both time out; the retry after the store came back
// executed. Two effects inside the 1 s retention are a duplicate (fail-open); two
// effects where the retry may have reached the target after it (a loaded machine held
// the race past the window) prove nothing either way: UNKNOWN, never a false FAIL.
func TestStoreHangRaceCountsTheRetentionWindows(t *testing.T) {
	t.Parallel()
	p := refProfile(t)
	inside := newHistory().timeout(0, "race").timeout(0, "race").at(300, "after", verdict.OpOK, 201, committed, nil).record(2)
	v, msg, _ := checker(t, "store/hang-race")(inside, p)
	require.Equal(t, verdict.Fail, v, msg)
	require.Contains(t, msg, "fail-open")

	late := newHistory().timeout(0, "race").timeout(0, "race").at(2500, "after", verdict.OpOK, 201, committed, nil).record(2)
	v, msg, _ = checker(t, "store/hang-race")(late, p)
	require.Equal(t, verdict.Unknown, v, msg)
	require.NotContains(t, msg, "fail-open")
}
