// Package memstore is the in-memory idempotency.Store: the quick path and the default of
// the reference server. One mutex makes every operation atomic, which is exactly the
// transaction the contract asks for; nothing survives the process. Following the Store
// contract, stored responses and effects are kept as handed over (no copies) and
// returned records share them: both sides treat them as read-only.
package memstore

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/idemproof/idemproof/reference/idempotency"
)

// Store keeps records and effects in maps guarded by one mutex.
type Store struct {
	mu      sync.Mutex
	records map[idempotency.Scope]*idempotency.Record
	effects map[ledgerKey][]idempotency.Effect
	fences  int64 // last fencing token handed out
}

type ledgerKey struct{ kind, entity string }

var _ idempotency.Store = (*Store)(nil)

// New returns an empty store.
func New() *Store {
	return &Store{
		records: map[idempotency.Scope]*idempotency.Record{},
		effects: map[ledgerKey][]idempotency.Effect{},
	}
}

// Acquire implements idempotency.Store with idempotency.Decide.
func (s *Store) Acquire(_ context.Context, req idempotency.AcquireRequest) (idempotency.Acquisition, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	existing := s.records[req.Scope]
	state, next := idempotency.Decide(existing, req, s.fences+1)
	if next != nil {
		s.fences++
		s.records[req.Scope] = next
		existing = next
	}
	return idempotency.Acquisition{State: state, Record: *existing}, nil
}

// Complete implements idempotency.Store.
func (s *Store) Complete(_ context.Context, sc idempotency.Scope, fence int64, resp idempotency.Response, effects []idempotency.Effect, checkFence bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec := s.records[sc]
	if checkFence && (rec == nil || rec.Fence != fence || rec.Completed) {
		return idempotency.ErrFenced
	}
	s.addEffects(effects)
	if rec == nil {
		return nil // no-fencing: the key is gone, the effects still land
	}
	rec.Completed = true
	rec.Response = &resp
	rec.LockedUntil = time.Time{}
	return nil
}

// Release implements idempotency.Store.
func (s *Store) Release(_ context.Context, sc idempotency.Scope, fence int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rec := s.records[sc]; rec != nil && rec.Fence == fence && !rec.Completed {
		delete(s.records, sc)
	}
	return nil
}

// Lookup implements idempotency.Store.
func (s *Store) Lookup(_ context.Context, sc idempotency.Scope, now time.Time) (idempotency.Record, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec := s.records[sc]
	if rec == nil || !now.Before(rec.ExpiresAt) {
		return idempotency.Record{}, false, nil
	}
	return *rec, true, nil
}

// SetFingerprint implements idempotency.Store.
func (s *Store) SetFingerprint(_ context.Context, sc idempotency.Scope, fingerprint string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rec := s.records[sc]; rec != nil {
		rec.Fingerprint = fingerprint
	}
	return nil
}

// CommitEffects implements idempotency.Store.
func (s *Store) CommitEffects(_ context.Context, effects []idempotency.Effect) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.addEffects(effects)
	return nil
}

func (s *Store) addEffects(effects []idempotency.Effect) {
	for _, e := range effects {
		k := ledgerKey{e.Kind, e.Entity}
		s.effects[k] = append(s.effects[k], e)
	}
}

// Effects implements idempotency.Store.
func (s *Store) Effects(_ context.Context, kind, entity string) ([]idempotency.Effect, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.effects[ledgerKey{kind, entity}]), nil
}

// DeleteExpired implements idempotency.Store.
func (s *Store) DeleteExpired(_ context.Context, now time.Time) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for sc, rec := range s.records {
		if !now.Before(rec.ExpiresAt) {
			delete(s.records, sc)
			n++
		}
	}
	return n, nil
}

// Close implements idempotency.Store; the maps are left to the garbage collector.
func (s *Store) Close() error { return nil }
