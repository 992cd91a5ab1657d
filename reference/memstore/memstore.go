// Package memstore is the in-memory idempotency.Store: the quick path and the default of
// the reference server. Nothing survives the process.
//
// Locks: records are spread over shards by their scope's hash, each shard with its own
// mutex, map and arena; the effects (the ledger) have one mutex of their own, taken after
// a shard's and never before. An operation on one scope holds its shard's lock from start
// to end, which is the transaction the contract asks for. Complete adds the effects while
// it holds the shard's lock: whoever has seen them in the ledger and then asks about the
// key waits for that lock and finds the key completed. Requests on different keys do not
// wait for each other, and a compaction stalls one shard only.
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
//
// Memory is bounded by bytes: the store counts what it holds — each shard's arena, a
// fixed estimate per record slot its map has grown to, each effect's bytes and a fixed
// estimate for its place in the ledger's maps — and once that reaches its budget
// (DefaultMaxBytes, WithMaxBytes) it records no new key: Acquire returns
// idempotency.ErrStoreFull (the server answers 507) before anything is written. Effects
// committed without a key (unkeyed requests, the outbox's delivery marks) get a
// sixteenth more, so the deliveries of refunds committed before the store filled can
// still be marked. Expired keys free their bytes when DeleteExpired drops them (a
// shard's map is rebuilt once it holds a quarter of the slots it grew to; Go's maps
// never shrink); the ledger is never trimmed: it is the side-effect record the harness
// counts, and a refund it forgot would read as lost.
package memstore

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idemproof/idemproof/reference/idempotency"
)

// Store keeps records in shards and effects in maps (see the package doc for the locks).
type Store struct {
	shards []shard      // a power of two of them
	fences atomic.Int64 // last fencing token handed out

	maxBytes int64
	held     atomic.Int64 // the bytes the store counts as held (see the package doc)

	ledgerMu sync.Mutex
	effects  map[ledgerKey][]idempotency.Effect
	byID     map[ledgerKey]effectRef // by {kind, ID}: where in effects the effect is
}

// shard holds the records whose scope hash falls to it, and their arena.
type shard struct {
	mu      sync.Mutex
	records map[scopeHash]slot
	chunks  [][]byte // the arena: fingerprints, packed headers and bodies, only ever appended to
	cur     int      // the chunk small items are appended to; -1 for none
	size    int      // bytes of the arena accounted for: live, plus garbage
	garbage int      // bytes no slot refers to any more, and chunk tails left unused
	slots   int      // the most records the map held since it was made: its memory
	_       [64]byte // keeps neighbouring shards' mutexes off one cache line
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
	// shardCount is the number of shards of New's store: enough that the requests of a
	// many-core server rarely meet on one lock, few enough that the arenas' partly filled
	// chunks stay small (at most shardCount*chunkSize).
	shardCount = 16
	// chunkSize is the size of an arena chunk; an item larger than chunkSize/8 gets a
	// chunk of its own, so at most an eighth of a chunk is left unused at its end.
	chunkSize = 128 << 10
	// compactMin is the arena size below which garbage is not worth a compaction.
	compactMin = 2 * chunkSize
)

// DefaultMaxBytes is the byte budget of New's store: about 95,000 of the reference
// server's refunds whose keys are all within their retention, 135,000 whose keys expired
// (the ledger stays). A process holding a full store has about 2.5 times it resident
// (Go's collector lets the heap grow to twice what is live before it runs): `serve` stays
// under 300 MB.
const DefaultMaxBytes = 96 << 20

// Estimates of the memory behind what the store counts, measured with the refunds of
// the reference server (TestHeldBytesFollowTheHeap holds them to the heap): a record's
// map slot (its 32-byte hash, its slot and the map's own overhead), and an effect's
// struct in its entity's list (which grows by doubling) and its two map entries.
const (
	recordSlotBytes = 180
	effectBytes     = 320
)

// Option configures a Store.
type Option func(*Store)

// WithMaxBytes sets the store's byte budget (DefaultMaxBytes when not given; at most
// what the machine can hold, at least 1 MiB).
func WithMaxBytes(n int64) Option { return func(s *Store) { s.maxBytes = max(n, 1<<20) } }

// New returns an empty store.
func New(opts ...Option) *Store { return newStore(shardCount, opts...) }

// newStore returns an empty store of n shards, n a power of two.
func newStore(n int, opts ...Option) *Store {
	s := &Store{shards: make([]shard, n), effects: map[ledgerKey][]idempotency.Effect{}, byID: map[ledgerKey]effectRef{},
		maxBytes: DefaultMaxBytes}
	for _, o := range opts {
		o(s)
	}
	for i := range s.shards {
		s.shards[i].records, s.shards[i].cur = map[scopeHash]slot{}, -1
	}
	return s
}

// Bytes is what the store counts as held: its records' arenas and map slots, and its
// ledger (see the package doc).
func (s *Store) Bytes() int64 { return s.held.Load() }

// MaxBytes is the store's byte budget.
func (s *Store) MaxBytes() int64 { return s.maxBytes }

// full: the store holds its budget (plus extra, for effects without a key).
func (s *Store) full(extra int64) bool { return s.held.Load() >= s.maxBytes+extra }

// held is what a shard counts: its arena and the slots its map grew to.
func (sh *shard) held() int64 { return int64(sh.size) + int64(sh.slots)*recordSlotBytes }

// unlock releases a shard locked by shardOf, counting the change in what it holds since
// it held before.
func (s *Store) unlock(sh *shard, before int64) {
	s.held.Add(sh.held() - before)
	sh.mu.Unlock()
}

// shardOf returns the shard of a scope's hash, locked, and the hash. The hash is a
// SHA-256, so its first byte spreads scopes evenly.
func (s *Store) shardOf(sc idempotency.Scope) (*shard, scopeHash) {
	key := sc.Hash()
	sh := &s.shards[int(key[0])&(len(s.shards)-1)]
	sh.mu.Lock()
	return sh, key
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
func (sh *shard) bytes(sp span) []byte {
	if sp.n == 0 {
		return []byte{}
	}
	end := int(sp.off) + sp.n
	return sh.chunks[sp.c][sp.off:end:end]
}

// alloc reserves n bytes of the arena and returns them (empty, with room for n) and
// their span. Bytes once written are never written again.
func (sh *shard) alloc(n int) ([]byte, span) {
	if n == 0 {
		return nil, span{}
	}
	sh.size += n
	if n > chunkSize/8 {
		c := make([]byte, n)
		sh.chunks = append(sh.chunks, c)
		return c[:0], span{c: uint32(len(sh.chunks) - 1), n: n}
	}
	if sh.cur < 0 || cap(sh.chunks[sh.cur])-len(sh.chunks[sh.cur]) < n {
		if sh.cur >= 0 {
			tail := cap(sh.chunks[sh.cur]) - len(sh.chunks[sh.cur])
			sh.size += tail
			sh.garbage += tail
		}
		sh.chunks = append(sh.chunks, make([]byte, 0, chunkSize))
		sh.cur = len(sh.chunks) - 1
	}
	c := sh.chunks[sh.cur]
	off := len(c)
	sh.chunks[sh.cur] = c[:off+n]
	return c[off : off : off+n], span{c: uint32(sh.cur), off: uint32(off), n: n}
}

// free counts the bytes of sp as garbage.
func (sh *shard) free(sp span) { sh.garbage += sp.n }

// putFingerprint stores fp in e, keeping e's bytes when they already say fp.
func (sh *shard) putFingerprint(e *slot, fp string) {
	if e.fp.n == len(fp) && (len(fp) == 0 || string(sh.bytes(e.fp)) == fp) {
		return
	}
	sh.free(e.fp)
	b, sp := sh.alloc(len(fp))
	_ = append(b, fp...)
	e.fp = sp
}

// putResponse stores resp as e's response, replacing any it had. The headers are
// packed as length-prefixed names and values.
func (sh *shard) putResponse(e *slot, resp *idempotency.Response) {
	var stack [256]byte
	hdr := stack[:0]
	for k, v := range resp.Header {
		hdr = binary.AppendUvarint(hdr, uint64(len(k)))
		hdr = append(hdr, k...)
		hdr = binary.AppendUvarint(hdr, uint64(len(v)))
		hdr = append(hdr, v...)
	}
	sh.free(e.resp)
	b, sp := sh.alloc(len(hdr) + len(resp.Body))
	_ = append(append(b, hdr...), resp.Body...)
	e.resp, e.hdrLen, e.status, e.bodyNil = sp, len(hdr), resp.Status, resp.Body == nil
}

// put writes r over old (the zero slot when there was none) and returns the result.
func (sh *shard) put(old slot, r *idempotency.Record) slot {
	e := old
	e.created, e.expires, e.lockedUntil = nanos(r.Created), nanos(r.ExpiresAt), nanos(r.LockedUntil)
	e.fence, e.completed = r.Fence, r.Completed
	sh.putFingerprint(&e, r.Fingerprint)
	if r.Response != nil {
		sh.putResponse(&e, r.Response)
	} else {
		sh.free(e.resp)
		e.resp, e.hdrLen, e.status, e.bodyNil = span{}, 0, 0, false
	}
	return e
}

func (sh *shard) unpack(e *slot, sc idempotency.Scope) idempotency.Record {
	r := idempotency.Record{
		Scope: sc, Fingerprint: string(sh.bytes(e.fp)),
		Created: fromNanos(e.created), ExpiresAt: fromNanos(e.expires),
		LockedUntil: fromNanos(e.lockedUntil), Fence: e.fence, Completed: e.completed,
	}
	if e.completed {
		r.Response = &idempotency.Response{Status: e.status, Header: sh.unpackHeader(e), Body: sh.body(e)}
	}
	return r
}

// body shares the arena: its bytes are never written again.
func (sh *shard) body(e *slot) []byte {
	if e.bodyNil {
		return nil
	}
	return sh.bytes(e.resp)[e.hdrLen:]
}

func (sh *shard) unpackHeader(e *slot) map[string]string {
	h := map[string]string{}
	b := sh.bytes(e.resp)[:e.hdrLen]
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
func (sh *shard) drop(k scopeHash, e *slot) {
	delete(sh.records, k)
	sh.free(e.fp)
	sh.free(e.resp)
}

// maybeCompact copies the live bytes into new chunks once garbage is more than half of
// the arena. The old chunks are left as they are: bodies returned from them stay valid.
func (sh *shard) maybeCompact() {
	if len(sh.records) == 0 && sh.size > 0 {
		// Nothing is live: the whole arena goes, however small.
		sh.chunks, sh.cur, sh.size, sh.garbage = nil, -1, 0, 0
		return
	}
	if sh.size < compactMin || 2*sh.garbage <= sh.size {
		return
	}
	old := sh.chunks
	sh.chunks, sh.cur, sh.size, sh.garbage = nil, -1, 0, 0
	move := func(sp span) span {
		b, moved := sh.alloc(sp.n)
		end := int(sp.off) + sp.n
		_ = append(b, old[sp.c][sp.off:end]...)
		return moved
	}
	for k, e := range sh.records {
		e.fp, e.resp = move(e.fp), move(e.resp)
		sh.records[k] = e
	}
}

// Acquire implements idempotency.Store with idempotency.Decide.
func (s *Store) Acquire(_ context.Context, req idempotency.AcquireRequest) (idempotency.Acquisition, error) {
	sh, key := s.shardOf(req.Scope)
	defer s.unlock(sh, sh.held())
	var existing *idempotency.Record
	old, ok := sh.records[key]
	if ok {
		r := sh.unpack(&old, req.Scope)
		existing = &r
	}
	state, next := idempotency.Decide(existing, req, 0)
	if state == idempotency.Acquired {
		if s.full(0) {
			return idempotency.Acquisition{}, fmt.Errorf("record key: %w (the memory store holds its budget of %d bytes)", idempotency.ErrStoreFull, s.maxBytes)
		}
		next.Fence = s.fences.Add(1) // only a written record uses up a token
		sh.records[key] = sh.put(old, &next)
		sh.slots = max(sh.slots, len(sh.records))
		sh.maybeCompact()
		return idempotency.Acquisition{State: state, Record: next}, nil
	}
	return idempotency.Acquisition{State: state, Record: *existing}, nil
}

// Complete implements idempotency.Store.
func (s *Store) Complete(_ context.Context, sc idempotency.Scope, fence int64, resp idempotency.Response, effects []idempotency.Effect, checkFence bool) error {
	sh, key := s.shardOf(sc)
	defer s.unlock(sh, sh.held())
	e, ok := sh.records[key]
	if checkFence && (!ok || e.fence != fence || e.completed) {
		return idempotency.ErrFenced
	}
	s.addEffects(effects) // under the shard's lock: see the package doc
	if !ok {
		return nil // no-fencing: the key is gone, the effects still land
	}
	e.completed, e.lockedUntil = true, 0
	sh.putResponse(&e, &resp)
	sh.records[key] = e
	sh.maybeCompact()
	return nil
}

// Release implements idempotency.Store.
func (s *Store) Release(_ context.Context, sc idempotency.Scope, fence int64) error {
	sh, key := s.shardOf(sc)
	defer s.unlock(sh, sh.held())
	if e, ok := sh.records[key]; ok && e.fence == fence && !e.completed {
		sh.drop(key, &e)
		sh.maybeCompact()
	}
	return nil
}

// Lookup implements idempotency.Store.
func (s *Store) Lookup(_ context.Context, sc idempotency.Scope, now time.Time) (idempotency.Record, bool, error) {
	sh, key := s.shardOf(sc)
	defer sh.mu.Unlock()
	e, ok := sh.records[key]
	if !ok || now.UnixNano() >= e.expires {
		return idempotency.Record{}, false, nil
	}
	return sh.unpack(&e, sc), true, nil
}

// SetFingerprint implements idempotency.Store.
func (s *Store) SetFingerprint(_ context.Context, sc idempotency.Scope, fingerprint string) error {
	sh, key := s.shardOf(sc)
	defer s.unlock(sh, sh.held())
	if e, ok := sh.records[key]; ok {
		sh.putFingerprint(&e, fingerprint)
		sh.records[key] = e
		sh.maybeCompact()
	}
	return nil
}

// CommitEffects implements idempotency.Store. Once the store holds its budget and a
// sixteenth more, it commits nothing and returns idempotency.ErrStoreFull.
func (s *Store) CommitEffects(_ context.Context, effects []idempotency.Effect) error {
	if len(effects) > 0 && s.full(s.maxBytes/16) {
		return fmt.Errorf("commit effects: %w (the memory store holds its budget of %d bytes)", idempotency.ErrStoreFull, s.maxBytes)
	}
	s.addEffects(effects)
	return nil
}

func (s *Store) addEffects(effects []idempotency.Effect) {
	if len(effects) == 0 {
		return
	}
	s.ledgerMu.Lock()
	defer s.ledgerMu.Unlock()
	n := 0
	for _, e := range effects {
		k := ledgerKey{e.Kind, e.Entity}
		s.byID[ledgerKey{e.Kind, e.ID}] = effectRef{k, len(s.effects[k])}
		s.effects[k] = append(s.effects[k], e)
		n += effectBytes + len(e.Kind) + len(e.ID) + len(e.Entity) + len(e.Principal) + len(e.Data)
	}
	s.held.Add(int64(n))
}

// Effect implements idempotency.Store.
func (s *Store) Effect(_ context.Context, kind, id string) (idempotency.Effect, bool, error) {
	s.ledgerMu.Lock()
	defer s.ledgerMu.Unlock()
	ref, ok := s.byID[ledgerKey{kind, id}]
	if !ok {
		return idempotency.Effect{}, false, nil
	}
	return s.effects[ref.list][ref.i], true, nil
}

// Effects implements idempotency.Store.
func (s *Store) Effects(_ context.Context, kind, entity string) ([]idempotency.Effect, error) {
	s.ledgerMu.Lock()
	defer s.ledgerMu.Unlock()
	return append([]idempotency.Effect(nil), s.effects[ledgerKey{kind, entity}]...), nil
}

// DeleteExpired implements idempotency.Store, one shard at a time.
func (s *Store) DeleteExpired(_ context.Context, now time.Time) (int, error) {
	cutoff := now.UnixNano()
	n := 0
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		before := sh.held()
		for k, e := range sh.records {
			if cutoff >= e.expires {
				sh.drop(k, &e)
				n++
			}
		}
		sh.maybeCompact()
		sh.maybeShrink()
		s.unlock(sh, before)
	}
	return n, nil
}

// shrinkMin is the map size below which a shard's map is not worth rebuilding.
const shrinkMin = 256

// maybeShrink rebuilds the shard's map once it holds a quarter of the slots it grew to:
// Go's maps keep their memory when entries are deleted, so after a burst of keys expired
// only a new map gives it back.
func (sh *shard) maybeShrink() {
	if sh.slots < shrinkMin || len(sh.records) > sh.slots/4 {
		return
	}
	m := make(map[scopeHash]slot, len(sh.records))
	for k, e := range sh.records {
		m[k] = e
	}
	sh.records, sh.slots = m, len(m)
}

// Close implements idempotency.Store; the maps are left to the garbage collector.
func (s *Store) Close() error { return nil }
