package memstore_test

import (
	"context"
	"errors"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/reference/idempotency"
	"github.com/idemproof/idemproof/reference/memstore"
)

// refund stores one keyed refund as the middleware does for `serve`'s first attempts:
// Acquire a new key, then Complete it with the refund's response and ledger row, at the
// sizes the reference server writes.
func refund(ctx context.Context, s *memstore.Store, i int, now time.Time, retention time.Duration) error {
	n := strconv.FormatInt(int64(i), 16)
	sc := idempotency.Scope{Principal: "anonymous", Endpoint: "POST /v1/refunds", Key: "5f0c8a2e-1234-4321-abcd-" + pad(n, 12)}
	acq, err := s.Acquire(ctx, idempotency.AcquireRequest{Scope: sc, Fingerprint: refundFingerprint, Now: now, Retention: retention, LockTimeout: time.Minute})
	if err != nil {
		return err
	}
	id := "re_" + pad(n, 24)
	order := "order-5f0c8a2e-aaaa-bbbb-cccc-" + pad(n, 12)
	body := []byte(`{"id":"` + id + `","order_id":"` + order + `","amount":4900,"reason":"requested_by_customer","created":1700000000}`)
	resp := idempotency.Response{Status: 201, Header: map[string]string{"Content-Type": "application/json", "Location": "/v1/refunds/" + id}, Body: body}
	eff := idempotency.Effect{Kind: "refund", ID: id, Entity: order, Principal: "anonymous", Data: body, Created: now}
	return s.Complete(ctx, sc, acq.Record.Fence, resp, []idempotency.Effect{eff}, true)
}

// refundFingerprint is the fingerprint of a refund request (64 hex digits).
var refundFingerprint, _ = idempotency.Fingerprint("POST", "/v1/refunds", "anonymous", []byte(`{"order_id":"o","amount":4900}`))

// pad left-pads s with zeros to n characters.
func pad(s string, n int) string { return strings.Repeat("0", max(n-len(s), 0)) + s }

// TestHeldBytesFollowTheHeap: what the store counts as held is what its records and
// ledger take on the heap, within a quarter, with the keys live and once they expired:
// the budget bounds the memory it names.
func TestHeldBytesFollowTheHeap(t *testing.T) {
	ctx := context.Background()
	s := memstore.New()
	runtime.GC()
	var before, live, expired runtime.MemStats
	runtime.ReadMemStats(&before)
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	const n = 50_000
	for i := range n {
		require.NoError(t, refund(ctx, s, i, now, time.Hour))
	}
	runtime.GC()
	runtime.ReadMemStats(&live)
	heldLive := s.Bytes()
	_, err := s.DeleteExpired(ctx, now.Add(2*time.Hour))
	require.NoError(t, err)
	runtime.GC()
	runtime.ReadMemStats(&expired)
	heldExpired := s.Bytes()
	for _, c := range []struct {
		name       string
		heap, held int64
	}{
		{"keys live", int64(live.HeapAlloc) - int64(before.HeapAlloc), heldLive},
		{"keys expired", int64(expired.HeapAlloc) - int64(before.HeapAlloc), heldExpired},
	} {
		t.Logf("%s: heap %d B a refund, held %d B a refund", c.name, c.heap/n, c.held/n)
		require.InDelta(t, float64(c.heap), float64(c.held), float64(c.heap)/4, c.name)
	}
	runtime.KeepAlive(s)
}

// The issue-38 reproduction, driven at the store: 600,000 refunds into the default
// memory store, with the keys expiring and the cleanup job running as `serve` runs it
// (a 5 s retention, the reference profile's), keep its heap under 300 MB. Without a
// bound the ledger alone took ~1 KB a refund (1,057 MB of RSS at 600,000) and expiring
// the keys freed nothing; with it, refunds past the store's byte budget are refused with
// ErrStoreFull (the server's 507) and nothing is half-written.
func TestMemoryStoreStaysBoundedAt600000Refunds(t *testing.T) {
	ctx := context.Background()
	s := memstore.New()
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	stored, refused := 0, 0
	for i := range 600_000 {
		now = now.Add(time.Millisecond) // ~170 refunds a second for an hour
		switch err := refund(ctx, s, i, now, 5*time.Second); {
		case err == nil:
			stored++
		case errors.Is(err, idempotency.ErrStoreFull):
			refused++
		default:
			t.Fatal(err)
		}
		if i%1000 == 0 { // the cleanup job, every second of the clock
			_, err := s.DeleteExpired(ctx, now)
			require.NoError(t, err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	heap := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("%d refunds stored, %d refused; heap %.1f MB; the store counts %.1f MB", stored, refused, float64(heap)/(1<<20), float64(s.Bytes())/(1<<20))
	require.Less(t, heap, int64(300<<20))
	require.LessOrEqual(t, s.Bytes(), int64(memstore.DefaultMaxBytes+memstore.DefaultMaxBytes/16))
	runtime.KeepAlive(s)
}

// Once full the store records no new key — Acquire returns ErrStoreFull and writes
// nothing — while the keys it holds still answer; keys that expire give their bytes back
// (the map too, once most of it emptied), so new keys fit again. The ledger keeps every
// refund.
func TestStoreRefusesNewKeysOnceFull(t *testing.T) {
	ctx := context.Background()
	s := memstore.New(memstore.WithMaxBytes(8 << 20))
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	stored := 0
	for ; ; stored++ {
		err := refund(ctx, s, stored, now, time.Hour)
		if errors.Is(err, idempotency.ErrStoreFull) {
			require.ErrorContains(t, err, "budget of 8388608 bytes")
			break
		}
		require.NoError(t, err)
	}
	require.Greater(t, stored, 1000)
	full := s.Bytes()
	require.GreaterOrEqual(t, full, s.MaxBytes())

	first := idempotency.Scope{Principal: "anonymous", Endpoint: "POST /v1/refunds", Key: "5f0c8a2e-1234-4321-abcd-" + pad("0", 12)}
	acq, err := s.Acquire(ctx, idempotency.AcquireRequest{Scope: first, Fingerprint: refundFingerprint, Now: now, Retention: time.Hour, LockTimeout: time.Minute})
	require.NoError(t, err, "a held key is answered")
	require.Equal(t, idempotency.Completed, acq.State)
	require.Equal(t, full, s.Bytes(), "a refused key wrote nothing")

	n, err := s.DeleteExpired(ctx, now.Add(2*time.Hour))
	require.NoError(t, err)
	require.Equal(t, stored, n)
	require.Less(t, s.Bytes(), full*3/4, "expired keys gave their bytes back")
	require.NoError(t, refund(ctx, s, stored, now.Add(2*time.Hour), time.Hour), "a new key fits again")
	effects, err := s.Effects(ctx, "refund", "order-5f0c8a2e-aaaa-bbbb-cccc-"+pad("0", 12))
	require.NoError(t, err)
	require.Len(t, effects, 1, "the ledger keeps the refunds of expired keys")
}
