package memstore_test

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idemproof/idemproof/internal/refbench"
	"github.com/idemproof/idemproof/reference/idempotency"
	"github.com/idemproof/idemproof/reference/memstore"
)

var benchSeq atomic.Int64

// BenchmarkFirstAttempt is the store's share of a keyed first attempt: Acquire a new
// key, then Complete it with a refund-sized response. Every key stays in the store, as
// in a server within its retention window.
//
//	go test -run '^$' -bench FirstAttempt -benchtime 20000x ./reference/memstore/
func BenchmarkFirstAttempt(b *testing.B) {
	s := memstore.New()
	ctx := context.Background()
	now := time.Now()
	fp, _ := idempotency.Fingerprint("POST", "/v1/refunds", "acct_1", []byte(`{"order_id":"o","amount":4900}`))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			n := benchSeq.Add(1)
			sc := idempotency.Scope{Principal: "acct_1", Endpoint: "POST /v1/refunds", Key: "bench-key-" + strconv.FormatInt(n, 10)}
			acq, err := s.Acquire(ctx, idempotency.AcquireRequest{Scope: sc, Fingerprint: fp, Now: now, Retention: time.Hour, LockTimeout: time.Minute})
			if err != nil || acq.State != idempotency.Acquired {
				b.Fatal(acq.State, err)
			}
			body := make([]byte, 180, 512)
			resp := idempotency.Response{Status: 201, Header: map[string]string{"Content-Type": "application/json", "Location": "/v1/refunds/re_" + strconv.FormatInt(n, 10)}, Body: body}
			if err := s.Complete(ctx, sc, acq.Record.Fence, resp, nil, true); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkStoreMemoryRatio is the store's share of the server's keyed/unkeyed ratio
// (reference.BenchmarkRefundMemoryRatio): Acquire and Complete of a new key against the
// CommitEffects of the same refund, interleaved on one store (refbench.StoreRefund).
//
//	go test -run '^$' -bench StoreMemoryRatio -benchtime 200000x ./reference/memstore/
func BenchmarkStoreMemoryRatio(b *testing.B) {
	refbench.RatioFunc(b, 1, 5000, refbench.StoreRefund(memstore.New()))
}
