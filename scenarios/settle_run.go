package scenarios

import (
	"context"
	"time"

	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/transport"
	"github.com/idemproof/idemproof/verdict"
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
	window := settleWindowAfter(e.t.p, e.rec.history())
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

// settleWindowOf is how long a key may still be refused as in flight after every attempt
// ended: the declared lock timeout (a crashed or abandoned attempt's lock goes stale by
// then), else the client timeout (the longest an attempt the client gave up on can have
// been running when it did).
func settleWindowOf(p *profile.Profile) time.Duration {
	if l := p.LockTimeout.Std(); l > 0 {
		return profile.PastLock(l)
	}
	return p.ClientTimeout.Std()
}

// settleWindowAfter is the settle window after the attempts of ops: settleWindowOf, and
// one client timeout more when the client gave up on an attempt the target had not
// answered. A lock timeout bounds a hold from its start, but such an attempt may not have
// started yet: a target swamped by a burst still works through the attempts its clients
// left (a thousand copies queued for a pool of connections), each of which may hold the
// key in its turn. They built up within a client timeout; the settle gives the target as
// long again to work through them before a refusal counts as a stuck key.
func settleWindowAfter(p *profile.Profile, ops []verdict.Op) time.Duration {
	w := settleWindowOf(p)
	if gaveUpUnanswered(ops) > 0 {
		w += p.ClientTimeout.Std()
	}
	return w
}

// gaveUpUnanswered counts the attempts before the settle step that the client gave up
// on (timed out) without an answer. It reads the client's history, not the journal as
// givenUpWhileRunning does: the settle step runs before the journal is read, and the
// checkers must count as it did.
func gaveUpUnanswered(ops []verdict.Op) int {
	n := 0
	for _, op := range ops {
		if op.Type != verdict.OpInvoke && op.Step != SettleStep && op.Error == transport.TimedOut {
			n++
		}
	}
	return n
}

// settleBudget is the longest the settle step can take: the window (with the client
// timeout it may add), then the unseen answers it tolerates, each a whole client timeout.
func (t *target) settleBudget() time.Duration {
	return settleWindowOf(t.p) + (1+settleMaxUnseen)*t.p.ClientTimeout.Std()
}
