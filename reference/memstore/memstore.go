// Package memstore is the in-memory idempotency.Store: the quick path and the default of
// the reference server. One mutex makes every operation atomic, which is exactly the
// transaction the contract asks for; nothing survives the process.
//
// A server keeps every key for the whole retention window, so records are stored
// compactly (one string key, times as integers, headers in one string): few pointers
// means little work for the garbage collector, which is most of the keyed path's cost.
// Following the Store contract, response bodies and effects are kept as handed over (no
// copies) and returned records share them: both sides treat them as read-only.
package memstore

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/idemproof/idemproof/reference/idempotency"
)

// Store keeps records and effects in maps guarded by one mutex.
type Store struct {
	mu      sync.Mutex
	records map[string]entry // by scopeKey
	effects map[ledgerKey][]idempotency.Effect
	fences  int64 // last fencing token handed out
}

type ledgerKey struct{ kind, entity string }

// entry is a Record in compact form; times are Unix nanoseconds, 0 meaning zero.
type entry struct {
	fingerprint string
	created     int64
	expires     int64
	lockedUntil int64
	fence       int64
	completed   bool
	status      int
	header      string // "Name: value\n" lines
	body        []byte
}

var _ idempotency.Store = (*Store)(nil)

// New returns an empty store.
func New() *Store {
	return &Store{records: map[string]entry{}, effects: map[ledgerKey][]idempotency.Effect{}}
}

// scopeKey joins the scope's parts with length prefixes, so no part can bleed into
// another whatever bytes it holds.
func scopeKey(sc idempotency.Scope) string {
	var b strings.Builder
	b.Grow(len(sc.Principal) + len(sc.Endpoint) + len(sc.Key) + 12)
	for _, part := range [...]string{sc.Principal, sc.Endpoint, sc.Key} {
		b.WriteString(strconv.Itoa(len(part)))
		b.WriteByte(':')
		b.WriteString(part)
	}
	return b.String()
}

func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

func pack(r *idempotency.Record) entry {
	e := entry{
		fingerprint: r.Fingerprint, created: nanos(r.Created), expires: nanos(r.ExpiresAt),
		lockedUntil: nanos(r.LockedUntil), fence: r.Fence, completed: r.Completed,
	}
	if r.Response != nil {
		e.status, e.header, e.body = r.Response.Status, packHeader(r.Response.Header), r.Response.Body
	}
	return e
}

func (e entry) unpack(sc idempotency.Scope) idempotency.Record {
	r := idempotency.Record{
		Scope: sc, Fingerprint: e.fingerprint, Created: fromNanos(e.created), ExpiresAt: fromNanos(e.expires),
		LockedUntil: fromNanos(e.lockedUntil), Fence: e.fence, Completed: e.completed,
	}
	if e.completed {
		r.Response = &idempotency.Response{Status: e.status, Header: unpackHeader(e.header), Body: e.body}
	}
	return r
}

// packHeader flattens headers; names and values never hold a newline (HTTP forbids it).
func packHeader(h map[string]string) string {
	var b strings.Builder
	for k, v := range h {
		b.WriteString(k)
		b.WriteString(": ")
		b.WriteString(v)
		b.WriteByte('\n')
	}
	return b.String()
}

func unpackHeader(s string) map[string]string {
	h := map[string]string{}
	for line := range strings.Lines(s) {
		k, v, _ := strings.Cut(strings.TrimSuffix(line, "\n"), ": ")
		h[k] = v
	}
	return h
}

// Acquire implements idempotency.Store with idempotency.Decide.
func (s *Store) Acquire(_ context.Context, req idempotency.AcquireRequest) (idempotency.Acquisition, error) {
	key := scopeKey(req.Scope)
	s.mu.Lock()
	defer s.mu.Unlock()
	var existing *idempotency.Record
	if e, ok := s.records[key]; ok {
		r := e.unpack(req.Scope)
		existing = &r
	}
	state, next := idempotency.Decide(existing, req, s.fences+1)
	if next != nil {
		s.fences++
		s.records[key] = pack(next)
		return idempotency.Acquisition{State: state, Record: *next}, nil
	}
	return idempotency.Acquisition{State: state, Record: *existing}, nil
}

// Complete implements idempotency.Store.
func (s *Store) Complete(_ context.Context, sc idempotency.Scope, fence int64, resp idempotency.Response, effects []idempotency.Effect, checkFence bool) error {
	key := scopeKey(sc)
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.records[key]
	if checkFence && (!ok || e.fence != fence || e.completed) {
		return idempotency.ErrFenced
	}
	s.addEffects(effects)
	if !ok {
		return nil // no-fencing: the key is gone, the effects still land
	}
	e.completed, e.lockedUntil = true, 0
	e.status, e.header, e.body = resp.Status, packHeader(resp.Header), resp.Body
	s.records[key] = e
	return nil
}

// Release implements idempotency.Store.
func (s *Store) Release(_ context.Context, sc idempotency.Scope, fence int64) error {
	key := scopeKey(sc)
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.records[key]; ok && e.fence == fence && !e.completed {
		delete(s.records, key)
	}
	return nil
}

// Lookup implements idempotency.Store.
func (s *Store) Lookup(_ context.Context, sc idempotency.Scope, now time.Time) (idempotency.Record, bool, error) {
	key := scopeKey(sc)
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.records[key]
	if !ok || now.UnixNano() >= e.expires {
		return idempotency.Record{}, false, nil
	}
	return e.unpack(sc), true, nil
}

// SetFingerprint implements idempotency.Store.
func (s *Store) SetFingerprint(_ context.Context, sc idempotency.Scope, fingerprint string) error {
	key := scopeKey(sc)
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.records[key]; ok {
		e.fingerprint = fingerprint
		s.records[key] = e
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
	return append([]idempotency.Effect(nil), s.effects[ledgerKey{kind, entity}]...), nil
}

// DeleteExpired implements idempotency.Store.
func (s *Store) DeleteExpired(_ context.Context, now time.Time) (int, error) {
	cutoff := now.UnixNano()
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for k, e := range s.records {
		if cutoff >= e.expires {
			delete(s.records, k)
			n++
		}
	}
	return n, nil
}

// Close implements idempotency.Store; the maps are left to the garbage collector.
func (s *Store) Close() error { return nil }
