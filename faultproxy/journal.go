package faultproxy

import (
	"hash/maphash"
	"sort"
	"sync"
	"sync/atomic"
)

// journal is the bounded record of attempts plus the per-key attempt counters.
//
// It is built so that parallel clients do not serialise on one lock: a record takes a
// sequence number from an atomic counter and is written into its own ring slot (one small
// lock per slot), and attempt counters are sharded by key. Reset swaps in a fresh epoch,
// so an attempt in flight during Reset lands in the discarded epoch.
type journal struct {
	capacity int
	epoch    atomic.Pointer[journalEpoch]
	seed     maphash.Seed
}

type journalEpoch struct {
	seq      atomic.Uint64
	slots    []journalSlot
	attempts [attemptShards]attemptShard
}

type journalSlot struct {
	mu  sync.Mutex
	rec *Record
}

const attemptShards = 64

type attemptShard struct {
	mu sync.Mutex
	n  map[string]int
}

func newJournal(capacity int) *journal {
	j := &journal{capacity: capacity, seed: maphash.MakeSeed()}
	j.reset()
	return j
}

func (j *journal) reset() {
	j.epoch.Store(&journalEpoch{slots: make([]journalSlot, j.capacity)})
}

func (j *journal) current() *journalEpoch { return j.epoch.Load() }

// nextAttempt returns the 1-based ordinal of this attempt for key in this epoch.
func (j *journal) nextAttempt(e *journalEpoch, key string) int {
	sh := &e.attempts[maphash.String(j.seed, key)%attemptShards]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.n == nil {
		sh.n = make(map[string]int)
	}
	sh.n[key]++
	return sh.n[key]
}

// append numbers rec and stores it, overwriting the oldest record when full.
func (e *journalEpoch) append(rec *Record) {
	if len(e.slots) == 0 {
		rec.Seq = e.seq.Add(1)
		return
	}
	seq := e.seq.Add(1)
	rec.Seq = seq
	slot := &e.slots[(seq-1)%uint64(len(e.slots))]
	slot.mu.Lock()
	// A slow writer must not overwrite a newer record that wrapped around before it.
	if slot.rec == nil || slot.rec.Seq < seq {
		slot.rec = rec
	}
	slot.mu.Unlock()
}

// JournalStats describes the journal's bounds: Total records appended since the last
// Reset, how many were Dropped to stay within Capacity.
type JournalStats struct {
	Total    uint64 `json:"total"`
	Dropped  uint64 `json:"dropped"`
	Capacity int    `json:"capacity"`
}

func (j *journal) stats() JournalStats {
	e := j.current()
	total := e.seq.Load()
	st := JournalStats{Total: total, Capacity: j.capacity}
	if total > uint64(j.capacity) {
		st.Dropped = total - uint64(j.capacity)
	}
	return st
}

// query returns copies of the matching records in sequence order.
func (j *journal) query(q JournalQuery) []Record {
	e := j.current()
	out := make([]Record, 0, 16)
	for i := range e.slots {
		slot := &e.slots[i]
		slot.mu.Lock()
		rec := slot.rec
		slot.mu.Unlock()
		if rec == nil || rec.Seq <= q.Since || (q.Key != "" && rec.Key != q.Key) {
			continue
		}
		out = append(out, *rec)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Seq < out[b].Seq })
	return out
}
