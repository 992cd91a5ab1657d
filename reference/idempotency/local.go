package idempotency

import (
	"context"
	"net/http"
)

// LocalStore is a Store that can run a keyed request whose whole work is rows in the
// store's own database as ONE transaction: the key's lock, its lookup, the key row with
// the stored response and the staged effects reach the database together (the
// one-transaction path, Config.OneTransaction).
type LocalStore interface {
	Store
	// CommitLocal, in one transaction: takes the scope's transaction lock without
	// waiting (InFlight when another transaction holds it), and records the key as
	// completed with resp and commits effects when the key is absent, expired, or held by
	// a stale lock of the two-phase path with the same fingerprint (Acquired: committed).
	// Otherwise nothing is written and the state says what the live record holds
	// (Completed with the record to replay, Mismatch, or InFlight for a live two-phase
	// lock). A key row another transaction commits while this one runs must end as one
	// of those states, never an error and never a second commit.
	//
	// inTx, when not nil, runs inside the transaction after the key and the effects are
	// written and before the commit (the lock is held): the place of the AfterKey hook.
	// It costs round trips; nil sends the whole transaction at once. When inTx panics the
	// transaction rolls back and the panic goes on.
	CommitLocal(ctx context.Context, req AcquireRequest, resp Response, effects []Effect, inTx func()) (Acquisition, error)
	// Held reports whether a transaction of CommitLocal holds the scope's lock now: what
	// a test waits for, since its uncommitted key row is invisible to Lookup.
	Held(ctx context.Context, s Scope) (bool, error)
}

// OneTransactionApplies reports whether a middleware built with cfg runs its requests on
// the one-transaction path: the handler asked for it (Config.OneTransaction), the store
// is a LocalStore, and no flaw is switched on (the flaws model bugs of the two-phase
// design — a stale lock, a missing fence, a check before the set — which the
// one-transaction path has no place for).
func OneTransactionApplies(cfg Config) bool {
	_, ok := cfg.Store.(LocalStore)
	return ok && cfg.OneTransaction && cfg.Flaws == (Flaws{})
}

func (m *middleware) oneTransaction() (LocalStore, bool) {
	if !OneTransactionApplies(m.cfg) {
		return nil, false
	}
	return m.cfg.Store.(LocalStore), true
}

// serveLocal is the one-transaction path. The handler runs first, into the buffer: its
// work is computation and staged rows, so running it before the key is looked at
// changes nothing outside this process. Then its rows, the key and the stored response
// commit in one transaction that first takes the key's lock; a repeat gets the stored
// answer and the handler's output is dropped.
func (m *middleware) serveLocal(w http.ResponseWriter, r *http.Request, ls LocalStore, scope Scope, fp string) {
	ctx := context.WithoutCancel(r.Context())
	req := AcquireRequest{Scope: scope, Fingerprint: fp, Now: m.cfg.Now(), Retention: m.retention(), LockTimeout: m.lockTimeout()}
	rec, u := m.run(r)
	effects, notExecuted := u.result()
	if notExecuted || rec.code() >= 500 {
		// Nothing to commit, but a live record still answers for the key: a repeat of
		// a completed request replays even when this attempt would have failed.
		m.answerExisting(ctx, w, r, req, rec)
		return
	}
	var inTx func()
	if h := m.cfg.Hooks.AfterKey; h != nil {
		inTx = func() { h(r) }
	}
	acq, err := ls.CommitLocal(ctx, req, m.stored(rec), effects, inTx)
	if err != nil {
		m.storeFailed(w, "commit the request", err)
		return
	}
	switch acq.State {
	case Acquired:
		if h := m.cfg.Hooks.AfterCommit; h != nil {
			h(r)
		}
		rec.flush(w)
	case Completed:
		m.replay(w, *acq.Record.Response)
	case Mismatch:
		m.mismatch(w, r, scope, fp)
	default:
		m.inFlight(w)
	}
}

// answerExisting answers an attempt that committed nothing: the live record's answer if
// the key has one, else the attempt's own (a validation error or a 5xx, not stored).
func (m *middleware) answerExisting(ctx context.Context, w http.ResponseWriter, r *http.Request, req AcquireRequest, rec *recorder) {
	existing, ok, err := m.cfg.Store.Lookup(ctx, req.Scope, req.Now)
	if err != nil {
		m.storeFailed(w, "look up key", err)
		return
	}
	if ok {
		switch state, _ := Decide(&existing, req, 0); state {
		case Completed:
			m.replay(w, *existing.Response)
			return
		case Mismatch:
			m.mismatch(w, r, req.Scope, req.Fingerprint)
			return
		case InFlight:
			m.inFlight(w)
			return
		}
	}
	rec.flush(w)
}

// DecideLocal is what a LocalStore's CommitLocal concludes from the live record it finds
// after its write did not take the key (existing nil: no live record): the state to
// answer, or retry when the record changed under it and the write should be tried again.
func DecideLocal(existing *Record, req AcquireRequest) (state State, retry bool) {
	if existing == nil {
		return 0, true
	}
	state, _ = Decide(existing, req, 0)
	return state, state == Acquired
}
