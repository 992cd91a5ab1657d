package reference_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/idemproof/idemproof/reference"
)

// BenchmarkRefundMemory compares keyed and unkeyed refunds on the memory store, through
// the whole handler (auth, middleware, work, store) but without the network.
//
//	go test -run '^$' -bench Refund -benchtime 2s ./reference/ ./reference/pgstore/
func BenchmarkRefundMemory(b *testing.B) {
	BenchRefunds(b, func(b *testing.B) http.Handler {
		srv, err := reference.New(reference.WithKeysOptional(true))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { srv.Close() })
		return srv
	})
}

var benchSeq atomic.Int64

// BenchRefunds runs the keyed and unkeyed sub-benchmarks, each against a fresh server
// from newServer (so one's retained keys do not slow the other's garbage collector):
// every keyed iteration is a new key (a first attempt, the expensive path) on its own
// order.
func BenchRefunds(b *testing.B, newServer func(*testing.B) http.Handler) {
	for _, keyed := range []bool{true, false} {
		name := map[bool]string{true: "keyed", false: "unkeyed"}[keyed]
		b.Run(name, func(b *testing.B) {
			h := newServer(b)
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					n := benchSeq.Add(1)
					req := httptest.NewRequest(http.MethodPost, "/v1/refunds",
						strings.NewReader(fmt.Sprintf(`{"order_id":"bench-%d","amount":4900}`, n)))
					if keyed {
						req.Header.Set("Idempotency-Key", fmt.Sprintf("bench-key-%d", n))
					}
					rec := httptest.NewRecorder()
					h.ServeHTTP(rec, req)
					if rec.Code != http.StatusCreated {
						b.Fatalf("status %d: %s", rec.Code, rec.Body)
					}
				}
			})
		})
	}
}
