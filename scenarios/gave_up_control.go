package scenarios

import (
	"maps"
	"slices"
	"time"

	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/verdict"
)

// The steps of recovery/client-gave-up's control key: held as long as the original from
// the same moment, with a client that waits it out, and repeated after the retry.
const (
	gaveUpControl       = "control"
	gaveUpControlRepeat = "control-repeat"
)

// A retry that executed again after its client gave up may have reached the target past
// the declared retention, where a new execution is allowed: with a retention shorter
// than the scenario's hold, two effects prove nothing by themselves. The control key
// tells the two apart. It was sent first, held as long, its client stayed, and it was
// repeated later after its own send than the retry came after the original's: its
// record was older when its repeat came than the key's was when the retry came, and
// still answered if the control replayed. Both keys met the same target with the same
// hold, the client's leaving their one difference, so the scenario's own record had not
// expired either when the retry came, and the second execution is the key's, lost with
// the client that left. A control that executed anew says this target's records may be
// gone by then: still UNKNOWN.

// gaveUpThenOnce judges recovery/client-gave-up: the scenario's own key by gaveUpJudged,
// the control key where two effects were allowed only by the retention.
func gaveUpThenOnce(r verdict.Record, p *profile.Profile) (verdict.Verdict, string, verdict.Evidence) {
	ctrl := readGaveUpControl(r, p)
	own := withoutSteps(r, gaveUpControl, gaveUpControlRepeat)
	if r.LedgerErr != "" || !p.SideEffects.Global() {
		return ctrl.decide(own, p, gaveUpJudged)
	}
	// A global ledger counts the control's effects with the key's: one if its repeat
	// replayed, two if it executed again. Unknown, the verdict must hold both ways.
	n := r.Ledger[verdict.LedgerOperation]
	charges := []int{1, 2}
	switch {
	case ctrl.replayed:
		charges = []int{1}
	case ctrl.executed:
		charges = []int{2}
	}
	var v verdict.Verdict
	var msg string
	var ev verdict.Evidence
	for i, c := range charges {
		mine := own
		mine.Ledger = maps.Clone(own.Ledger)
		mine.Ledger[verdict.LedgerOperation] = max(n-c, 0)
		cv, cmsg, cev := ctrl.decide(mine, p, gaveUpJudged)
		if i > 0 && cv != v {
			var f finding
			return f.result(verdict.Unknown, "the global ledger counts the control key's side effects with this key's (%d in all), and whether the control's repeat executed again cannot be told from its answer: this key's count is not known", n)
		}
		v, msg, ev = cv, cmsg, cev
	}
	return v, msg, ev
}

// gaveUpControlSeen is what the control key showed.
type gaveUpControlSeen struct {
	ran                bool
	first, repeat      verdict.Op
	replayed, executed bool
	sentAt             time.Time // the control repeat's send
	startedAt          time.Time // the control's first send
}

func readGaveUpControl(r verdict.Record, p *profile.Profile) gaveUpControlSeen {
	first, ok1 := stepAnswer(r, gaveUpControl)
	repeat, ok2 := stepAnswer(r, gaveUpControlRepeat)
	c := gaveUpControlSeen{ran: ok1 && ok2, first: first, repeat: repeat}
	if !c.ran || !isSuccess(first) || !isSuccess(repeat) || r.LedgerErr != "" {
		return c
	}
	c.sentAt, _ = stepInvokedAt(r, gaveUpControlRepeat)
	c.startedAt, _ = stepInvokedAt(r, gaveUpControl)
	same := sameResponse(p, first, repeat) || sameUnique(p, first, repeat) || (replayMarked(repeat, p) && !replayMarked(first, p))
	ownID := false
	if ua, ok := uniqueValue(p, first.Body); ok {
		if ub, ok := uniqueValue(p, repeat.Body); ok && ua != ub {
			ownID = true
		}
	}
	if p.SideEffects.Global() {
		// Only the answers tell: a replay, or a response with an id of its own.
		c.replayed, c.executed = same && !ownID, ownID
		return c
	}
	n := r.Ledger[verdict.LedgerOtherEntity]
	c.replayed = n == 1 && same && !ownID
	c.executed = n >= 2 || ownID
	return c
}

// decide judges the key's own record, and, where only the retention allowed its second
// effect, lets the control tell an expired record from a key lost with its client.
func (c gaveUpControlSeen) decide(own verdict.Record, p *profile.Profile, judge Checker) (verdict.Verdict, string, verdict.Evidence) {
	v, msg, ev := judge(own, p)
	n := own.Ledger[verdict.LedgerOperation]
	if own.LedgerErr != "" || v == verdict.Fail || n < 2 || n > allowedEffects(own, p) {
		return v, msg, ev
	}
	f := finding{ev: ev}
	start, _ := firstInvoke(own)
	retryAt, _ := stepInvokedAt(own, "retry")
	after := func(d time.Duration) string { return roundDuration(d).String() }
	// The control's record must have been at least as old when its repeat came as the
	// key's was when the retry came.
	retryAfter, controlAfter := retryAt.Sub(start), c.sentAt.Sub(c.startedAt)
	older := controlAfter >= retryAfter
	switch {
	case !c.ran:
		return v, msg, ev
	case c.replayed && older:
		f.count(verdict.CatDuplicated, n-1)
		f.example("the retry, sent %s after the original, executed again; the control key's repeat, sent %s after its own first request, replayed its response", after(retryAfter), after(controlAfter))
		if retry, ok := stepAnswer(own, "retry"); ok {
			f.blame(retry, "the committed response of the work its client left, no second execution")
		}
		return f.result(verdict.Fail, "the client gave up after %s while the work was held, and its key executed again: %d side effects for one key. The retry (sent %s after the original) may have come after the declared %s retention, but a key held as long whose client stayed still replayed %s after its first request: no record had expired, so the key was lost with the client that left (a lock or lease released when the client went, the work kept)",
			p.ClientTimeout, n, after(retryAfter), p.Retention, after(controlAfter))
	case c.executed:
		return f.result(verdict.Unknown, "%s; a key held as long whose client stayed was not replayed either %s after its first request (it executed again): this target's records may be gone by then, so the retention may have allowed it", msg, after(controlAfter))
	}
	return f.result(verdict.Unknown, "%s; the control key held as long, whose client stayed, got %s, then %s: whether records outlive the scenario cannot be told", msg, describe(c.first), describe(c.repeat))
}

// withoutSteps is the record without the named steps' attempts and their keys' journal
// records: a control's, judged apart.
func withoutSteps(r verdict.Record, steps ...string) verdict.Record {
	keys := map[string]bool{}
	out := r
	out.History = nil
	for _, op := range r.History {
		if slices.Contains(steps, op.Step) {
			if op.Key != "" {
				keys[op.Key] = true
			}
			continue
		}
		out.History = append(out.History, op)
	}
	for _, op := range out.History {
		delete(keys, op.Key) // a key the rest also used stays
	}
	out.Journal = nil
	for _, j := range r.Journal {
		if !keys[j.Key] {
			out.Journal = append(out.Journal, j)
		}
	}
	out.Ledger = maps.Clone(r.Ledger)
	return out
}
