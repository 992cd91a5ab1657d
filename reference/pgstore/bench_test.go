package pgstore_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idemproof/idemproof/internal/dockertest"
	"github.com/idemproof/idemproof/reference"
	"github.com/idemproof/idemproof/reference/pgstore"
)

var benchSeq atomic.Int64

// BenchmarkRefundPostgres compares keyed and unkeyed refunds on PostgreSQL (a local
// container), through the whole handler but without the network.
//
//	go test -run '^$' -bench Refund -benchtime 2s ./reference/pgstore/
func BenchmarkRefundPostgres(b *testing.B) {
	pg := dockertest.RunPostgres(b)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	store, err := pgstore.Open(ctx, pg.DSN)
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	srv, err := reference.New(reference.WithStore(store), reference.WithKeysOptional(true))
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	for _, keyed := range []bool{true, false} {
		name := map[bool]string{true: "keyed", false: "unkeyed"}[keyed]
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetParallelism(4) // requests wait on the database, not the CPU
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					n := benchSeq.Add(1)
					req := httptest.NewRequest(http.MethodPost, "/v1/refunds",
						strings.NewReader(fmt.Sprintf(`{"order_id":"bench-%d","amount":4900}`, n)))
					if keyed {
						req.Header.Set("Idempotency-Key", fmt.Sprintf("bench-key-%d-%d", time.Now().UnixNano(), n))
					}
					rec := httptest.NewRecorder()
					srv.ServeHTTP(rec, req)
					if rec.Code != http.StatusCreated {
						b.Fatalf("status %d: %s", rec.Code, rec.Body)
					}
				}
			})
		})
	}
}
