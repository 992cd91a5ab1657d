package clientcheck

import (
	"fmt"
	"time"

	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/profile"
)

// The checks of what an answer asks of the client beyond its class: a retry hint on any
// answer (Retry-After in seconds or as a date, Retry-After-Ms, a body hint), and the
// wait a held answer costs a client without a per-attempt timeout.
const (
	IDRetryAfterHonoured = "client/retry-after-honoured"
	IDAttemptTimeout     = "client/attempt-timeout"
)

// retryAfterCap is the cap a client may wait a hint at instead of the hint.
func (o *analysis) retryAfterCap() time.Duration {
	if o.RetryAfterCap > 0 {
		return o.RetryAfterCap
	}
	return profile.DefaultRetryAfterCap.Std()
}

// checkRetryAfterHonoured judges every answer but an in-flight refusal (that one is
// client/409-hammered's) that asked for a wait and was followed by a retry of its
// operation: the retry came no sooner than the hint, or the cap if shorter; and, where
// the profile declares the cap, no later than halfway from the cap to a longer hint (a
// client that waits an hour's Retry-After to the letter hangs its operation an hour).
func checkRetryAfterHonoured(o *analysis) conclusion {
	ops, attempts := o.byOperation()
	limit := o.retryAfterCap()
	f, judged := failing{}, 0
	for _, op := range ops {
		as := attempts[op]
		for i, r := range as[:max(len(as)-1, 0)] {
			hint, from, ok := o.retryAfterOf(r)
			if !ok || o.classOf(r) == outcome.InFlight {
				continue
			}
			judged++
			next := as[i+1]
			gap := next.Time.Sub(o.answeredOf(r))
			answer := fmt.Sprintf("%s: %s (%s) with %s %s at attempt %d", op, deliveredText(r), o.classOf(r), from, hint, o.attemptNo(op, r))
			switch want := min(hint, limit); {
			case gap+timingTolerance < want:
				f.addOp("retry-after-ignored", fmt.Sprintf("%s, retried %s later at attempt %d (want at least %s)", answer, gap.Round(timeMillis), o.attemptNo(op, next), want), o, op, as)
			case o.RetryAfterCapDeclared && hint > limit && gap > limit+(hint-limit)/2:
				f.addOp("retry-after-past-cap", fmt.Sprintf("%s, retried %s later at attempt %d: longer than retry_after_cap %s", answer, gap.Round(timeMillis), o.attemptNo(op, next), span(limit)), o, op, as)
			}
		}
	}
	if judged == 0 {
		return na("no answer that asked for a wait (Retry-After, Retry-After-Ms, a body hint; an in-flight refusal's is client/409-hammered's) was followed by a retry")
	}
	if f.count > 0 {
		what := "retried before the wait they asked for"
		switch {
		case f.categories["retry-after-ignored"] == 0:
			what = "waited longer than the declared retry_after_cap"
		case f.categories["retry-after-past-cap"] > 0:
			what += ", or waited longer than the declared retry_after_cap"
		}
		return f.fail("%d of %d answer(s) asking for a wait were %s (a client may cap a hint at %s)", f.count, judged, what, span(limit))
	}
	return pass("%d answer(s) asking for a wait, each retried after it (or after the %s cap)", judged, span(limit))
}

// checkAttemptTimeout judges the held answers: one held at least client_patience that
// the client waited out (the proxy released it, the client had neither given up nor
// retried) says the client has no per-attempt timeout worth the name: a lost answer
// hangs the operation until the transport gives up, if ever.
func checkAttemptTimeout(o *analysis) conclusion {
	patience := o.Patience
	if patience <= 0 {
		patience = profile.DefaultClientPatience.Std()
	}
	ops, attempts := o.byOperation()
	f, held, short, gaveUp := failing{}, 0, time.Duration(0), 0
	for _, op := range ops {
		for _, r := range attempts[op] {
			if r.Fault != faultproxy.FaultAfterHold {
				continue
			}
			waited := o.endOf(r).Sub(o.startOf(r))
			switch {
			case r.ClientResult == faultproxy.ClientTimedOut:
				held++
				gaveUp++
			case waited+timingTolerance < patience:
				short = max(short, waited) // released before the patience ran out: not judged
			default:
				held++
				f.addOp("no-attempt-timeout", fmt.Sprintf("%s: waited out a held answer for %s at attempt %d (client_patience %s) without giving up", op, waited.Round(timeMillis), o.attemptNo(op, r), span(patience)), o, op, attempts[op])
			}
		}
	}
	switch {
	case f.count > 0:
		return f.fail("no per-attempt timeout: %d held answer(s) were waited out past client_patience %s; a lost answer hangs such an operation until the transport gives up", f.count, span(patience))
	case held > 0:
		return pass("%d held answer(s), each given up on inside client_patience %s", gaveUp, span(patience))
	case short > 0:
		return na("the held answer was released after %s, before client_patience %s, and the client waited it out: whether it gives up inside the patience was not seen (the hold fits half the declared retention; a shorter client_patience judges it)", short.Round(timeMillis), span(patience))
	}
	return na("no answer was held")
}
