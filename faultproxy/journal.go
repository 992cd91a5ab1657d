package faultproxy

import (
	"hash/maphash"
	"sort"
	"sync"
	"sync/atomic"
)

// journal is the bounded record of attempts plus the per-key attempt counters.
//
// Both are bounded by bytes, not only by count, because what they hold follows client
// input (a header, a key, a path can each be a megabyte): the records by
// Config.JournalBytes (and Config.JournalCapacity records), each record clipped to fixed
// bounds first (recordHeaders, Exchange.Upstream); the oldest records are evicted and
// counted as dropped. The attempt counters by Config.AttemptKeyBytes (attemptShard).
//
// Appending takes one short lock (the ring, in sequence order); a query copies the
// matching records (shallow: a record is immutable once appended) under the same lock.
// Reset swaps in a fresh epoch, so an attempt in flight during Reset lands in the
// discarded epoch and the old records are garbage at once.
type journal struct {
	capacity     int
	byteBudget   int64
	attemptBytes int64
	epoch        atomic.Pointer[journalEpoch]
	seed         maphash.Seed
}

type journalEpoch struct {
	mu      sync.Mutex
	ring    []sizedRecord // circular; grows by doubling up to capacity
	head, n int
	bytes   int64
	seq     uint64
	dropped uint64

	attempts  [attemptShards]attemptShard
	forgotten atomic.Uint64
}

type sizedRecord struct {
	rec  *Record
	size int64
}

const attemptShards = 64

func newJournal(capacity int, byteBudget, attemptBytes int64) *journal {
	j := &journal{capacity: capacity, byteBudget: byteBudget, attemptBytes: attemptBytes, seed: maphash.MakeSeed()}
	j.reset()
	return j
}

func (j *journal) reset() {
	e := &journalEpoch{}
	shardBudget := max(j.attemptBytes/attemptShards, 1)
	for i := range e.attempts {
		e.attempts[i].budget = shardBudget
	}
	j.epoch.Store(e)
}

func (j *journal) current() *journalEpoch { return j.epoch.Load() }

// attemptShard counts attempts per key in two generations: a key is looked up in the
// current one, then the previous one (and moved forward). When the current generation
// outgrows the shard's byte budget it becomes the previous one and the keys of the old
// previous one — those not seen for a whole generation — are forgotten and counted.
// It is a least-recently-used bound at O(1) per attempt; a forgotten key's next attempt
// counts as attempt 1 again.
type attemptShard struct {
	mu        sync.Mutex
	cur, prev map[string]int
	bytes     int64 // of cur
	budget    int64
}

// attemptEntryBytes is what a counter costs besides its key (map slot, string header,
// count), as counted against Config.AttemptKeyBytes.
const attemptEntryBytes = 48

// nextAttempt returns the 1-based ordinal of this attempt for key in this epoch.
func (j *journal) nextAttempt(e *journalEpoch, key string) int {
	sh := &e.attempts[maphash.String(j.seed, key)%attemptShards]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.cur == nil {
		sh.cur = make(map[string]int)
	}
	if n, ok := sh.cur[key]; ok {
		sh.cur[key] = n + 1
		return n + 1
	}
	n := 1
	if prev, ok := sh.prev[key]; ok {
		n = prev + 1
		delete(sh.prev, key)
	}
	sh.bytes += int64(len(key)) + attemptEntryBytes
	if sh.bytes > sh.budget && len(sh.cur) > 0 {
		e.forgotten.Add(uint64(len(sh.prev)))
		// The next generation will hold about as many keys as this one: sized for them
		// at once, it does not grow step by step (about a tenth of a new key's cost).
		sh.prev, sh.cur, sh.bytes = sh.cur, make(map[string]int, len(sh.cur)), int64(len(key))+attemptEntryBytes
	}
	sh.cur[key] = n
	return n
}

// append numbers rec and stores it, evicting the oldest records while the journal holds
// more than its capacity or its byte budget (the newest record always stays).
// headerBytes is the headers' share of the record's size (recordHeaders counted it).
func (j *journal) append(e *journalEpoch, rec *Record, headerBytes int) {
	size := rec.sizeBesidesHeaders() + int64(headerBytes)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.seq++
	rec.Seq = e.seq
	if e.n == len(e.ring) {
		if e.n == j.capacity {
			e.evictOldest()
		} else {
			e.grow(j.capacity)
		}
	}
	e.ring[(e.head+e.n)%len(e.ring)] = sizedRecord{rec: rec, size: size}
	e.n++
	e.bytes += size
	for e.bytes > j.byteBudget && e.n > 1 {
		e.evictOldest()
	}
}

func (e *journalEpoch) evictOldest() {
	old := &e.ring[e.head]
	e.bytes -= old.size
	*old = sizedRecord{}
	e.head = (e.head + 1) % len(e.ring)
	e.n--
	e.dropped++
}

func (e *journalEpoch) grow(capacity int) {
	next := make([]sizedRecord, min(max(2*len(e.ring), 256), capacity))
	for i := range e.n {
		next[i] = e.ring[(e.head+i)%len(e.ring)]
	}
	e.ring, e.head = next, 0
}

// at is the i-th oldest record held.
func (e *journalEpoch) at(i int) *Record { return e.ring[(e.head+i)%len(e.ring)].rec }

// JournalStats describes the journal's bounds: Total records appended since the last
// Reset, how many were Dropped to stay within Capacity records and ByteBudget bytes,
// the Bytes the records held take now, and ForgottenKeys: keys whose attempt counter was
// forgotten to stay within the counters' byte budget.
type JournalStats struct {
	Total         uint64 `json:"total"`
	Dropped       uint64 `json:"dropped"`
	Capacity      int    `json:"capacity"`
	Bytes         int64  `json:"bytes"`
	ByteBudget    int64  `json:"byte_budget"`
	ForgottenKeys uint64 `json:"forgotten_keys"`
}

func (j *journal) stats() JournalStats {
	e := j.current()
	e.mu.Lock()
	defer e.mu.Unlock()
	return JournalStats{Total: e.seq, Dropped: e.dropped, Capacity: j.capacity, Bytes: e.bytes,
		ByteBudget: j.byteBudget, ForgottenKeys: e.forgotten.Load()}
}

// query returns copies of the matching records in sequence order, at most q.Limit of
// them (0: all), and whether more match after the last one returned.
func (j *journal) query(q JournalQuery) ([]Record, bool) {
	e := j.current()
	e.mu.Lock()
	defer e.mu.Unlock()
	// The ring is in sequence order: skip to the first record after Since.
	first := sort.Search(e.n, func(i int) bool { return e.at(i).Seq > q.Since })
	out := make([]Record, 0, min(e.n-first, 64))
	for i := first; i < e.n; i++ {
		rec := e.at(i)
		if q.Key != "" && rec.Key != q.Key {
			continue
		}
		if q.Limit > 0 && len(out) == q.Limit {
			return out, true
		}
		out = append(out, *rec)
	}
	return out, false
}

// recordOverhead approximates a Record's own size and its map's, as counted against
// the byte budget besides its strings and body.
const recordOverhead = 400

// headerEntryBytes is what a recorded header costs besides its name and value.
const headerEntryBytes = 32

// sizeBesidesHeaders is what the record costs the journal's byte budget, but for its
// headers (counted when they were recorded).
func (r *Record) sizeBesidesHeaders() int64 {
	return int64(recordOverhead + len(r.Method) + len(r.Path) + len(r.Key) + len(r.BodySHA256) + len(r.Rule) +
		len(r.Fault) + len(r.UpstreamBody) + len(r.UpstreamContentEncoding) + len(r.ClientResult) + len(r.Outcome) + len(r.Note) +
		len(r.RPCID) + len(r.RPCMethod) + len(r.Class))
}
