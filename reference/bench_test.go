package reference_test

import (
	"fmt"
	"io"
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

// BenchmarkRefundMemoryHTTP is BenchmarkRefundMemory as a client sees it: the same server
// behind a real listener on 127.0.0.1, keep-alive connections, the client in the same
// process. The handler-only benchmark isolates the idempotency layer's own cost; this one
// is the server's throughput where it is used.
//
//	go test -run '^$' -bench RefundMemoryHTTP -benchtime 20000x ./reference/
func BenchmarkRefundMemoryHTTP(b *testing.B) {
	BenchRefundsHTTP(b, func(b *testing.B) http.Handler {
		srv, err := reference.New(reference.WithKeysOptional(true))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { srv.Close() })
		return srv
	})
}

// BenchRefundsHTTP is BenchRefunds over loopback HTTP.
func BenchRefundsHTTP(b *testing.B, newServer func(*testing.B) http.Handler) {
	for _, keyed := range []bool{true, false} {
		name := map[bool]string{true: "keyed", false: "unkeyed"}[keyed]
		b.Run(name, func(b *testing.B) {
			ts := httptest.NewServer(newServer(b))
			b.Cleanup(ts.Close)
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
			b.Cleanup(client.CloseIdleConnections)
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					n := benchSeq.Add(1)
					req, err := http.NewRequest(http.MethodPost, ts.URL+"/v1/refunds",
						strings.NewReader(fmt.Sprintf(`{"order_id":"bench-%d","amount":4900}`, n)))
					if err != nil {
						b.Fatal(err)
					}
					if keyed {
						req.Header.Set("Idempotency-Key", fmt.Sprintf("bench-key-%d", n))
					}
					resp, err := client.Do(req)
					if err != nil {
						b.Fatal(err)
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != http.StatusCreated {
						b.Fatalf("status %d", resp.StatusCode)
					}
				}
			})
		})
	}
}
