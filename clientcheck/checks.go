package clientcheck

import (
	"fmt"
	"slices"
	"strings"

	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/verdict"
)

// Check IDs: stable, like the catalogue's scenario IDs.
const (
	IDOneEffect        = "client/one-effect-per-operation"
	IDSameKeyOnRetry   = "client/same-key-on-retry"
	IDSamePayload      = "client/same-payload-on-retry"
	IDKeyPerAttempt    = "client/key-per-attempt"
	IDKeySharedAcross  = "client/key-shared-by-operations"
	IDNoKey            = "client/no-key"
	ID422Retried       = "client/422-retried"
	ID409Hammered      = "client/409-hammered"
	IDLostResolved     = "client/lost-response-resolved"
	IDUnknownAsFailed  = "client/unknown-reported-failed"
	IDOutcomeFile      = "client/outcome-file"
	IDCommandSucceeded = "client/command-exit"
	IDKeySurvives      = "client/key-survives-restart"
)

// maxExamples bounds the evidence per check so a report stays readable.
const maxExamples = 5

// conclusion is what one check concluded.
type conclusion struct {
	verdict    verdict.Verdict
	message    string
	categories map[string]int
	examples   []string
	record     *verdict.Record
}

func pass(msg string, a ...any) conclusion {
	return conclusion{verdict: verdict.Pass, message: fmt.Sprintf(msg, a...)}
}
func na(msg string, a ...any) conclusion {
	return conclusion{verdict: verdict.NA, message: fmt.Sprintf(msg, a...)}
}
func unknown(msg string, a ...any) conclusion {
	return conclusion{verdict: verdict.Unknown, message: fmt.Sprintf(msg, a...)}
}

// failing collects problems; fail turns them into a FAIL verdict.
type failing struct {
	categories map[string]int
	examples   []string
	count      int
	record     *verdict.Record // the first failing operation's attempts, for the timeline
}

func (f *failing) add(category, example string) {
	if f.categories == nil {
		f.categories = map[string]int{}
	}
	f.categories[category]++
	f.count++
	if len(f.examples) < maxExamples {
		f.examples = append(f.examples, example)
	}
}

// addOp records a problem of one operation; the first one's attempts become the
// result's record, which the reports render as a timeline.
func (f *failing) addOp(category, example string, o *analysis, op string, attempts []faultproxy.Record) {
	f.add(category, example)
	if f.record == nil {
		f.record = o.record(op, attempts)
	}
}

func (f *failing) fail(msg string, a ...any) conclusion {
	return conclusion{verdict: verdict.Fail, message: fmt.Sprintf(msg, a...), categories: f.categories, examples: f.examples, record: f.record}
}

// checkDef is one check: its catalogue data and its pure function.
type checkDef struct {
	id, description, requirement, source string
	level                                verdict.Level
	run                                  func(o *analysis) conclusion
	// appliesTo says whether the run is one the check judges (nil: every run).
	appliesTo func(o *analysis) bool
}

// checks is the explicit registry, in report order.
func checks() []checkDef {
	return []checkDef{
		{IDCommandSucceeded, "the code under test finished without error", "the client's own run succeeds", "client-check", verdict.LevelMust, checkCommand, nil},
		{IDOneEffect, "every logical operation has exactly one side effect", "one key per logical operation: at most one effect, and none lost", "idemproof safety invariants (README, Verdicts)", verdict.LevelSafety, checkOneEffect, nil},
		{IDRetryAfterRetention, "no retry reached the API after its declared retention", "size the window past the worst retry horizon: a retry after the key expired executes again", "seed rule \"size the window past the worst retry horizon\"; draft-ietf-httpapi-idempotency-key-header-07 §2.4", verdict.LevelMust, checkRetryAfterRetention,
			func(o *analysis) bool { return o.Retention > 0 && !o.KeyIgnored }},
		{IDBlindResend, "at an API that ignores keys, no operation was re-sent after a lost answer", "a lost answer is an unknown outcome: where the key protects nothing, a re-send may execute twice", "Jepsen info operations; expect.honours_key: false", verdict.LevelSafety, checkBlindResend,
			func(o *analysis) bool { return o.KeyIgnored }},
		{IDSameKeyOnRetry, "every retry of an operation re-sent the same key", "the key is minted before the first attempt and re-sent unchanged", "draft-ietf-httpapi-idempotency-key-header-07 §2", verdict.LevelMust, checkSameKey, nil},
		{IDSamePayload, "every retry under a key re-sent the same payload", "the request is re-sent unchanged with its key: another payload under it is a mismatch the target refuses, and the client never learns the first one's outcome", "draft-ietf-httpapi-idempotency-key-header-07 §2, §2.7", verdict.LevelMust, checkSamePayload, nil},
		{IDKeyPerAttempt, "the same payload was never re-sent under a fresh key", "a retry must not mint a new key (key minted per attempt)", "draft-ietf-httpapi-idempotency-key-header-07 §2", verdict.LevelSafety, checkKeyPerAttempt, nil},
		{IDKeySharedAcross, "one key never carried two operations", "a key identifies exactly one logical operation", "draft-ietf-httpapi-idempotency-key-header-07 §2", verdict.LevelMust, checkKeyShared, nil},
		{IDNoKey, "no attempt of the keyed operation went out without a key", "every keyed operation carries the key header", "draft-ietf-httpapi-idempotency-key-header-07 §2", verdict.LevelMust, checkNoKey, nil},
		{ID422Retried, "a mismatch answer (the profile's mismatch class, e.g. 422) was not retried unchanged", "the key was reused with another payload: a client bug, not retryable as is", "draft-ietf-httpapi-idempotency-key-header-07 §2.7", verdict.LevelMust, check422, nil},
		{ID409Hammered, "an in-flight answer (the profile's in_flight class, e.g. 409) was retried after Retry-After (or a backoff), not hammered", "an in-flight refusal (409) is retried later, honouring Retry-After", "draft-ietf-httpapi-idempotency-key-header-07 §2.7; RFC 9110 §10.2.3", verdict.LevelMust, check409, nil},
		{IDRetryAfterHonoured, "every other answer that asked for a wait (Retry-After, Retry-After-Ms, a body hint) was retried after it, or after the cap", "a retry hint says how long the client ought to wait, whatever the status; a client may cap it (retry_after_cap)", "RFC 9110 §10.2.3", verdict.LevelShould, checkRetryAfterHonoured, nil},
		{IDAttemptTimeout, "no held answer was waited out past client_patience", "an attempt has a timeout: a lost answer must not hang the operation", "client-check (client_patience)", verdict.LevelShould, checkAttemptTimeout, nil},
		{IDLostResolved, "an operation whose response was lost, or that was refused in flight, was retried to a known outcome, or reported unknown", "a lost response is an unknown outcome, never a silent give-up", "Jepsen info operations", verdict.LevelMust, checkLostResolved, nil},
		{IDUnknownAsFailed, "an operation that committed was never reported failed", "an unknown outcome is not a failure: the refund may exist", "idemproof safety invariants (README, Verdicts)", verdict.LevelSafety, checkUnknownAsFailed, nil},
		{IDOutcomeFile, "the client's outcome file parsed", "one JSON object per line: operation, outcome ok|failed|unknown", "docs/client-check.md", verdict.LevelMust, checkOutcomeFile, nil},
		{IDKeySurvives, "a restarted client retried its pending operation under the original key", "the key survives the client: minted before the first attempt, kept with the pending operation, re-sent after a restart", "seed rule \"the key survives the client\"; draft-ietf-httpapi-idempotency-key-header-07 §2", verdict.LevelSafety, checkKeySurvivesRestart,
			func(o *analysis) bool { return o.Schedule.Restart || len(o.Restarts) > 0 }},
		{IDVendorOnce, "every operation the target did once, its vendor did once", "the key deduplicates the API, not the internet: one vendor effect per committed operation, across retries and restarts", "seed rule \"the key deduplicates your API, not the internet\"", verdict.LevelSafety, checkVendorOnce,
			func(o *analysis) bool { return o.Vendor != nil }},
	}
}

func checkCommand(o *analysis) conclusion {
	if o.TimedOut {
		return unknown("the code under test was killed at the timeout (%s): a slow run and a stuck client cannot be told apart; raise --timeout", o.ExitErr)
	}
	if o.ExitErr != "" {
		f := failing{}
		f.add("exit", o.ExitErr)
		return f.fail("the code under test failed: %s", o.ExitErr)
	}
	return pass("the code under test finished without error")
}

func checkSameKey(o *analysis) conclusion {
	ops, attempts := o.byOperation()
	f, retried, unkeyed, restarted := failing{}, 0, 0, 0
	for _, op := range ops {
		if len(attempts[op]) < 2 {
			continue
		}
		retried++
		var keys []string
		keyless := 0
		for _, r := range attempts[op] {
			switch {
			case !r.HasKey:
				keyless++
			case !slices.Contains(keys, r.Key):
				keys = append(keys, r.Key)
			}
		}
		switch {
		case len(keys) > 1 && o.oneKeyPerLife(attempts[op]):
			restarted++ // changed only across restarts: client/key-survives-restart
		case len(keys) > 1:
			f.addOp("keys-changed", fmt.Sprintf("%s went out under %d keys", op, len(keys)), o, op, attempts[op])
		case len(keys) == 0:
			// No key to keep: the missing key is the cause, client/no-key's finding.
			unkeyed++
			retried--
		case keyless > 0:
			f.addOp("keys-changed", fmt.Sprintf("%s went out under a key and %d time(s) without one", op, keyless), o, op, attempts[op])
		}
	}
	elsewhere := ""
	if unkeyed > 0 {
		elsewhere = fmt.Sprintf("; %d retried without any key: client/no-key", unkeyed)
	}
	if restarted > 0 {
		elsewhere += fmt.Sprintf("; %d changed their key only across a restart of the client: client/key-survives-restart", restarted)
	}
	if retried == 0 {
		return na("no operation with a key was retried%s", elsewhere)
	}
	if f.count > 0 {
		return f.fail("%d of %d retried operation(s) changed the key between attempts%s", f.count, retried, elsewhere)
	}
	return pass("%d retried operation(s) kept one key%s", retried, elsewhere)
}

// payloadOf is an attempt's payload: the body without the key where the proxy read the
// key from the body, else the body as received (SHA-256, hex).
func (o *analysis) payloadOf(r faultproxy.Record) string {
	if d, ok := o.Delivered[r.Seq]; ok && d.Payload != "" {
		return d.Payload
	}
	return r.BodySHA256
}

func checkSamePayload(o *analysis) conclusion {
	ops, attempts := o.byOperation()
	f, resent := failing{}, 0
	for _, op := range ops {
		sent := map[string]int{}          // attempts per key
		payloads := map[string][]string{} // distinct payloads per key
		var keys []string                 // in first-use order
		for _, r := range attempts[op] {
			if !r.HasKey {
				continue
			}
			if sent[r.Key] == 0 {
				keys = append(keys, r.Key)
			}
			sent[r.Key]++
			if p := o.payloadOf(r); !slices.Contains(payloads[r.Key], p) {
				payloads[r.Key] = append(payloads[r.Key], p)
			}
		}
		var changed []string
		for _, k := range keys {
			if sent[k] < 2 {
				continue
			}
			resent++
			if len(payloads[k]) > 1 {
				changed = append(changed, fmt.Sprintf("%s with %d different payloads", shorten(k, 24), len(payloads[k])))
			}
		}
		if len(changed) > 0 {
			f.addOp("payload-changed", fmt.Sprintf("%s re-sent key %s", op, strings.Join(changed, ", key ")), o, op, attempts[op])
		}
	}
	if resent == 0 {
		return na("no key was re-sent")
	}
	if f.count > 0 {
		return f.fail("%d operation(s) re-sent a key with another payload: the target refuses it as a mismatch, and the first attempt's outcome stays unknown", f.count)
	}
	return pass("%d re-sent key(s), each with one payload", resent)
}

func checkKeyPerAttempt(o *analysis) conclusion {
	_, attempts := o.byOperation()
	// The payload is the body without the key: where the key travels in the body, a
	// fresh key changes the body and nothing else.
	bySeq := map[uint64]faultproxy.Record{}
	payloads := make([]faultproxy.Record, len(o.Attempts))
	for i, r := range o.Attempts {
		bySeq[r.Seq] = r
		r.BodySHA256 = o.payloadOf(r)
		payloads[i] = r
	}
	fresh := faultproxy.FreshKeyRetries(payloads)
	if len(fresh) == 0 {
		if len(o.Attempts) < 2 {
			return na("no payload was sent twice")
		}
		return pass("no payload was re-sent under a fresh key")
	}
	f, acrossRestarts := failing{}, 0
	for _, p := range fresh {
		op := o.operationOf(bySeq[p.Seqs[0]])
		if o.oneKeyPerLife(attempts[op]) {
			acrossRestarts++ // a new key only after each restart: client/key-survives-restart's cause
			continue
		}
		f.addOp("key-minted-per-attempt", fmt.Sprintf("%s: the same payload under %d keys", op, len(p.Keys)), o, op, attempts[op])
	}
	elsewhere := ""
	if acrossRestarts > 0 {
		elsewhere = fmt.Sprintf("; %d payload(s) got a fresh key only after a restart of the client: the key was kept, but not across the restart: client/key-survives-restart", acrossRestarts)
	}
	if f.count == 0 {
		return na("no payload was re-sent under a fresh key within one life of the client%s", elsewhere)
	}
	return f.fail("key minted per attempt: %d payload(s) retried under a fresh key%s", f.count, elsewhere)
}

// oneKeyPerLife reports whether a run with restarts kept one key per life of the client:
// every key change in the attempts falls on a restart (a key kept only in memory).
func (o *analysis) oneKeyPerLife(as []faultproxy.Record) bool {
	if len(o.Restarts) == 0 {
		return false
	}
	life := func(r faultproxy.Record) int {
		n := 0
		for _, rs := range o.Restarts {
			if o.startOf(r).After(rs.At) {
				n++
			}
		}
		return n
	}
	keyOf := map[int]string{}
	for _, r := range as {
		if !r.HasKey {
			continue
		}
		l := life(r)
		if k, ok := keyOf[l]; ok && k != r.Key {
			return false
		}
		keyOf[l] = r.Key
	}
	return true
}

func checkKeyShared(o *analysis) conclusion {
	keys, byKey := faultproxy.AttemptsByKey(o.Attempts)
	if len(keys) == 0 {
		return na("no keyed attempt")
	}
	f := failing{}
	for _, k := range keys {
		var ops []string
		for _, r := range byKey[k] {
			if op := o.operationOf(r); !slices.Contains(ops, op) {
				ops = append(ops, op)
			}
		}
		if len(ops) > 1 {
			f.add("key-reused", fmt.Sprintf("key %s carried %s", shorten(k, 24), strings.Join(ops, ", ")))
		}
	}
	if f.count > 0 {
		return f.fail("%d key(s) carried more than one operation", f.count)
	}
	return pass("%d key(s), one operation each", len(keys))
}

// checkNoKey judges the operations that never carried a key: one finding with its
// consequences under it (retried without a key, executed more than once), since the
// missing key is their one cause. An attempt without a key in an operation that carried
// one elsewhere is a key dropped on retry: client/same-key-on-retry's. Where the API
// runs a request without a key (expect.missing_key: optional) only a retry makes the
// missing key a defect.
func checkNoKey(o *analysis) conclusion {
	if len(o.Attempts) == 0 {
		return na("no attempt")
	}
	ops, attempts := o.byOperation()
	f, unkeyed, retried, duplicated, sent := failing{}, 0, 0, 0, 0
	for _, op := range ops {
		as := attempts[op]
		if !o.causeOf(op).keyless {
			continue
		}
		unkeyed++
		sent += len(as)
		n, counted := o.Ledger[op]
		consequence := "sent once"
		if len(as) > 1 {
			retried++
			consequence = fmt.Sprintf("retried without a key (%d attempts)", len(as))
		}
		switch {
		case counted && n > 1:
			duplicated++
			consequence += fmt.Sprintf(", %d side effects: the API could not tell the retry from a new operation", n)
		case counted:
			consequence += fmt.Sprintf(", %d side effect(s)", n)
		}
		if o.KeyOptional && len(as) < 2 {
			continue // the API needs no key, and nothing was retried
		}
		f.addOp("no-key", fmt.Sprintf("%s: no key on any attempt; %s", op, consequence), o, op, as)
	}
	switch {
	case unkeyed == 0:
		return pass("every operation carried a key (%d attempt(s))", len(o.Attempts))
	case f.count == 0:
		return pass("%d operation(s) sent without a key, none retried: the API runs a request without one (expect.missing_key: optional)", unkeyed)
	}
	msg := fmt.Sprintf("sends no key: %d of %d operation(s) went out without an idempotency key (%d attempt(s))", f.count, len(ops), sent)
	if retried > 0 {
		msg += fmt.Sprintf("; %d retried without one", retried)
	}
	if duplicated > 0 {
		msg += fmt.Sprintf(", %d of them executed more than once", duplicated)
	}
	return f.fail("%s", msg)
}

func check422(o *analysis) conclusion {
	_, byKey := faultproxy.AttemptsByKey(o.Attempts)
	f, seen, faulted := failing{}, 0, false
	for _, attempts := range byKey {
		for i, r := range attempts {
			if o.classOf(r) != outcome.Mismatch {
				continue
			}
			seen++
			for _, later := range attempts[i+1:] {
				if o.payloadOf(later) == o.payloadOf(r) {
					faulted = faulted || r.Fault == faultproxy.FaultBeforeStatus
					op := o.operationOf(r)
					f.addOp("422-retried", fmt.Sprintf("%s: mismatch (%d) at attempt %d, the same request again at attempt %d",
						op, r.ClientStatus, o.attemptNo(op, r), o.attemptNo(op, later)), o, op, o.attempts[op])
					break
				}
			}
		}
	}
	if seen == 0 {
		return na("no mismatch answer was delivered")
	}
	if f.count > 0 {
		return f.fail("%d of %d mismatch answer(s) were retried unchanged%s", f.count, seen, o.standInNote(faulted, "expect.mismatch_body"))
	}
	return pass("%d mismatch answer(s), none retried unchanged", seen)
}

func check409(o *analysis) conclusion {
	_, byKey := faultproxy.AttemptsByKey(o.Attempts)
	f, retried, faulted := failing{}, 0, false
	for _, attempts := range byKey {
		for i, r := range attempts {
			if o.classOf(r) != outcome.InFlight || i+1 == len(attempts) {
				continue
			}
			retried++
			next := attempts[i+1]
			want, why, hasRetryAfter := o.retryAfterOf(r)
			if !hasRetryAfter {
				want, why = o.MinBackoff, "backoff"
				if want == 0 {
					want = DefaultMinBackoff
				}
			}
			if gap := next.Time.Sub(o.answeredOf(r)); gap+timingTolerance < want {
				faulted = faulted || r.Fault == faultproxy.FaultBeforeStatus
				op := o.operationOf(r)
				f.addOp("409-hammered", fmt.Sprintf("%s: in flight (%d) at attempt %d, retried %s later at attempt %d (%s %s)",
					op, r.ClientStatus, o.attemptNo(op, r), gap.Round(timeMillis), o.attemptNo(op, next), why, want), o, op, o.attempts[op])
			}
		}
	}
	if retried == 0 {
		return na("no in-flight answer was followed by a retry")
	}
	if f.count > 0 {
		return f.fail("%d of %d in-flight answer(s) retried before the wait they asked for (Retry-After, a retry hint in the body) or a backoff%s", f.count, retried, o.standInNote(faulted, "expect.in_flight_body"))
	}
	return pass("%d in-flight answer(s) retried after the wait they asked for (Retry-After, a retry hint in the body) or a backoff", retried)
}

func checkLostResolved(o *analysis) conclusion {
	ops, attempts := o.byOperation()
	f, lost, cutOff, retriedOK, surfaced := failing{}, 0, 0, 0, 0
	for _, op := range ops {
		as := attempts[op]
		lostAt := slices.IndexFunc(as, func(r faultproxy.Record) bool { return unsettled(o.classOf(r)) })
		if lostAt < 0 {
			continue
		}
		lost++
		if slices.ContainsFunc(as[lostAt:], func(r faultproxy.Record) bool { return knownOutcome(o.classOf(r)) }) {
			retriedOK++
			continue // retried to a known outcome
		}
		if oc, ok := o.outcomeOf(op); ok && oc.Outcome == OutcomeUnknown {
			surfaced++
			continue // surfaced as unknown
		}
		reported := "nothing"
		if oc, ok := o.outcomeOf(op); ok {
			reported = oc.Outcome
		} else if o.TimedOut {
			cutOff++ // still retrying, or about to report, when the timeout killed it
			continue
		}
		last := "last attempt without a known outcome"
		switch final := as[len(as)-1]; {
		case o.classOf(final) == outcome.InFlight && !final.ReachedUpstream:
			// The proxy's own 409 stood in for the target's: no original runs.
			last = "last attempt refused in flight (the fault's refusal: what the API answers while an attempt under the key runs, which may still commit)"
		case o.classOf(final) == outcome.InFlight:
			last = "last attempt refused in flight (the original may still commit)"
		case o.noRetryOf(final) != "":
			// The API's answer asked for no retry, and the SDK obeyed: right by its
			// contract with the API, but the operation may have committed.
			last = fmt.Sprintf("gave up on a %s that said %s (obeying it is right, but the operation may have committed: report it unknown)", deliveredText(final), o.noRetryOf(final))
		}
		f.addOp("unresolved", fmt.Sprintf("%s: %s, client reported %s", op, last, reported), o, op, as)
	}
	if lost == 0 {
		return na("no response was lost and no attempt was refused in flight")
	}
	if f.count > 0 {
		return f.fail("%d of %d operation(s) with a lost or in-flight answer neither reached a known outcome nor were reported unknown", f.count, lost)
	}
	if cutOff > 0 {
		return unknown("%d of %d operation(s) with a lost or in-flight answer were still unresolved, and unreported, when the timeout killed the code under test", cutOff, lost)
	}
	switch {
	case surfaced == 0:
		return pass("%d operation(s) with a lost or in-flight answer, each retried to a known outcome", lost)
	case retriedOK == 0:
		return pass("%d operation(s) with a lost or in-flight answer, each reported unknown (none retried to a known outcome)", lost)
	}
	return pass("%d operation(s) with a lost or in-flight answer: %d retried to a known outcome, %d reported unknown", lost, retriedOK, surfaced)
}

func checkUnknownAsFailed(o *analysis) conclusion {
	if !o.OutcomesWritten || o.OutcomeErr != "" {
		return na("no outcome file: the client's view is unknown (write $IDEMPROOF_OUTCOME_FILE to enable)")
	}
	if o.LedgerErr != "" {
		return unknown("ledger unreadable: %s", o.LedgerErr)
	}
	_, attempts := o.byOperation()
	f, failed := failing{}, 0
	for _, op := range o.allOperations() {
		oc, ok := o.outcomeOf(op)
		if !ok || oc.Outcome != OutcomeFailed {
			continue
		}
		failed++
		if n := o.Ledger[op]; n > 0 {
			why := ""
			if as := attempts[op]; len(as) > 0 && o.noRetryOf(as[len(as)-1]) != "" {
				why = fmt.Sprintf(" (its last answer, a %s, said %s: no retry, but not that nothing happened)", deliveredText(as[len(as)-1]), o.noRetryOf(as[len(as)-1]))
			}
			f.addOp("committed-reported-failed", fmt.Sprintf("%s reported failed, but %d side effect(s) exist%s", op, n, why), o, op, attempts[op])
		}
	}
	if f.count > 0 {
		return f.fail("%d operation(s) reported failed while they committed", f.count)
	}
	if failed == 0 {
		return pass("no operation was reported failed")
	}
	return pass("%d operation(s) reported failed, none of them committed", failed)
}

func checkOutcomeFile(o *analysis) conclusion {
	switch {
	case !o.OutcomesWritten:
		return na("the client wrote no outcome file")
	case o.OutcomeErr != "" && o.TimedOut:
		return unknown("the outcome file did not parse (%s), and the timeout killed the code under test, perhaps while it wrote it", o.OutcomeErr)
	case o.OutcomeErr != "":
		f := failing{}
		f.add("invalid", o.OutcomeErr)
		return f.fail("%s", o.OutcomeErr)
	}
	ops, _ := o.byOperation()
	var missing []string
	for _, op := range ops {
		if _, ok := o.outcomeOf(op); !ok && !strings.HasPrefix(op, "body:") {
			missing = append(missing, op)
		}
	}
	if len(missing) > 0 {
		return pass("%d outcome(s); not reported: %s", len(o.Outcomes), strings.Join(missing, ", "))
	}
	return pass("%d outcome(s)", len(o.Outcomes))
}

func checkKeySurvivesRestart(o *analysis) conclusion {
	if len(o.Restarts) == 0 {
		return na("the client was never restarted: no keyed attempt lost its response after the commit")
	}
	f, kept, forgotten := failing{}, 0, 0
	for _, rs := range o.Restarts {
		all := o.attempts[rs.Operation]
		var after []string
		for _, r := range all {
			if o.startOf(r).After(rs.At) && !slices.Contains(after, r.Key) {
				after = append(after, r.Key)
			}
		}
		switch {
		case len(after) == 0:
			forgotten++
		case len(after) == 1 && after[0] == rs.Key:
			kept++
		default:
			var changed []string
			for _, k := range after {
				if k != rs.Key {
					changed = append(changed, shorten(orNone(k), 24))
				}
			}
			consequence := ""
			if n, ok := o.Ledger[rs.Operation]; ok && o.LedgerErr == "" {
				consequence = fmt.Sprintf(": %d side effect(s)", n)
			}
			f.addOp("key-changed-across-restart", fmt.Sprintf("%s: killed after an attempt under %s, retried after the restart under %s%s",
				rs.Operation, shorten(rs.Key, 24), strings.Join(changed, ", "), consequence), o, rs.Operation, all)
		}
	}
	if f.count > 0 {
		return f.fail("%d of %d restarted operation(s) were retried under another key after the restart: the key did not survive the client", f.count, len(o.Restarts))
	}
	if kept == 0 {
		return unknown("the restarted client never re-sent the %d operation(s) it was killed in: whether their key survives is unknown", forgotten)
	}
	if forgotten > 0 {
		return pass("%d restarted operation(s) resumed under their original key; %d never re-sent", kept, forgotten)
	}
	return pass("%d restarted operation(s) resumed under their original key", kept)
}

// attemptNo is r's number among its operation's attempts, as the attempts table under a
// finding numbers them (1, 2, …), not the journal's sequence number.
func (o *analysis) attemptNo(op string, r faultproxy.Record) int {
	for i, a := range o.attempts[op] {
		if a.Seq == r.Seq {
			return i + 1
		}
	}
	return 0
}
