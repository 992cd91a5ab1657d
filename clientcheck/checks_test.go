package clientcheck_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/clientcheck"
	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/verdict"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// attempt builds one journal record of POST /v1/refunds.
func attempt(seq uint64, key, body string, status int, at time.Duration) faultproxy.Record {
	r := faultproxy.Record{
		Seq: seq, Time: t0.Add(at), Method: "POST", Path: "/v1/refunds",
		Key: key, HasKey: key != "", BodySHA256: body,
		ReachedUpstream: true, UpstreamStatus: 201,
		ClientResult: faultproxy.ClientDelivered, ClientStatus: status,
	}
	if status >= 500 {
		r.Fault, r.Outcome = faultproxy.FaultAfterStatus, faultproxy.OutcomeInfo
	}
	return r
}

func lost(r faultproxy.Record) faultproxy.Record {
	r.ClientResult, r.ClientStatus, r.Fault, r.Outcome = faultproxy.ClientReset, 0, faultproxy.FaultAfterReset, faultproxy.OutcomeInfo
	return r
}

func verdicts(o clientcheck.Observation) map[string]verdict.Result {
	out := map[string]verdict.Result{}
	for _, r := range clientcheck.Check(o) {
		out[r.ScenarioID] = r
	}
	return out
}

func goodObservation() clientcheck.Observation {
	return clientcheck.Observation{
		Attempts: []faultproxy.Record{
			attempt(1, "k1", "b1", 503, 0),
			attempt(2, "k1", "b1", 201, 100*time.Millisecond),
			lost(attempt(3, "k2", "b2", 0, 200*time.Millisecond)),
			attempt(4, "k2", "b2", 201, 300*time.Millisecond),
		},
		Entities:        map[string]string{"b1": "order-1", "b2": "order-2"},
		Ledger:          map[string]int{"order-1": 1, "order-2": 1},
		Outcomes:        []clientcheck.Outcome{{Operation: "order-1", Outcome: "ok"}, {Operation: "order-2", Outcome: "ok"}},
		OutcomesWritten: true,
	}
}

// A client that rebuilds its body per attempt (the amount, a timestamp) under one key: the
// target refuses the retry as a mismatch, and the first attempt's outcome stays unknown.
func TestAKeyReSentWithAnotherPayloadIsAFinding(t *testing.T) {
	o := clientcheck.Observation{
		Attempts: []faultproxy.Record{
			lost(attempt(1, "k1", "b1", 0, 0)),
			attempt(2, "k1", "b1-amount-4901", 422, 100*time.Millisecond),
		},
		Entities: map[string]string{"b1": "order-1", "b1-amount-4901": "order-1"},
		Ledger:   map[string]int{"order-1": 1},
	}
	v := verdicts(o)[clientcheck.IDSamePayload]
	require.Equal(t, verdict.Fail, v.Verdict, v.Message)
	require.Contains(t, v.Evidence.Examples[0], "order-1 re-sent key k1 with 2 different payloads")
	require.Equal(t, verdict.Pass, verdicts(goodObservation())[clientcheck.IDSamePayload].Verdict)
}

func TestGoodClientHasNoFindings(t *testing.T) {
	results := clientcheck.Check(goodObservation())
	require.Len(t, results, 14)
	require.Empty(t, clientcheck.Findings(results, true))
	v := verdicts(goodObservation())
	require.Equal(t, verdict.Pass, v[clientcheck.IDSameKeyOnRetry].Verdict)
	require.Equal(t, verdict.Pass, v[clientcheck.IDLostResolved].Verdict)
	require.Equal(t, verdict.NA, v[clientcheck.ID422Retried].Verdict)
	require.Equal(t, verdict.NA, v[clientcheck.ID409Hammered].Verdict)
}

func TestKeyMintedPerAttemptIsNamed(t *testing.T) {
	o := goodObservation()
	o.Attempts[1].Key = "k1-retry"
	o.Ledger["order-1"] = 2
	v := verdicts(o)
	require.Equal(t, verdict.Fail, v[clientcheck.IDKeyPerAttempt].Verdict)
	require.Contains(t, v[clientcheck.IDKeyPerAttempt].Message, "key minted per attempt")
	require.Equal(t, 1, v[clientcheck.IDKeyPerAttempt].Evidence.Categories["key-minted-per-attempt"])
	require.Equal(t, verdict.Fail, v[clientcheck.IDSameKeyOnRetry].Verdict)
	require.Equal(t, verdict.Fail, v[clientcheck.IDOneEffect].Verdict)
	require.Equal(t, 1, v[clientcheck.IDOneEffect].Evidence.Categories[verdict.CatDuplicated])
	require.Contains(t, v[clientcheck.IDOneEffect].Evidence.Examples[0], "order-1 has 2 side effects")
}

func TestKeySharedAcrossOperations(t *testing.T) {
	o := goodObservation()
	o.Attempts[2].Key, o.Attempts[3].Key = "k1", "k1"
	v := verdicts(o)
	require.Equal(t, verdict.Fail, v[clientcheck.IDKeySharedAcross].Verdict)
	require.Contains(t, v[clientcheck.IDKeySharedAcross].Evidence.Examples[0], "order-1, order-2")
}

func TestNoKey(t *testing.T) {
	o := goodObservation()
	o.Attempts = append(o.Attempts, attempt(5, "", "b3", 400, time.Second))
	v := verdicts(o)
	require.Equal(t, verdict.Fail, v[clientcheck.IDNoKey].Verdict)
	require.Equal(t, "sends no key: 1 of 3 operation(s) went out without an idempotency key (1 attempt(s))", v[clientcheck.IDNoKey].Message)
	require.Contains(t, v[clientcheck.IDNoKey].Evidence.Examples[0], "body:b3: no key on any attempt; sent once")

	// Where the API runs a request without a key (missing_key: optional), a keyless
	// operation never retried is no defect.
	o.KeyOptional = true
	require.Equal(t, verdict.Pass, verdicts(o)[clientcheck.IDNoKey].Verdict)
	o.Attempts = append(o.Attempts, attempt(6, "", "b3", 201, 2*time.Second))
	require.Equal(t, verdict.Fail, verdicts(o)[clientcheck.IDNoKey].Verdict, "a retry without a key is one whatever the API requires")
	o.KeyOptional = false

	// A key dropped on a retry is a key not kept: client/same-key-on-retry's, not this one.
	o.Entities["b3"] = "order-3"
	o.Attempts = append(o.Attempts[:4], attempt(5, "k3", "b3", 503, time.Second), attempt(6, "", "b3", 201, 2*time.Second))
	v = verdicts(o)
	require.Equal(t, verdict.Pass, v[clientcheck.IDNoKey].Verdict, v[clientcheck.IDNoKey].Message)
	require.Equal(t, verdict.Fail, v[clientcheck.IDSameKeyOnRetry].Verdict)
}

// A client that sends no key (an SDK retrying a 503 after the commit: billed twice) gets
// one finding, its cause, with the consequences under it, not three FAILs for one
// defect. One that dropped its key on a retry kept no key: client/same-key-on-retry.
func TestANoKeyClientGetsOneGroupedFinding(t *testing.T) {
	o := goodObservation()
	o.Attempts = []faultproxy.Record{attempt(1, "", "b1", 503, 0), attempt(2, "", "b1", 201, 100*time.Millisecond)}
	o.Ledger = map[string]int{"order-1": 2}
	o.Outcomes = o.Outcomes[:1]
	results := clientcheck.Check(o)
	findings := clientcheck.Findings(results, true)
	require.Len(t, findings, 1, "%v", findings)
	require.Equal(t, clientcheck.IDNoKey, findings[0].ScenarioID)
	require.Equal(t, "sends no key: 1 of 1 operation(s) went out without an idempotency key (2 attempt(s)); 1 retried without one, 1 of them executed more than once", findings[0].Message)
	require.Equal(t, []string{"order-1: no key on any attempt; retried without a key (2 attempts), 2 side effects: the API could not tell the retry from a new operation"}, findings[0].Evidence.Examples)
	v := verdicts(o)
	require.Equal(t, verdict.NA, v[clientcheck.IDSameKeyOnRetry].Verdict)
	require.Contains(t, v[clientcheck.IDSameKeyOnRetry].Message, "client/no-key")
	require.Equal(t, verdict.NA, v[clientcheck.IDOneEffect].Verdict)
	require.Contains(t, v[clientcheck.IDOneEffect].Message, "sent without a key took effect more than once: client/no-key")

	o.Attempts[0].Key, o.Attempts[0].HasKey = "k1", true
	v = verdicts(o)
	require.Equal(t, verdict.Fail, v[clientcheck.IDSameKeyOnRetry].Verdict)
	require.Contains(t, v[clientcheck.IDSameKeyOnRetry].Evidence.Examples[0], "order-1 went out under a key and 1 time(s) without one")
	require.Equal(t, verdict.Pass, v[clientcheck.IDNoKey].Verdict)
}

func Test422RetriedUnchangedFailsAndCorrectedPasses(t *testing.T) {
	o := goodObservation()
	o.Attempts = append(o.Attempts, attempt(5, "k3", "b3", 422, time.Second), attempt(6, "k3", "b3", 422, 2*time.Second))
	require.Equal(t, verdict.Fail, verdicts(o)[clientcheck.ID422Retried].Verdict)

	o = goodObservation()
	o.Attempts = append(o.Attempts, attempt(5, "k3", "b3", 422, time.Second), attempt(6, "k3", "b3-corrected", 201, 2*time.Second))
	require.Equal(t, verdict.Pass, verdicts(o)[clientcheck.ID422Retried].Verdict)

	// The 422 was client-check's own problem+json, the profile declaring no body of the
	// API's: the finding says a client that reads the body may act otherwise on the API's.
	o = goodObservation()
	o.Attempts = append(o.Attempts, attempt(5, "k3", "b3", 422, time.Second), attempt(6, "k3", "b3", 422, 2*time.Second))
	o.Attempts[4].Fault = faultproxy.FaultBeforeStatus
	require.NotContains(t, verdicts(o)[clientcheck.ID422Retried].Message, "stand-ins")
	o.Schedule.StandIns = []string{"expect.mismatch_body"}
	v := verdicts(o)[clientcheck.ID422Retried]
	require.Equal(t, verdict.Fail, v.Verdict)
	require.Contains(t, v.Message, "those answers were client-check's problem+json stand-ins (the profile declares no expect.mismatch_body)")
}

func Test409MustWaitRetryAfter(t *testing.T) {
	o := goodObservation()
	o.Attempts = append(o.Attempts, attempt(5, "k3", "b3", 409, time.Second), attempt(6, "k3", "b3", 201, time.Second+10*time.Millisecond))
	o.RetryAfter = map[uint64]time.Duration{5: time.Second}
	v := verdicts(o)
	require.Equal(t, verdict.Fail, v[clientcheck.ID409Hammered].Verdict)
	require.Contains(t, v[clientcheck.ID409Hammered].Evidence.Examples[0], "Retry-After 1s")

	o.Attempts[5].Time = o.Attempts[4].Time.Add(time.Second)
	require.Equal(t, verdict.Pass, verdicts(o)[clientcheck.ID409Hammered].Verdict)
}

// The wait after a 409 is counted from when the answer left the front, not from when
// its handler returned: on a loaded machine that can be long after the client had the
// answer, and a client that waited exactly Retry-After would look like it hammered.
func Test409WaitIsCountedFromWhenTheAnswerLeft(t *testing.T) {
	o := goodObservation()
	sent := t0.Add(time.Second)
	o.Attempts = append(o.Attempts, attempt(5, "k3", "b3", 409, time.Second), attempt(6, "k3", "b3", 201, 2*time.Second))
	o.Delivered = map[uint64]clientcheck.Delivered{5: {
		Class: outcome.InFlight, RetryAfter: time.Second,
		Start: t0.Add(time.Second), Sent: sent, End: sent.Add(200 * time.Millisecond),
	}}
	v := verdicts(o)
	require.Equal(t, verdict.Pass, v[clientcheck.ID409Hammered].Verdict, v[clientcheck.ID409Hammered].Message)

	o.Attempts[5].Time = sent.Add(900 * time.Millisecond)
	require.Equal(t, verdict.Fail, verdicts(o)[clientcheck.ID409Hammered].Verdict, "a retry 900 ms after the answer left is early")
}

func Test409WithoutRetryAfterNeedsABackoff(t *testing.T) {
	o := goodObservation()
	o.Attempts = append(o.Attempts, attempt(5, "k3", "b3", 409, time.Second), attempt(6, "k3", "b3", 201, time.Second))
	require.Equal(t, verdict.Fail, verdicts(o)[clientcheck.ID409Hammered].Verdict)
	o.Attempts[5].Time = o.Attempts[4].Time.Add(clientcheck.DefaultMinBackoff)
	require.Equal(t, verdict.Pass, verdicts(o)[clientcheck.ID409Hammered].Verdict)
}

func TestCommittedOperationReportedFailed(t *testing.T) {
	o := goodObservation()
	o.Attempts = o.Attempts[:3] // order-2: response lost, never retried
	o.Outcomes[1].Outcome = clientcheck.OutcomeFailed
	v := verdicts(o)
	require.Equal(t, verdict.Fail, v[clientcheck.IDUnknownAsFailed].Verdict)
	require.Contains(t, v[clientcheck.IDUnknownAsFailed].Evidence.Examples[0], "order-2 reported failed, but 1 side effect(s) exist")
	require.Equal(t, verdict.Fail, v[clientcheck.IDLostResolved].Verdict)

	o.Outcomes[1].Outcome = clientcheck.OutcomeUnknown
	v = verdicts(o)
	require.Equal(t, verdict.Pass, v[clientcheck.IDUnknownAsFailed].Verdict)
	require.Equal(t, verdict.Pass, v[clientcheck.IDLostResolved].Verdict)
	require.Equal(t, "2 operation(s) with a lost or in-flight answer: 1 retried to a known outcome, 1 reported unknown", v[clientcheck.IDLostResolved].Message,
		"\"resolved\" says which: a retry that settled it, or a client that said it does not know")
}

func TestLostOperationReportedOK(t *testing.T) {
	o := goodObservation()
	o.Ledger["order-2"] = 0
	v := verdicts(o)
	require.Equal(t, verdict.Fail, v[clientcheck.IDOneEffect].Verdict)
	require.Equal(t, 1, v[clientcheck.IDOneEffect].Evidence.Categories[verdict.CatLost])
}

// A client whose keys are its operations' own ids, run a second time against the same
// server: its keys' effects were committed by the first run, so this run's answers are
// replays and its ledger gains nothing. Not lost: the effect is there, once.
func TestAnOperationThatTookEffectInAnEarlierRunIsNotLost(t *testing.T) {
	o := goodObservation()
	o.Ledger = map[string]int{"order-1": 0, "order-2": 0}
	o.LedgerBefore = map[string]int{"order-1": 1, "order-2": 1}
	v := verdicts(o)
	require.Equal(t, verdict.Pass, v[clientcheck.IDOneEffect].Verdict, v[clientcheck.IDOneEffect].Message)
	require.Contains(t, v[clientcheck.IDOneEffect].Message, "2 had taken effect before this run")

	o.LedgerBefore["order-2"] = 0 // a first run that lost it
	v = verdicts(o)
	require.Equal(t, verdict.Fail, v[clientcheck.IDOneEffect].Verdict)
	require.Contains(t, v[clientcheck.IDOneEffect].Evidence.Examples[0], "order-2 reported ok but has no side effect")

	o.LedgerBefore["order-2"], o.Ledger["order-2"] = 1, 1 // and a second effect now
	v = verdicts(o)
	require.Equal(t, verdict.Pass, v[clientcheck.IDOneEffect].Verdict, "one effect this run, counted from the baseline")
}

// A profile's entity that finds nothing in the client's requests (a JSON path on a
// form-encoded body): every attempt is told apart by its body alone and no ledger is
// read, so nothing was counted and nothing passes.
func TestOperationsWithoutAnEntityAreNotCountedAsPassing(t *testing.T) {
	o := goodObservation()
	o.Entities, o.Ledger, o.Outcomes = nil, map[string]int{}, nil
	o.EntityRef = "json:metadata.order_id"
	v := verdicts(o)
	require.Equal(t, verdict.Unknown, v[clientcheck.IDOneEffect].Verdict)
	require.Contains(t, v[clientcheck.IDOneEffect].Message, "entity (json:metadata.order_id)")
}

func TestNoRequestsAndUnreadableLedgerAreUnknown(t *testing.T) {
	v := verdicts(clientcheck.Observation{})
	require.Equal(t, verdict.Unknown, v[clientcheck.IDOneEffect].Verdict)
	require.Contains(t, v[clientcheck.IDOneEffect].Message, "IDEMPROOF_BASE_URL")

	o := goodObservation()
	o.LedgerErr = "connection refused"
	findings := clientcheck.Findings(clientcheck.Check(o), false)
	require.Len(t, findings, 2)
}

func TestCommandFailureIsAFinding(t *testing.T) {
	o := goodObservation()
	o.ExitErr = "exit status 3"
	findings := clientcheck.Findings(clientcheck.Check(o), false)
	require.Len(t, findings, 1)
	require.Equal(t, clientcheck.IDCommandSucceeded, findings[0].ScenarioID)
}

func TestParseOutcomes(t *testing.T) {
	got, err := clientcheck.ParseOutcomes(strings.NewReader(
		`{"operation":"order-1","outcome":"ok","key":"k1","status":201}` + "\n\n" +
			`{"operation":"order-2","outcome":"unknown"}` + "\n"))
	require.NoError(t, err)
	require.Equal(t, []clientcheck.Outcome{
		{Operation: "order-1", Outcome: "ok", Key: "k1", Status: 201},
		{Operation: "order-2", Outcome: "unknown"},
	}, got)
}

func TestParseOutcomesNamesTheBadLine(t *testing.T) {
	for input, want := range map[string]string{
		`{"operation":"o","outcome":"done"}`:     `line 1: outcome "done": use "ok", "failed" or "unknown"`,
		"\n" + `{"outcome":"ok"}`:                `line 2: "operation" is empty`,
		`ok order-1`:                             `line 1: want one JSON object`,
		`{"operation":"o","outcome":"ok","x":1}`: `line 1: want one JSON object`,
		`{"operation":"o","outcome":"ok"} {"operation":"p","outcome":"ok"}`: `line 1: more after the JSON object`,
		`{"operation":"o","outcome":"ok"}]`:                                 `line 1: more after the JSON object`,
	} {
		_, err := clientcheck.ParseOutcomes(strings.NewReader(input))
		require.ErrorContains(t, err, want, input)
	}
}

func TestOutcomeWriterRoundTrip(t *testing.T) {
	path := t.TempDir() + "/outcomes.jsonl"
	_, written, err := clientcheck.ReadOutcomeFile(path)
	require.NoError(t, err)
	require.False(t, written)

	w := clientcheck.NewOutcomeWriter(path)
	require.NoError(t, w.Write(clientcheck.Outcome{Operation: "order-1", Outcome: "ok"}))
	require.NoError(t, w.Write(clientcheck.Outcome{Operation: "order-1", Outcome: "unknown"}))
	got, written, err := clientcheck.ReadOutcomeFile(path)
	require.NoError(t, err)
	require.True(t, written)
	require.Len(t, got, 2)
}

func TestFailingResultCarriesTheOperationsTimeline(t *testing.T) {
	o := goodObservation()
	o.Attempts[1].Key = "k1-retry"
	o.Ledger["order-1"] = 2
	rec := verdicts(o)[clientcheck.IDKeyPerAttempt].Evidence.Record
	require.NotNil(t, rec)
	require.Equal(t, "order-1", rec.Entity)
	require.Len(t, rec.Journal, 2)
	require.Equal(t, map[string]int{verdict.LedgerOperation: 2}, rec.Ledger)
	require.Len(t, rec.History, 4, "the per-attempt view: invoke and answer of each attempt")
	require.Equal(t, outcome.ServerError, rec.History[1].Class)
	require.Equal(t, outcome.Success, rec.History[3].Class)
}

func TestOperationsDescribeEachOperationWithoutFailing(t *testing.T) {
	o := goodObservation()
	o.Outcomes = o.Outcomes[:1]
	ops := clientcheck.Operations(o)
	require.Len(t, ops, 2)
	require.Equal(t, "client/operation/order-1", ops[0].ScenarioID)
	require.Equal(t, verdict.Info, ops[0].Verdict)
	require.Equal(t, "2 attempt(s) under 1 key(s), 1 side effect(s), faults: after-status; answers: 503 (server_error), 201 (success); the client reported ok", ops[0].Message)
	require.Equal(t, "2 attempt(s) under 1 key(s), 1 side effect(s), faults: after-reset; answers: reset (info), 201 (success); the client reported nothing", ops[1].Message)
	require.Len(t, ops[1].Evidence.Record.Journal, 2)
	require.Empty(t, clientcheck.Findings(ops, true))
}

// An in-flight 409 leaves the operation open (the original may still commit): retried to
// a success it is resolved; given up there it is resolved only when reported unknown.
// retryablehttp's defaults do not retry a 409, so a client that forgets to is told.
func TestAnOperationLeftInFlightIsUnresolved(t *testing.T) {
	o := clientcheck.Observation{
		Attempts: []faultproxy.Record{
			attempt(1, "k1", "b1", 409, 0),
			attempt(2, "k1", "b1", 201, time.Second),
		},
		Entities: map[string]string{"b1": "order-1"},
		Ledger:   map[string]int{"order-1": 1},
	}
	require.Equal(t, verdict.Pass, verdicts(o)[clientcheck.IDLostResolved].Verdict)

	gaveUp := clientcheck.Observation{
		Attempts:        []faultproxy.Record{attempt(1, "k1", "b1", 409, 0)},
		Entities:        map[string]string{"b1": "order-1"},
		Ledger:          map[string]int{"order-1": 0},
		OutcomesWritten: true,
		Outcomes:        []clientcheck.Outcome{{Operation: "order-1", Outcome: clientcheck.OutcomeFailed}},
	}
	v := verdicts(gaveUp)[clientcheck.IDLostResolved]
	require.Equal(t, verdict.Fail, v.Verdict, v.Message)
	require.Contains(t, v.Evidence.Examples[0], "order-1: last attempt refused in flight (the original may still commit), client reported failed")
	gaveUp.Outcomes[0].Outcome = clientcheck.OutcomeUnknown
	require.Equal(t, verdict.Pass, verdicts(gaveUp)[clientcheck.IDLostResolved].Verdict)
}

// A command killed at the timeout may have been slow, not stuck: what it had not finished
// (its exit, an operation still being retried after a lost response and not yet reported)
// is UNKNOWN, never a FAIL. The same run that ended by itself is judged.
func TestTimeoutIsNotAFailure(t *testing.T) {
	o := goodObservation()
	o.Attempts = o.Attempts[:3] // order-2: its response lost, and no retry yet
	o.Outcomes = o.Outcomes[:1]
	o.ExitErr = "timed out after 2m0s"
	v := verdicts(o)
	require.Equal(t, verdict.Fail, v[clientcheck.IDCommandSucceeded].Verdict)
	require.Equal(t, verdict.Fail, v[clientcheck.IDLostResolved].Verdict)

	o.TimedOut = true
	v = verdicts(o)
	require.Equal(t, verdict.Unknown, v[clientcheck.IDCommandSucceeded].Verdict, v[clientcheck.IDCommandSucceeded].Message)
	require.Contains(t, v[clientcheck.IDCommandSucceeded].Message, "raise --timeout")
	require.Equal(t, verdict.Unknown, v[clientcheck.IDLostResolved].Verdict, v[clientcheck.IDLostResolved].Message)

	o.OutcomeErr = "line 2: unexpected end of JSON input"
	require.Equal(t, verdict.Unknown, verdicts(o)[clientcheck.IDOutcomeFile].Verdict, "killed mid-write, perhaps")
	o.OutcomeErr = ""

	// An operation the client did report, wrongly, is judged even after a timeout.
	o.Outcomes = append(o.Outcomes, clientcheck.Outcome{Operation: "order-2", Outcome: clientcheck.OutcomeFailed})
	require.Equal(t, verdict.Fail, verdicts(o)[clientcheck.IDLostResolved].Verdict)
}
