package scenarios

import (
	"context"
	"time"

	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/profile"
)

// The settle step's bounds: how often it asks again, and how many unseen answers
// (timeouts, resets) it takes before the key counts as hanging rather than the machine
// as slow.
const (
	settleMaxTries   = 8
	settleMaxUnseen  = 3
	settleFirstDelay = 50 * time.Millisecond
)

// settle sends the settle step once every attempt of the scenario has ended: sequential
// retries with the scenario's key and the settle payload. It asks again while the key is
// still refused as in flight (the target may still be finishing an attempt whose client
// gave up) until the settle window has passed, and after an unseen answer up to
// settleMaxUnseen times; the checkers judge the last answer.
func (e *execution) settle(ctx context.Context) error {
	if e.sc.Settle == nil {
		return nil
	}
	st := Step{Name: SettleStep, Payload: e.sc.Settle.Payload}
	window := e.t.settleWindow()
	// The window is counted on the history's own clock, from the step's first invoke to
	// an answer, as the checkers count it: an in-flight answer ends the step only once it
	// came after the window, however long the window (a lock timeout can outlast the
	// tries' backoff, 6.35 s in all) and however late a loaded machine ran this loop.
	var deadline time.Time
	delay, unseen := settleFirstDelay, 0
	for try := 1; ; try++ {
		e.attempt++
		if err := e.sendCopies(ctx, st, e.attempt, nil); err != nil {
			return err
		}
		if try == 1 {
			first, _ := e.rec.firstInvoke(SettleStep)
			deadline = first.Add(window)
		}
		switch last := e.rec.last(); {
		case !last.Class.Determinate():
			if unseen++; unseen >= settleMaxUnseen || (try >= settleMaxTries && !time.Now().Before(deadline)) {
				return nil
			}
		case last.Class != outcome.InFlight:
			return nil
		case !last.Time.Before(deadline):
			return nil
		}
		d := delay
		if left := time.Until(deadline); left > 0 && left < d {
			d = left
		}
		delay *= 2
		timer := time.NewTimer(d)
		select {
		case <-ctx.Done():
			timer.Stop()
			return ctx.Err()
		case <-timer.C:
		}
	}
}

// settleWindow is how long a key may still be refused as in flight after every attempt
// ended: the declared lock timeout (a crashed or abandoned attempt's lock goes stale by
// then), else the client timeout (the longest an attempt the client gave up on can have
// been running when it did).
func (t *target) settleWindow() time.Duration { return settleWindowOf(t.p) }

func settleWindowOf(p *profile.Profile) time.Duration {
	if l := p.LockTimeout.Std(); l > 0 {
		return profile.PastLock(l)
	}
	return p.ClientTimeout.Std()
}

// settleBudget is the longest the settle step can take: the window, then the unseen
// answers it tolerates, each a whole client timeout.
func (t *target) settleBudget() time.Duration {
	return t.settleWindow() + settleMaxUnseen*t.p.ClientTimeout.Std()
}
