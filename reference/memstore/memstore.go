// Package memstore is the in-memory idempotency.Store: the quick path and the default of
// the reference server. One mutex makes every operation atomic, which is exactly the
// transaction the contract asks for; nothing survives the process.
//
// A server keeps every key for the whole retention window, so records are stored without
// pointers: the map is keyed by the SHA-256 of the scope's length-prefixed parts and its
// values hold only integers; the variable-length parts (fingerprint, response headers
// and body) are copied into an append-only byte arena of fixed-size chunks (it grows
// without copying) and the values hold their offsets. The garbage collector then has
// nothing to scan in the map nor in the arena: scanning every retained record was most
// of what the keyed path cost. Bytes of deleted or replaced records are counted as
// garbage; once garbage is more than half of the arena, the live bytes are copied into
// new chunks. Old chunks are never written again, so a body already returned never
// changes: returned records share response bodies with the arena and, as the Store
// contract says, both sides treat them as read-only. Effects are kept as handed over.
package memstore

import (
	"context"
	"encoding/binary"
	"sync"
	"time"

	"github.com/idemproof/idemproof/reference/idempotency"
)

// Store keeps records and effects in maps guarded by one mutex.
type Store struct {
	mu      sync.Mutex
	records map[scopeHash]slot
	chunks  [][]byte // the arena: fingerprints, packed headers and bodies, only ever appended to
	cur     int      // the chunk small items are appended to; -1 for none
	size    int      // bytes of the arena accounted for: live, plus garbage
	garbage int      // bytes no slot refers to any more, and chunk tails left unused
	effects map[ledgerKey][]idempotency.Effect
	byID    map[ledgerKey]effectRef // by {kind, ID}: where in effects the effect is
	fences  int64                   // last fencing token handed out
}

type ledgerKey struct{ kind, entity string }

// effectRef locates an effect: the i-th of effects[list].
type effectRef struct {
	list ledgerKey
	i    int
}

type scopeHash = idempotency.ScopeHash

// span names n bytes of chunk c from off.
type span struct {
	c, off uint32
	n      int
}

// slot is a Record in pointer-free form. Times are Unix nanoseconds, 0 meaning zero.
// Once completed, resp holds the packed headers (the first hdrLen bytes) and the body.
type slot struct {
	created     int64
	expires     int64
	lockedUntil int64
	fence       int64
	fp          span
	resp        span
	hdrLen      int
	status      int
	completed   bool
	bodyNil     bool // the stored body was nil rather than empty
}

var _ idempotency.Store = (*Store)(nil)

const (
	// chunkSize is the size of an arena chunk; an item larger than chunkSize/8 gets a
	// chunk of its own, so at most an eighth of a chunk is left unused at its end.
	chunkSize = 128 << 10
	// compactMin is the arena size below which garbage is not worth a compaction.
	compactMin = 2 * chunkSize
)

// New returns an empty store.
func New() *Store {
	return &Store{records: map[scopeHash]slot{}, cur: -1, effects: map[ledgerKey][]idempotency.Effect{}, byID: map[ledgerKey]effectRef{}}
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

// bytes returns the bytes of sp; their capacity ends with them, so an append by a
// caller cannot reach past them.
func (s *Store) bytes(sp span) []byte {
	if sp.n == 0 {
		return []byte{}
	}
	end := int(sp.off) + sp.n
	return s.chunks[sp.c][sp.off:end:end]
}

// alloc reserves n bytes of the arena and returns them (empty, with room for n) and
// their span. Bytes once written are never written again.
func (s *Store) alloc(n int) ([]byte, span) {
	if n == 0 {
		return nil, span{}
	}
	s.size += n
	if n > chunkSize/8 {
		c := make([]byte, n)
		s.chunks = append(s.chunks, c)
		return c[:0], span{c: uint32(len(s.chunks) - 1), n: n}
	}
	if s.cur < 0 || cap(s.chunks[s.cur])-len(s.chunks[s.cur]) < n {
		if s.cur >= 0 {
			tail := cap(s.chunks[s.cur]) - len(s.chunks[s.cur])
			s.size += tail
			s.garbage += tail
		}
		s.chunks = append(s.chunks, make([]byte, 0, chunkSize))
		s.cur = len(s.chunks) - 1
	}
	c := s.chunks[s.cur]
	off := len(c)
	s.chunks[s.cur] = c[:off+n]
	return c[off : off : off+n], span{c: uint32(s.cur), off: uint32(off), n: n}
}

// free counts the bytes of sp as garbage.
func (s *Store) free(sp span) { s.garbage += sp.n }

// putFingerprint stores fp in e, keeping e's bytes when they already say fp.
func (s *Store) putFingerprint(e *slot, fp string) {
	if e.fp.n == len(fp) && (len(fp) == 0 || string(s.bytes(e.fp)) == fp) {
		return
	}
	s.free(e.fp)
	b, sp := s.alloc(len(fp))
	_ = append(b, fp...)
	e.fp = sp
}

// putResponse stores resp as e's response, replacing any it had. The headers are
// packed as length-prefixed names and values.
func (s *Store) putResponse(e *slot, resp *idempotency.Response) {
	var stack [256]byte
	hdr := stack[:0]
	for k, v := range resp.Header {
		hdr = binary.AppendUvarint(hdr, uint64(len(k)))
		hdr = append(hdr, k...)
		hdr = binary.AppendUvarint(hdr, uint64(len(v)))
		hdr = append(hdr, v...)
	}
	s.free(e.resp)
	b, sp := s.alloc(len(hdr) + len(resp.Body))
	_ = append(append(b, hdr...), resp.Body...)
	e.resp, e.hdrLen, e.status, e.bodyNil = sp, len(hdr), resp.Status, resp.Body == nil
}

// put writes r over old (the zero slot when there was none) and returns the result.
func (s *Store) put(old slot, r *idempotency.Record) slot {
	e := old
	e.created, e.expires, e.lockedUntil = nanos(r.Created), nanos(r.ExpiresAt), nanos(r.LockedUntil)
	e.fence, e.completed = r.Fence, r.Completed
	s.putFingerprint(&e, r.Fingerprint)
	if r.Response != nil {
		s.putResponse(&e, r.Response)
	} else {
		s.free(e.resp)
		e.resp, e.hdrLen, e.status, e.bodyNil = span{}, 0, 0, false
	}
	return e
}

func (s *Store) unpack(e *slot, sc idempotency.Scope) idempotency.Record {
	r := idempotency.Record{
		Scope: sc, Fingerprint: string(s.bytes(e.fp)),
		Created: fromNanos(e.created), ExpiresAt: fromNanos(e.expires),
		LockedUntil: fromNanos(e.lockedUntil), Fence: e.fence, Completed: e.completed,
	}
	if e.completed {
		r.Response = &idempotency.Response{Status: e.status, Header: s.unpackHeader(e), Body: s.body(e)}
	}
	return r
}

// body shares the arena: its bytes are never written again.
func (s *Store) body(e *slot) []byte {
	if e.bodyNil {
		return nil
	}
	return s.bytes(e.resp)[e.hdrLen:]
}

func (s *Store) unpackHeader(e *slot) map[string]string {
	h := map[string]string{}
	b := s.bytes(e.resp)[:e.hdrLen]
	next := func() string {
		n, w := binary.Uvarint(b)
		v := string(b[w : w+int(n)])
		b = b[w+int(n):]
		return v
	}
	for len(b) > 0 {
		k := next()
		h[k] = next()
	}
	return h
}

// drop deletes a record and counts its bytes as garbage.
func (s *Store) drop(k scopeHash, e *slot) {
	delete(s.records, k)
	s.free(e.fp)
	s.free(e.resp)
}

// maybeCompact copies the live bytes into new chunks once garbage is more than half of
// the arena. The old chunks are left as they are: bodies returned from them stay valid.
func (s *Store) maybeCompact() {
	if s.size < compactMin || 2*s.garbage <= s.size {
		return
	}
	old := s.chunks
	s.chunks, s.cur, s.size, s.garbage = nil, -1, 0, 0
	move := func(sp span) span {
		b, moved := s.alloc(sp.n)
		end := int(sp.off) + sp.n
		_ = append(b, old[sp.c][sp.off:end]...)
		return moved
	}
	for k, e := range s.records {
		e.fp, e.resp = move(e.fp), move(e.resp)
		s.records[k] = e
	}
}

// Acquire implements idempotency.Store with idempotency.Decide.
func (s *Store) Acquire(_ context.Context, req idempotency.AcquireRequest) (idempotency.Acquisition, error) {
	key := req.Scope.Hash()
	s.mu.Lock()
	defer s.mu.Unlock()
	var existing *idempotency.Record
	old, ok := s.records[key]
	if ok {
		r := s.unpack(&old, req.Scope)
		existing = &r
	}
	state, next, write := idempotency.Decide(existing, req, s.fences+1)
	if write {
		s.fences++
		s.records[key] = s.put(old, &next)
		s.maybeCompact()
		return idempotency.Acquisition{State: state, Record: next}, nil
	}
	return idempotency.Acquisition{State: state, Record: *existing}, nil
}

// Complete implements idempotency.Store.
func (s *Store) Complete(_ context.Context, sc idempotency.Scope, fence int64, resp idempotency.Response, effects []idempotency.Effect, checkFence bool) error {
	key := sc.Hash()
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
	s.putResponse(&e, &resp)
	s.records[key] = e
	s.maybeCompact()
	return nil
}

// Release implements idempotency.Store.
func (s *Store) Release(_ context.Context, sc idempotency.Scope, fence int64) error {
	key := sc.Hash()
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.records[key]; ok && e.fence == fence && !e.completed {
		s.drop(key, &e)
		s.maybeCompact()
	}
	return nil
}

// Lookup implements idempotency.Store.
func (s *Store) Lookup(_ context.Context, sc idempotency.Scope, now time.Time) (idempotency.Record, bool, error) {
	key := sc.Hash()
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.records[key]
	if !ok || now.UnixNano() >= e.expires {
		return idempotency.Record{}, false, nil
	}
	return s.unpack(&e, sc), true, nil
}

// SetFingerprint implements idempotency.Store.
func (s *Store) SetFingerprint(_ context.Context, sc idempotency.Scope, fingerprint string) error {
	key := sc.Hash()
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.records[key]; ok {
		s.putFingerprint(&e, fingerprint)
		s.records[key] = e
		s.maybeCompact()
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
		s.byID[ledgerKey{e.Kind, e.ID}] = effectRef{k, len(s.effects[k])}
		s.effects[k] = append(s.effects[k], e)
	}
}

// Effect implements idempotency.Store.
func (s *Store) Effect(_ context.Context, kind, id string) (idempotency.Effect, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ref, ok := s.byID[ledgerKey{kind, id}]
	if !ok {
		return idempotency.Effect{}, false, nil
	}
	return s.effects[ref.list][ref.i], true, nil
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
			s.drop(k, &e)
			n++
		}
	}
	s.maybeCompact()
	return n, nil
}

// Close implements idempotency.Store; the maps are left to the garbage collector.
func (s *Store) Close() error { return nil }
