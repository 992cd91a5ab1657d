package scenarios

import (
	"context"
	"fmt"
	"time"

	"github.com/idemproof/idemproof/profile"
)

// wait sleeps only for what the profile declared: a retention or a lock timeout.
func (e *execution) wait(ctx context.Context, w Wait) error {
	p := e.t.p
	e.mu.Lock()
	first, last, answered := e.firstAnswer, e.lastStart, e.lastAnswer
	e.mu.Unlock()
	var until time.Time
	switch w {
	case WaitNone:
		return nil
	case WaitBackground:
		e.bg.Wait()
		return ctx.Err()
	case WaitInsideWindow:
		// Counted from the first attempt's start: the target counts its window from the
		// key's first record, which is no earlier, so the repeat is inside however long
		// the original took.
		r := p.Retention.Std()
		margin := insideWindowMargin(r)
		if e.t.plan != nil && e.t.plan.insideMargin > 0 {
			margin = e.t.plan.insideMargin // the target's latency needs more (plan.go)
		}
		until = e.firstStart.Add(r - margin)
	case WaitPastWindow:
		r := p.Retention.Std()
		until = first.Add(r + max(r/2, 300*time.Millisecond))
	case WaitPastHold, WaitPastHoldAgain:
		// From the previous step's start: the target began holding no earlier.
		// And the target's own time for the work, which the hold comes on top of;
		// WaitPastHoldAgain waits the hold's margin twice.
		h := e.t.giveUpHold()
		wait := pastHold(h) + e.t.workTime()
		if w == WaitPastHoldAgain {
			wait += pastHold(h) - h
		}
		until = last.Add(wait)
	case WaitPastLock:
		// From the later of the previous step's start and the latest answer: a request
		// that answered (a crash after the key insert) took its lock before it did, and
		// on a loaded machine or through containers that can be long after it was sent.
		// A step still running in the background (slow-past-lock) has not answered, and
		// its start is the earliest the lock can have been taken.
		from := last
		if answered.After(from) {
			from = answered
		}
		until = from.Add(profile.PastLock(p.LockTimeout.Std()))
	default:
		return fmt.Errorf("unknown wait %q", w)
	}
	timer := time.NewTimer(time.Until(until))
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return fmt.Errorf("wait %s: %w", w, ctx.Err())
	case <-timer.C:
		return nil
	}
}

// declaredWaits is how long the scenario's steps wait or hold on purpose, from the
// profile's declared durations.
func (t *target) declaredWaits(sc Scenario) time.Duration {
	p := t.p
	var d time.Duration
	for _, st := range sc.Steps {
		switch st.Wait {
		case WaitInsideWindow:
			d += p.Retention.Std()
		case WaitPastWindow:
			d += p.Retention.Std()*3/2 + 300*time.Millisecond
		case WaitPastLock:
			d += profile.PastLock(p.LockTimeout.Std())
		case WaitPastHold, WaitPastHoldAgain:
			d += 2*pastHold(t.giveUpHold()) + t.workTime()
		}
		switch st.Hook {
		case HookSlow, HookSlowFail:
			d += t.slow()
		case HookSlowPastLock:
			d += t.pastLockHold()
		case HookSlowPastTimeout, HookSlowPastTimeoutWaited:
			d += t.giveUpHold()
		}
	}
	for _, fo := range sc.Faults {
		d += t.resolve(fo.DurationOf)
	}
	if sc.Settle != nil {
		d += t.settleBudget()
	}
	return d
}
