package refunds

import (
	"errors"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// keyStore is the idempotency record of the refund tool: one entry per key, written
// before the work starts (so a concurrent repeat finds it) and completed with the result
// once the work is done. A completed entry lives for the retention window.
type keyStore struct {
	retention time.Duration
	now       func() time.Time

	mu        sync.Mutex
	entries   map[string]*entry
	lastSweep time.Time
}

// entry is one key's record. Its result fields are written once, under the store's lock,
// before done is set.
type entry struct {
	fingerprint string
	done        bool
	expires     time.Time
	refund      Refund
	declined    string // the stored business error, replayed as a tool error
}

type beginState int

const (
	stateAcquired beginState = iota // a new key: the caller runs the work
	stateInFlight                   // the original still runs
	stateMismatch                   // the key is held by other arguments
	stateReplay                     // the work is done: replay its result
)

func newKeyStore(retention time.Duration, now func() time.Time) *keyStore {
	return &keyStore{retention: retention, now: now, entries: map[string]*entry{}}
}

// begin looks the key up and, when it is new (or expired), records it as running with
// the request's fingerprint — in one critical section, so exactly one caller acquires it.
func (s *keyStore) begin(key, fingerprint string) (*entry, beginState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.sweep(now)
	if e, ok := s.entries[key]; ok && (!e.done || now.Before(e.expires)) {
		switch {
		case e.fingerprint != fingerprint:
			return e, stateMismatch
		case !e.done:
			return e, stateInFlight
		}
		return e, stateReplay
	}
	e := &entry{fingerprint: fingerprint}
	s.entries[key] = e
	return e, stateAcquired
}

// finish stores the work's result and starts the retention window.
func (e *entry) finish(s *keyStore, refund Refund, declined string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e.refund, e.declined = refund, declined
	e.done, e.expires = true, s.now().Add(s.retention)
}

// abandon forgets a key whose work failed, so the retry executes.
func (s *keyStore) abandon(key string, e *entry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.entries[key] == e {
		delete(s.entries, key)
	}
}

// sweep drops expired entries, at most once per retention window, so memory follows the
// keys of the last window. Called with mu held.
func (s *keyStore) sweep(now time.Time) {
	if now.Sub(s.lastSweep) < s.retention {
		return
	}
	s.lastSweep = now
	for k, e := range s.entries {
		if e.done && !now.Before(e.expires) {
			delete(s.entries, k)
		}
	}
}

// replay answers with the stored result: the refund, or the declined refund as a tool
// error. The SDK encodes both the same way every time, so a replay equals the original.
func (e *entry) replay() (*mcp.CallToolResult, Refund, error) {
	if e.declined != "" {
		return nil, Refund{}, errors.New(e.declined)
	}
	return nil, e.refund, nil
}
