package idempotency

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"time"
)

// Scope names one idempotent operation: keys are scoped per principal AND endpoint, so
// the same key from another principal or on another endpoint is another operation.
type Scope struct {
	Principal string
	Endpoint  string // "POST /v1/refunds"
	Key       string
}

// ScopeHash is the SHA-256 of a scope's length-prefixed parts: what stores key their
// records by. The length prefixes keep any part from bleeding into another whatever bytes
// it holds ("ab"+"c" and "a"+"bc" differ), and a fixed 32 bytes indexes and compares
// faster than three strings.
type ScopeHash [sha256.Size]byte

// Hash returns the scope's ScopeHash.
func (sc Scope) Hash() ScopeHash {
	var stack [256]byte
	b := stack[:0]
	for _, part := range [...]string{sc.Principal, sc.Endpoint, sc.Key} {
		b = binary.AppendUvarint(b, uint64(len(part)))
		b = append(b, part...)
	}
	return sha256.Sum256(b)
}

// Response is a stored response: what a replay sends back, byte for byte.
type Response struct {
	Status int
	Header map[string]string // allow-listed headers only
	Body   []byte
}

// Effect is one side-effect row a handler staged (a refund, an invoice). The store
// commits it in the same transaction as the stored response.
type Effect struct {
	Kind      string // "refund", "invoice"
	ID        string
	Entity    string // what the ledger is queried by, e.g. the order id
	Principal string
	Data      []byte // the JSON object the ledger returns
	Created   time.Time
}

// Record is the stored state of one scope.
type Record struct {
	Scope       Scope
	Fingerprint string
	Created     time.Time // when the key was first recorded: the window starts here
	ExpiresAt   time.Time // Created + retention
	LockedUntil time.Time // zero once completed
	Fence       int64     // a store-wide increasing token, new on every acquisition; Complete must present the current one
	Completed   bool
	Response    *Response // set when Completed
}

// State is what Acquire found.
type State int

const (
	// Acquired: the caller holds the key with Fence and must Complete or Release it.
	Acquired State = iota + 1
	// InFlight: another attempt holds a live lock.
	InFlight
	// Completed: the record holds a response to replay.
	Completed
	// Mismatch: the key is in use with another fingerprint; nothing was changed.
	Mismatch
)

func (s State) String() string {
	switch s {
	case Acquired:
		return "acquired"
	case InFlight:
		return "in-flight"
	case Completed:
		return "completed"
	case Mismatch:
		return "mismatch"
	}
	return "unknown"
}

// AcquireRequest asks to record (or take over) a key.
type AcquireRequest struct {
	Scope       Scope
	Fingerprint string
	Now         time.Time
	Retention   time.Duration // window, counted from the first record
	LockTimeout time.Duration // after this a held lock is stale and may be taken over
}

// Acquisition is Acquire's answer: the state and the record as it now is.
type Acquisition struct {
	State  State
	Record Record
}

// ErrFenced is returned by Complete when the caller's fencing token is no longer the
// record's: its lock went stale and another attempt took the key over. Nothing was
// committed.
var ErrFenced = errors.New("idempotency key was taken over: fencing token is stale")

// ErrStoreFull is returned by a store that holds all it may (the memory store's byte
// budget) instead of recording a new key or committing unkeyed effects. Nothing was
// written; the middleware answers 507.
var ErrStoreFull = errors.New("the idempotency store is full")

// Store keeps idempotency records and the effects they guard. Implementations must make
// Acquire atomic per scope and Complete atomic (effects + response + fence check).
// Ownership: a store may keep the Response and Effects it is given without copying, and
// the records it returns may share them; callers and stores treat them as read-only.
type Store interface {
	// Acquire records the key if it is absent or expired, takes it over if its lock is
	// stale, and otherwise reports what is there. Decide gives the rules.
	Acquire(ctx context.Context, req AcquireRequest) (Acquisition, error)
	// Complete commits effects and the response in one transaction if fence is still the
	// record's (or unconditionally when checkFence is false: the no-fencing flaw).
	Complete(ctx context.Context, s Scope, fence int64, resp Response, effects []Effect, checkFence bool) error
	// Release deletes the record if fence is still the record's, so a retry executes.
	Release(ctx context.Context, s Scope, fence int64) error
	// Lookup returns the live record of a scope, if any (a record past its window is absent).
	Lookup(ctx context.Context, s Scope, now time.Time) (Record, bool, error)
	// SetFingerprint overwrites a stored fingerprint (the mismatch-overwrites flaw only).
	SetFingerprint(ctx context.Context, s Scope, fingerprint string) error
	// CommitEffects commits effects of work done without a key.
	CommitEffects(ctx context.Context, effects []Effect) error
	// Effects lists the effects of a kind for an entity, oldest first, across principals.
	Effects(ctx context.Context, kind, entity string) ([]Effect, error)
	// Effect finds one effect of a kind by its ID; ok is false when there is none.
	Effect(ctx context.Context, kind, id string) (e Effect, ok bool, err error)
	// DeleteExpired removes records whose window ended at or before now.
	DeleteExpired(ctx context.Context, now time.Time) (int, error)
	Close() error
}

// Decide is the rule every store applies inside its atomic Acquire: given the existing
// record (nil when absent), it returns the state and, when the state is Acquired (and only
// then), the record to write (by value: a new key is the hot path, and a pointer would
// cost it an allocation).
// newFence is the token a written record gets: it must never have been handed out before
// by the store (a counter or a sequence, not the record's old fence plus one, because a
// released record's fence would otherwise be reused and a stale holder of it could commit
// into the key's next life). A store that draws a token only when it writes passes 0 and
// sets the written record's Fence itself, as both stores here do.
func Decide(existing *Record, req AcquireRequest, newFence int64) (State, Record) {
	if existing == nil || !req.Now.Before(existing.ExpiresAt) {
		// Absent, or past the window: the key counts as absent; a new fence keeps a
		// request from the previous life from committing into the new one.
		return Acquired, Record{
			Scope:       req.Scope,
			Fingerprint: req.Fingerprint,
			Created:     req.Now,
			ExpiresAt:   req.Now.Add(req.Retention),
			LockedUntil: req.Now.Add(req.LockTimeout),
			Fence:       newFence,
		}
	}
	if existing.Fingerprint != req.Fingerprint {
		return Mismatch, Record{}
	}
	if existing.Completed {
		return Completed, Record{}
	}
	if req.Now.Before(existing.LockedUntil) {
		return InFlight, Record{}
	}
	takeover := *existing
	takeover.LockedUntil = req.Now.Add(req.LockTimeout)
	takeover.Fence = newFence
	return Acquired, takeover
}
