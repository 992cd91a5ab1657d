package scenarios

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/storefault"
	"github.com/idemproof/idemproof/verdict"
)

// StoreFault is what a step does to the target's key store (profile store:) before it
// is sent: one of the store fault point's faults, or StoreBack to heal it.
type StoreFault string

const (
	StoreNone  StoreFault = ""
	StoreDown  StoreFault = StoreFault(storefault.Down)  // connections cut, new ones refused
	StoreReset StoreFault = StoreFault(storefault.Reset) // every connection reset at its next byte
	StoreHang  StoreFault = StoreFault(storefault.Hang)  // nothing answers until healed (past store.timeout)
	StoreBack  StoreFault = verdict.StoreUp              // the store is back
)

// StartStorePoints starts the store fault point of every profile that declares store:
// without a running one (Store.Point nil), and sets Store.Point. The returned function
// closes the points it started and sets their Store.Point back to nil. An unreachable
// store.upstream, or a store.listen already taken, is an error naming the profile; the
// points started before it are closed again.
func StartStorePoints(profiles []*profile.Profile) (func() error, error) {
	var started []*profile.Profile
	closeAll := func() error {
		var errs []error
		for _, p := range started {
			errs = append(errs, p.Store.Point.Close())
			p.Store.Point = nil
		}
		started = nil
		return errors.Join(errs...)
	}
	for _, p := range profiles {
		if p == nil || p.Store == nil || p.Store.Point != nil {
			continue
		}
		pt, err := storefault.Start(p.Store.PointConfig())
		if err != nil {
			_ = closeAll()
			return nil, &PreflightError{Target: p.Name, Field: "store", Msg: err.Error()}
		}
		p.Store.Point = pt
		started = append(started, p)
	}
	return closeAll, nil
}

// switchesStore reports whether the scenario switches store faults: it runs alone on
// its target, since a store fault hits every request the target serves meanwhile.
func switchesStore(sc Scenario) bool {
	for _, st := range sc.Steps {
		if st.Store != StoreNone {
			return true
		}
	}
	return false
}

// storeWaits is how long a scenario's store faults hold on purpose: a hang lasts past
// the API's own store timeout, and the step after the heal may be retried while the API
// recovers.
func (t *target) storeWaits(sc Scenario) time.Duration {
	var d time.Duration
	for _, st := range sc.Steps {
		switch st.Store {
		case StoreHang:
			d += t.hangFor()
		case StoreBack:
			d += storeRecoveryBudget
		}
	}
	return d
}

func (t *target) hangFor() time.Duration {
	if t.p.Store == nil {
		return 0
	}
	return t.p.Store.HangFor(t.p.ClientTimeout).Std()
}

// storeAttemptTimeout is how long an attempt sent while the store hangs may take: long
// enough to see the API's answer after its own store timeout, when one is declared.
func (t *target) storeAttemptTimeout(st Step, d time.Duration) time.Duration {
	if st.Store == StoreHang && t.p.Store != nil && t.p.Store.Timeout > 0 {
		return max(d, t.hangFor()+time.Second)
	}
	return d
}

// storeSwitch is the scenario's side of the store fault point: it switches faults,
// records each switch with the point's counters, and makes sure a hang lasts past the
// API's own store timeout before it is healed.
type storeSwitch struct {
	t         *target
	events    []verdict.StoreEvent
	hungSince time.Time
}

// set applies f before step (StoreBack heals), recording the switch.
func (s *storeSwitch) set(ctx context.Context, f StoreFault, step string) error {
	pt := s.t.p.Store.Point
	if pt == nil {
		return errors.New("store fault point not running (StartStorePoints)")
	}
	if !s.hungSince.IsZero() {
		// The API must meet its own timeout inside the hang, not a connection closed by
		// the heal: wait out what is left of it.
		if left := time.Until(s.hungSince.Add(s.t.hangFor())); left > 0 {
			timer := time.NewTimer(left)
			select {
			case <-ctx.Done():
				timer.Stop()
			case <-timer.C:
			}
		}
		s.hungSince = time.Time{}
	}
	var err error
	if f == StoreBack {
		err = pt.Heal()
	} else {
		err = pt.Set(storefault.Fault(f), 0)
	}
	if err != nil {
		return fmt.Errorf("store %s: %w", f, err)
	}
	if f == StoreHang {
		s.hungSince = time.Now()
	}
	s.events = append(s.events, verdict.StoreEvent{At: time.Now(), Fault: string(f), Step: step, Stats: pt.Stats()})
	return nil
}

// heal brings the store back at the end of the scenario, unless the last switch did.
func (s *storeSwitch) heal(ctx context.Context) error {
	if len(s.events) == 0 || s.events[len(s.events)-1].Fault == verdict.StoreUp {
		return nil
	}
	return s.set(ctx, StoreBack, "")
}

// Recovery after a store outage: an API whose pooled store connections were cut hands
// out dead ones for a while after the store is back, each answered with a retryable
// refusal. The step after the heal is retried as a client would, at most
// storeRecoveryTries times within storeRecoveryBudget.
const (
	storeRecoveryTries  = 8
	storeRecoveryBudget = 10 * time.Second
	storeRecoveryPause  = 50 * time.Millisecond
)

// retryWhileRecovering resends the step sent right after the store came back while its
// answer is a 5xx, a throttle or no answer (an in-flight refusal is the settle step's to
// wait out), with a doubling pause.
func (e *execution) retryWhileRecovering(ctx context.Context, st Step) error {
	deadline := time.Now().Add(storeRecoveryBudget)
	pause := storeRecoveryPause
	for try := 1; try < storeRecoveryTries && time.Now().Before(deadline); try++ {
		last := e.rec.last()
		if !refusedRetryably(last) || last.Class == outcome.InFlight {
			return nil
		}
		timer := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			timer.Stop()
			return ctx.Err()
		case <-timer.C:
		}
		pause = min(2*pause, time.Second)
		e.attempt++
		if err := e.sendCopies(ctx, st, e.attempt, nil); err != nil {
			return err
		}
	}
	return nil
}
