package memstore

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/idemproof/idemproof/reference/idempotency"
	"github.com/stretchr/testify/require"
)

// TestArenaCompaction churns records until the arena is compacted several times and
// checks that live records survive intact and that bodies returned earlier never change.
func TestArenaCompaction(t *testing.T) {
	ctx := context.Background()
	s := newStore(1) // one shard: the test follows one arena's accounting exactly
	a := &s.shards[0]
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	req := func(i int) idempotency.AcquireRequest {
		return idempotency.AcquireRequest{
			Scope:       idempotency.Scope{Principal: "p", Endpoint: "POST /x", Key: fmt.Sprint("k-", i)},
			Fingerprint: fmt.Sprint("fp-", i), Now: t0, Retention: time.Hour, LockTimeout: time.Minute,
		}
	}
	body := func(i int) []byte { return bytes.Repeat([]byte{byte(i)}, 200+i%50) }
	resp := func(i int) idempotency.Response {
		return idempotency.Response{Status: 201, Header: map[string]string{"Location": fmt.Sprint("/x/", i), "Content-Type": "a/b"}, Body: body(i)}
	}
	type kept struct {
		i    int
		body []byte
	}
	var held []kept
	compactions, lastSize := 0, 0
	for i := range 5000 {
		acq, err := s.Acquire(ctx, req(i))
		require.NoError(t, err)
		require.Equal(t, idempotency.Acquired, acq.State)
		if i%3 == 0 {
			require.NoError(t, s.Release(ctx, req(i).Scope, acq.Record.Fence))
			continue
		}
		require.NoError(t, s.Complete(ctx, req(i).Scope, acq.Record.Fence, resp(i), nil, true))
		if i%2 == 0 {
			require.NoError(t, s.SetFingerprint(ctx, req(i).Scope, fmt.Sprint("fp-", i, "-changed")))
		}
		if i%7 == 1 {
			r, ok, err := s.Lookup(ctx, req(i).Scope, t0)
			require.NoError(t, err)
			require.True(t, ok)
			held = append(held, kept{i, r.Response.Body})
		}
		if i%5 == 1 { // a short-lived key with a large body: deleted by DeleteExpired below
			r := req(i + 1_000_000)
			r.Retention = time.Second
			acq, err := s.Acquire(ctx, r)
			require.NoError(t, err)
			big := resp(i)
			big.Body = bytes.Repeat(big.Body, 20)
			require.NoError(t, s.Complete(ctx, r.Scope, acq.Record.Fence, big, nil, true))
			_, err = s.DeleteExpired(ctx, t0.Add(time.Second))
			require.NoError(t, err)
		}
		a.mu.Lock()
		if a.size < lastSize {
			compactions++
		}
		lastSize = a.size
		if a.size >= compactMin {
			require.LessOrEqual(t, 2*a.garbage, a.size)
		}
		require.LessOrEqual(t, a.garbage, a.size)
		a.mu.Unlock()
	}
	require.Greater(t, compactions, 0)
	for _, h := range held {
		require.Equal(t, body(h.i), h.body, "a returned body changed")
	}
	for i := range 5000 {
		r, ok, err := s.Lookup(ctx, req(i).Scope, t0)
		require.NoError(t, err)
		if i%3 == 0 {
			require.False(t, ok)
			continue
		}
		require.True(t, ok)
		fp := fmt.Sprint("fp-", i)
		if i%2 == 0 {
			fp += "-changed"
		}
		require.Equal(t, fp, r.Fingerprint)
		require.Equal(t, resp(i), *r.Response)
	}
	n, err := s.DeleteExpired(ctx, t0.Add(time.Hour))
	require.NoError(t, err)
	require.Equal(t, 5000-1667, n)
	require.Zero(t, a.size)
	require.Empty(t, a.chunks)
}

func TestBodyNilOrEmpty(t *testing.T) {
	ctx := context.Background()
	s := New()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for i, b := range [][]byte{nil, {}} {
		sc := idempotency.Scope{Principal: "p", Endpoint: "POST /x", Key: fmt.Sprint(i)}
		acq, err := s.Acquire(ctx, idempotency.AcquireRequest{Scope: sc, Fingerprint: "f", Now: t0, Retention: time.Hour, LockTimeout: time.Minute})
		require.NoError(t, err)
		require.NoError(t, s.Complete(ctx, sc, acq.Record.Fence, idempotency.Response{Status: 204, Body: b}, nil, true))
		r, ok, err := s.Lookup(ctx, sc, t0)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, b == nil, r.Response.Body == nil)
		require.Empty(t, r.Response.Body)
		require.Equal(t, map[string]string{}, r.Response.Header)
	}
}

// TestEmptyFingerprintAndLargeBody: an empty fingerprint (the no-fingerprint flaw) and a
// body larger than a chunk survive a compaction.
func TestEmptyFingerprintAndLargeBody(t *testing.T) {
	ctx := context.Background()
	s := newStore(1)
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	large := bytes.Repeat([]byte("0123456789"), chunkSize/5)
	sc := idempotency.Scope{Principal: "p", Endpoint: "POST /x", Key: "large"}
	acq, err := s.Acquire(ctx, idempotency.AcquireRequest{Scope: sc, Now: t0, Retention: time.Hour, LockTimeout: time.Minute})
	require.NoError(t, err)
	require.NoError(t, s.Complete(ctx, sc, acq.Record.Fence, idempotency.Response{Status: 201, Body: large}, nil, true))
	again, err := s.Acquire(ctx, idempotency.AcquireRequest{Scope: sc, Now: t0, Retention: time.Hour, LockTimeout: time.Minute})
	require.NoError(t, err)
	require.Equal(t, idempotency.Completed, again.State)
	require.Equal(t, "", again.Record.Fingerprint)
	require.Equal(t, large, again.Record.Response.Body)
	// Garbage enough to compact: large bodies of released keys.
	for i := range 10 {
		sc := idempotency.Scope{Principal: "p", Endpoint: "POST /x", Key: fmt.Sprint(i)}
		acq, err := s.Acquire(ctx, idempotency.AcquireRequest{Scope: sc, Now: t0, Retention: time.Second, LockTimeout: time.Minute})
		require.NoError(t, err)
		require.NoError(t, s.Complete(ctx, sc, acq.Record.Fence, idempotency.Response{Status: 201, Body: large}, nil, true))
	}
	n, err := s.DeleteExpired(ctx, t0.Add(time.Second))
	require.NoError(t, err)
	require.Equal(t, 10, n)
	require.Equal(t, len(large), s.shards[0].size, "compacted to the one live record")
	r, ok, err := s.Lookup(ctx, sc, t0)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "", r.Fingerprint)
	require.Equal(t, large, r.Response.Body)
	require.Equal(t, large, again.Record.Response.Body)
}

// TestShardsSpreadAndCompactAlone: New's store spreads keys over all its shards, hands
// out fencing tokens store-wide, and when one shard's keys expire that shard alone is
// compacted.
func TestShardsSpreadAndCompactAlone(t *testing.T) {
	ctx := context.Background()
	s := New()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	body := bytes.Repeat([]byte("x"), 4096)
	var scopes []idempotency.Scope
	for i := range 2000 {
		sc := idempotency.Scope{Principal: "p", Endpoint: "POST /x", Key: fmt.Sprint("k-", i)}
		acq, err := s.Acquire(ctx, idempotency.AcquireRequest{Scope: sc, Fingerprint: "f", Now: t0, Retention: time.Hour, LockTimeout: time.Minute})
		require.NoError(t, err)
		require.Equal(t, int64(i+1), acq.Record.Fence, "tokens are store-wide, one per acquisition")
		require.NoError(t, s.Complete(ctx, sc, acq.Record.Fence, idempotency.Response{Status: 201, Body: body}, nil, true))
		scopes = append(scopes, sc)
	}
	for i := range s.shards {
		require.NotEmpty(t, s.shards[i].records, "shard %d got no key", i)
	}
	// Expire every key of shard 0 only: it compacts to nothing, the others keep theirs.
	first := &s.shards[0]
	for k, e := range first.records {
		e.expires = t0.UnixNano()
		first.records[k] = e
	}
	n, err := s.DeleteExpired(ctx, t0)
	require.NoError(t, err)
	require.Positive(t, n)
	require.Zero(t, first.size)
	for i := 1; i < len(s.shards); i++ {
		require.NotZero(t, s.shards[i].size)
		require.LessOrEqual(t, s.shards[i].garbage, s.shards[i].size)
	}
	live := 0
	for _, sc := range scopes {
		r, ok, err := s.Lookup(ctx, sc, t0.Add(-time.Second))
		require.NoError(t, err)
		if ok {
			live++
			require.Equal(t, body, r.Response.Body)
		}
	}
	require.Equal(t, 2000-n, live)
}
