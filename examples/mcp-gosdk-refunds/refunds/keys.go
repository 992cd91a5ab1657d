package refunds

import (
	"errors"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// entry is one key's idempotency record: written before the work starts (so a
// concurrent repeat finds it), completed with the result once the work is done; a
// completed entry lives for the retention window. Owner is the process running the work
// while it runs: a record left running by a process that died (a crash mid-work, over
// stdio) is taken over by the next repeat.
type entry struct {
	Fingerprint string    `json:"fingerprint"`
	Done        bool      `json:"done"`
	Expires     time.Time `json:"expires,omitzero"`
	Refund      Refund    `json:"refund"`
	Declined    string    `json:"declined,omitempty"` // the stored business error, replayed as a tool error
	Owner       int       `json:"owner,omitempty"`
}

type beginState int

const (
	stateAcquired beginState = iota // a new key: the caller runs the work
	stateInFlight                   // the original still runs
	stateMismatch                   // the key is held by other arguments
	stateReplay                     // the work is done: replay its result
)

// begin looks the key up and, when it is new (or expired, or left running by a process
// that is gone), records it as running with the request's fingerprint — in one
// critical section of the store, so exactly one caller acquires it, whatever process it
// is in.
func (a *App) begin(key, fingerprint string) (entry, beginState, error) {
	var got entry
	var st beginState
	err := a.store.update(func(s *state) {
		now := a.cfg.Now()
		s.sweep(now, a.cfg.Retention)
		if e, ok := s.Keys[key]; ok && (e.Done && now.Before(e.Expires) || !e.Done && alive(e.Owner)) {
			switch {
			case e.Fingerprint != fingerprint:
				got, st = *e, stateMismatch
			case !e.Done:
				got, st = *e, stateInFlight
			default:
				got, st = *e, stateReplay
			}
			return
		}
		e := &entry{Fingerprint: fingerprint, Owner: pid}
		s.Keys[key] = e
		got, st = *e, stateAcquired
	})
	return got, st, err
}

// finish stores the work's result and starts the retention window.
func (a *App) finish(key string, refund Refund, declined string) (entry, error) {
	var got entry
	err := a.store.update(func(s *state) {
		e, ok := s.Keys[key]
		if !ok {
			e = &entry{}
			s.Keys[key] = e
		}
		e.Refund, e.Declined, e.Owner = refund, declined, 0
		e.Done, e.Expires = true, a.cfg.Now().Add(a.cfg.Retention)
		got = *e
	})
	return got, err
}

// abandon forgets a key whose work failed, so the retry executes.
func (a *App) abandon(key string) error {
	return a.store.update(func(s *state) {
		if e, ok := s.Keys[key]; ok && !e.Done {
			delete(s.Keys, key)
		}
	})
}

// sweep drops expired entries, at most once per retention window, so the store follows
// the keys of the last window.
func (s *state) sweep(now time.Time, retention time.Duration) {
	if now.Sub(s.LastSweep) < retention {
		return
	}
	s.LastSweep = now
	for k, e := range s.Keys {
		if e.Done && !now.Before(e.Expires) {
			delete(s.Keys, k)
		}
	}
}

// replay answers with the stored result: the refund, or the declined refund as a tool
// error. The SDK encodes both the same way every time, so a replay equals the original.
func (e entry) replay() (*mcp.CallToolResult, Refund, error) {
	if e.Declined != "" {
		return nil, Refund{}, errors.New(e.Declined)
	}
	return nil, e.Refund, nil
}
