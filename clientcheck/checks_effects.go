package clientcheck

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/verdict"
)

// Checks of an operation's side effects whose cause is not the client's key discipline:
// a retry that reached the API after its declared retention (the window, not the client,
// let it execute again), and, at an API that ignores keys, a blind re-send.
const (
	IDRetryAfterRetention = "client/retry-after-retention"
	IDBlindResend         = "client/blind-resend"
)

// effectCause is why an operation has the side effects it has, as far as the journal
// tells: how many the declared retention allows for its attempts, and the retry that
// came latest after its original.
type effectCause struct {
	// windows is the number of retention windows its attempts under one key opened: an
	// attempt that left for the API more than the retention after the one that opened
	// the current window opens a new one, where the API rightly executes anew.
	windows int
	// late is the first attempt that opened a new window; horizon is how long after the
	// operation's first attempt it came.
	late    *faultproxy.Record
	horizon time.Duration
	// keyless: no attempt of the operation carried a key (client/no-key's).
	keyless bool
	// rekeyedByRestart: its key changed, and only across restarts of the client
	// (client/key-survives-restart's).
	rekeyedByRestart bool
}

// distinctKeys are the keys of attempts, in first-use order.
func distinctKeys(as []faultproxy.Record) []string {
	var keys []string
	for _, r := range as {
		if r.HasKey && !slices.Contains(keys, r.Key) {
			keys = append(keys, r.Key)
		}
	}
	return keys
}

// forwardedAt is when an attempt left the proxy for the API (its arrival when it never
// did).
func forwardedAt(r faultproxy.Record) time.Time {
	return r.Time.Add(time.Duration(r.ForwardedAfterMillis * float64(time.Millisecond)))
}

// causeOf reads an operation's attempts for the causes its effects may have.
func (o *analysis) causeOf(op string) effectCause {
	as := o.attempts[op]
	c := effectCause{windows: 1, keyless: len(as) > 0, rekeyedByRestart: o.oneKeyPerLife(as) && len(distinctKeys(as)) > 1}
	var opened *faultproxy.Record
	for i := range as {
		r := as[i]
		if r.HasKey {
			c.keyless = false
		}
		if !r.ReachedUpstream || o.Retention <= 0 {
			continue
		}
		switch {
		case opened == nil:
			opened = &as[i]
		case r.HasKey && r.Key == opened.Key && forwardedAt(r).Sub(forwardedAt(*opened)) > o.Retention:
			// An API may count its retention from the original's start: past that, the
			// retry may find the key gone.
			c.windows++
			if c.late == nil {
				c.late, c.horizon = &as[i], forwardedAt(r).Sub(o.startOf(as[0]))
			}
			opened = &as[i]
		}
	}
	return c
}

func checkOneEffect(o *analysis) conclusion {
	if len(o.Attempts) == 0 {
		return unknown("the client made no request to the keyed operation: check that it uses $IDEMPROOF_BASE_URL")
	}
	if o.LedgerErr != "" {
		return unknown("ledger unreadable: %s", o.LedgerErr)
	}
	_, attempts := o.byOperation()
	f := failing{}
	once, none, earlier, counted, unnamed, late, keyless, rekeyed, apis := 0, 0, 0, 0, 0, 0, 0, 0, 0
	for _, op := range o.allOperations() {
		if strings.HasPrefix(op, "body:") {
			unnamed++ // no entity: no ledger to count
			continue
		}
		counted++
		n := o.Ledger[op]
		oc, reported := o.outcomeOf(op)
		cause := o.causeOf(op)
		switch {
		case n > 1 && o.KeyIgnored:
			apis++ // the API executes every request: client/blind-resend judges the client
		case n > 1 && cause.keyless:
			keyless++ // sent without a key: client/no-key lists it with its cause
		case n > 1 && cause.rekeyedByRestart:
			rekeyed++ // a new key after a restart: client/key-survives-restart lists it
		case n > 1 && n <= cause.windows:
			late++ // executed again after the retention: client/retry-after-retention
		case n > 1:
			f.addOp(verdict.CatDuplicated, fmt.Sprintf("%s has %d side effects", op, n), o, op, attempts[op])
		case n == 0 && o.LedgerBefore[op] > 0:
			// Its key was used by an earlier run against the same target, which took
			// effect then: this run's answers were the replays a kept key should get.
			earlier++
		case n == 0 && reported && oc.Outcome == OutcomeOK:
			f.addOp(verdict.CatLost, fmt.Sprintf("%s reported ok but has no side effect", op), o, op, attempts[op])
		case n == 0:
			none++
		default:
			once++
		}
	}
	elsewhere := ""
	if keyless > 0 {
		elsewhere += fmt.Sprintf("; %d operation(s) sent without a key took effect more than once: client/no-key, their cause", keyless)
	}
	if rekeyed > 0 {
		elsewhere += fmt.Sprintf("; %d took effect more than once under a key that changed across a restart of the client: client/key-survives-restart, their cause", rekeyed)
	}
	if late > 0 {
		elsewhere += fmt.Sprintf("; %d took effect again after the declared retention (%s): client/retry-after-retention", late, span(o.Retention))
	}
	if apis > 0 {
		elsewhere += fmt.Sprintf("; %d took effect more than once at an API that ignores keys (expect.honours_key: false): the API's duplicates, the client's share is client/blind-resend", apis)
	}
	if f.count > 0 {
		return f.fail("%d operation(s) without exactly one side effect (%d duplicated, %d lost)%s",
			f.count, f.categories[verdict.CatDuplicated], f.categories[verdict.CatLost], elsewhere)
	}
	if counted == 0 {
		return unknown("no attempt named an operation the profile's entity (%s) finds, so no side effect could be counted (%d operation(s) told apart by their bodies only): point entity at the field or header that names the operation", o.EntityRef, unnamed)
	}
	if keyless+rekeyed+late+apis == counted {
		return na("every operation's extra effects are judged under their cause%s", elsewhere)
	}
	msg := fmt.Sprintf("%d operation(s), each took effect exactly once", once)
	if none > 0 || earlier > 0 || elsewhere != "" {
		msg = fmt.Sprintf("%d operation(s) took effect once", once)
	}
	if earlier > 0 {
		msg += fmt.Sprintf("; %d had taken effect before this run (the ledger counted it before their first attempt) and took none again", earlier)
	}
	if none > 0 {
		msg += fmt.Sprintf("; %d never took effect and were not reported ok", none)
	}
	if unnamed > 0 {
		msg += fmt.Sprintf("; %d operation(s) named no entity and were not counted", unnamed)
	}
	return pass("%s%s", msg, elsewhere)
}

// checkRetryAfterRetention names the operations that took effect again because a retry
// reached the API after its declared retention: the client's retry horizon outlives the
// window, and one of the two must be sized past the other. Not the client's duplicate.
func checkRetryAfterRetention(o *analysis) conclusion {
	if o.LedgerErr != "" {
		return unknown("ledger unreadable: %s", o.LedgerErr)
	}
	ops, attempts := o.byOperation()
	f, longest := failing{}, time.Duration(0)
	for _, op := range ops {
		n := o.Ledger[op]
		cause := o.causeOf(op)
		if n < 2 || n > cause.windows || cause.keyless || o.KeyIgnored {
			continue
		}
		longest = max(longest, cause.horizon)
		f.addOp("retry-after-retention", fmt.Sprintf("%s: its retry reached the API %s after its first attempt (attempt %d), past the declared retention %s, and executed again: %d side effects",
			op, cause.horizon.Round(timeMillis), o.attemptNo(op, *cause.late), span(o.Retention), n), o, op, attempts[op])
	}
	if f.count > 0 {
		return f.fail("the client's retry horizon, %s, outlives the API's retention, %s: %d operation(s) executed again after their key expired; size one past the other (a longer retention, or retries that end sooner)",
			span(longest.Round(timeMillis)), span(o.Retention), f.count)
	}
	return pass("every retry reached the API inside the declared retention (%s)", span(o.Retention))
}

// checkBlindResend judges a client of an API that ignores keys: re-sending an operation
// after an answer that was lost (reset, timeout, 5xx) executes it again whenever the
// lost one had committed, which the client cannot know. It should report the operation
// unknown, or look before it re-sends.
func checkBlindResend(o *analysis) conclusion {
	ops, attempts := o.byOperation()
	f, lost := failing{}, 0
	for _, op := range ops {
		as := attempts[op]
		if slices.ContainsFunc(as, func(r faultproxy.Record) bool { return responseLost(o.classOf(r)) }) {
			lost++
		}
		for i, r := range as[:max(len(as)-1, 0)] {
			if !responseLost(o.classOf(r)) {
				continue
			}
			f.addOp("blind-resend", fmt.Sprintf("%s: re-sent at attempt %d after a lost answer at attempt %d (%s); %d side effect(s)",
				op, o.attemptNo(op, as[i+1]), o.attemptNo(op, r), deliveredText(r), o.Ledger[op]), o, op, as)
			break
		}
	}
	if lost == 0 {
		return na("no answer was lost")
	}
	if f.count > 0 {
		return f.fail("%d operation(s) re-sent after a lost answer to an API that ignores keys (expect.honours_key: false): each re-send executes again if the lost attempt committed; report the operation unknown, or look before re-sending", f.count)
	}
	return pass("%d lost answer(s), none re-sent blindly to an API that ignores keys", lost)
}
