package reference_test

import (
	"net/http"
	"testing"

	"github.com/idemproof/idemproof/internal/cpumeter"
	"github.com/idemproof/idemproof/internal/refbench"
	"github.com/idemproof/idemproof/reference"
)

// BenchmarkRefundMemory compares keyed and unkeyed refunds on the memory store, through
// the whole handler (auth, middleware, work, store) but without the network.
//
//	go test -run '^$' -bench Refund -benchtime 2s ./reference/ ./reference/pgstore/
func BenchmarkRefundMemory(b *testing.B) {
	refbench.Refunds(b, 1, newMemoryServer)
}

// BenchmarkRefundMemoryRatio is BenchmarkRefundMemory in alternating rounds on one warm
// server (refbench.Ratio), with this process's CPU per request of each kind. -benchtime
// is the requests of each kind.
//
//	go test -run '^$' -bench RefundMemoryRatio -benchtime 200000x ./reference/
func BenchmarkRefundMemoryRatio(b *testing.B) {
	refbench.Ratio(b, 1, 5000, newMemoryServer(b), cpumeter.Process("go"))
}

// BenchmarkRefundMemoryRatioHTTP is BenchmarkRefundMemoryRatio over loopback HTTP.
//
//	go test -run '^$' -bench RefundMemoryRatioHTTP -benchtime 100000x ./reference/
func BenchmarkRefundMemoryRatioHTTP(b *testing.B) {
	refbench.RatioHTTP(b, 1, 2000, newMemoryServer(b), cpumeter.Process("go"))
}

// newMemoryServer is a fresh server on its own memory store, keys optional.
func newMemoryServer(b *testing.B) http.Handler {
	srv, err := reference.New(reference.WithKeysOptional(true))
	if err != nil {
		b.Fatal(err)
	}
	// testing keeps a benchmark's cleanup functions after running them: without the nil,
	// each run of -count starts with the last run's server still alive (129 MB at
	// 100,000 requests of each kind) for the collector to trace.
	b.Cleanup(func() { srv.Close(); srv = nil })
	return srv
}

// BenchmarkRefundMemoryHTTP is BenchmarkRefundMemory as a client sees it: the same server
// behind a real listener on 127.0.0.1, keep-alive connections, the client in the same
// process. The handler-only benchmark isolates the idempotency layer's own cost; this one
// is the server's throughput where it is used.
//
//	go test -run '^$' -bench RefundMemoryHTTP -benchtime 20000x ./reference/
func BenchmarkRefundMemoryHTTP(b *testing.B) {
	refbench.RefundsHTTP(b, 1, newMemoryServer)
}
