package scenarios

import (
	"fmt"
	"sort"
	"time"

	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/verdict"
)

// The race scenarios hold the work with the profile's slow_operation hook, and their
// checkers reason from the hold: a repeat sent a quarter into it reached the target
// before the original could have committed. That holds only if the target applied the
// hook. The journal says whether it did: a request carrying the hook whose exchange the
// target answered well inside the hold (under three quarters of it) was not held, and
// nothing timed from the hold is then proven.

// forwardedAt is when a record's request left the proxy for the target (its receipt
// when the proxy recorded no forwarding time).
func forwardedAt(j faultproxy.Record) time.Time {
	return j.Time.Add(millisDuration(j.ForwardedAfterMillis))
}

// heldShort reports whether the target answered a record's exchange well inside the
// declared hold, the time it took, and the hold (0: none declared).
func heldShort(j faultproxy.Record, p *profile.Profile) (took, hold time.Duration, short bool) {
	hold, took = slowHold(p), millisDuration(j.UpstreamMillis)
	return took, hold, hold > 0 && j.ReachedUpstream && took < hold*3/4
}

// repeatRecord is the journal record of the in-flight scenarios' repeat: the request the
// proxy delayed before forwarding it.
func repeatRecord(r verdict.Record) (faultproxy.Record, bool) {
	for _, j := range r.Journal {
		if j.Fault == faultproxy.FaultBeforeDelay && j.ReachedUpstream {
			return j, true
		}
	}
	return faultproxy.Record{}, false
}

// originalNotHeld reports whether the in-flight scenarios' original reached the target
// first and was answered well inside the declared hold: the slow hook did not hold it,
// so the repeat met no running original (and one answered that fast did not "go
// second" either: the repeat's record left the proxy after it). The message says so.
func originalNotHeld(r verdict.Record, p *profile.Profile, original verdict.Op) (string, bool) {
	j, ok := originalRecord(r)
	if !ok || unseen(original) || !answeredBy(j, original) {
		return "", false
	}
	took, hold, short := heldShort(j, p)
	if !short {
		return "", false
	}
	if rep, ok := repeatRecord(r); ok && forwardedAt(rep).Before(forwardedAt(j)) {
		return "", false // the repeat reached the target first: repeatWentFirst's case
	}
	return holdMissedText("the original", took, hold), true
}

// holdMissedText says that the slow hook did not hold what, and how to look into it.
func holdMissedText(what string, took, hold time.Duration) string {
	return fmt.Sprintf("the slow hook did not hold %s: the target answered it in %s, and slow_operation declares %s (does the target apply the hook to this request? a request the target refuses before its work, or one it answers from a store, is not held)",
		what, roundDuration(took), hold)
}

// stepAtTarget is the most of a step's first n attempts the target was working on at
// one time, from the journal (the interval from forwarding to the upstream answer), and
// the longest any of them took there. The step's attempts are the key's first n: a
// burst's copies come before its settle step's retry.
func stepAtTarget(r verdict.Record, n int) (most int, longest time.Duration) {
	type event struct {
		at    time.Time
		delta int
	}
	var events []event
	for _, j := range r.Journal {
		if !j.ReachedUpstream || j.Attempt < 1 || j.Attempt > n {
			continue
		}
		start := forwardedAt(j)
		took := millisDuration(j.UpstreamMillis)
		longest = max(longest, took)
		events = append(events, event{start, 1}, event{start.Add(took), -1})
	}
	// At one instant an answer counts before a start: an answer at t and a start at t
	// never met.
	sort.SliceStable(events, func(i, k int) bool {
		if events[i].at.Equal(events[k].at) {
			return events[i].delta < events[k].delta
		}
		return events[i].at.Before(events[k].at)
	})
	cur := 0
	for _, e := range events {
		cur += e.delta
		most = max(most, cur)
	}
	return most, longest
}

// roundDuration shows a duration at a precision a reader takes in: 0.4ms, 12ms, 1.2s.
func roundDuration(d time.Duration) time.Duration {
	switch {
	case d < time.Millisecond:
		return d.Round(10 * time.Microsecond)
	case d < time.Second:
		return d.Round(100 * time.Microsecond)
	}
	return d.Round(10 * time.Millisecond)
}
