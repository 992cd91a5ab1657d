package pgstore_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idemproof/idemproof/internal/cpumeter"
	"github.com/idemproof/idemproof/internal/dockertest"
	"github.com/idemproof/idemproof/internal/refbench"
	"github.com/idemproof/idemproof/reference"
	"github.com/idemproof/idemproof/reference/idempotency"
	"github.com/idemproof/idemproof/reference/pgstore"
	"github.com/moby/moby/api/types/container"
	"github.com/testcontainers/testcontainers-go"
)

// requestsPerCPU: requests wait on the database, not on the CPU.
const requestsPerCPU refbench.Parallelism = 4

// BenchmarkRefundPostgres compares keyed and unkeyed refunds on PostgreSQL (a local
// container), through the whole handler but without the network to the handler, over
// two ways to the database:
//
//   - tcp: the port published on 127.0.0.1, as every test reaches it. Docker's userland
//     proxy relays each round trip and, on a 2-core machine, burns about as much CPU as
//     the database itself, which the keyed request's second round trip pays twice.
//   - socket: the server's Unix socket, through a host directory mounted into the
//     container: what the database and the store cost, without the relay.
//
// Each starts its own container:
//
//	go test -run '^$' -bench 'RefundPostgres/tcp' -benchtime 4000x ./reference/pgstore/
//	go test -run '^$' -bench 'RefundPostgres/socket' -benchtime 4000x ./reference/pgstore/
func BenchmarkRefundPostgres(b *testing.B) {
	for _, via := range []string{"tcp", "socket"} {
		b.Run(via, func(b *testing.B) {
			srv := newPostgresServer(b, via)
			refbench.Refunds(b, requestsPerCPU, func(*testing.B) http.Handler { return srv })
		})
	}
}

// BenchmarkRefundPostgresHTTP is BenchmarkRefundPostgres as a client sees the server:
// behind a real listener on 127.0.0.1.
//
//	go test -run '^$' -bench 'RefundPostgresHTTP/tcp' -benchtime 4000x ./reference/pgstore/
func BenchmarkRefundPostgresHTTP(b *testing.B) {
	for _, via := range []string{"tcp", "socket"} {
		b.Run(via, func(b *testing.B) {
			srv := newPostgresServer(b, via)
			refbench.RefundsHTTP(b, requestsPerCPU, func(*testing.B) http.Handler { return srv })
		})
	}
}

// BenchmarkRefundPostgresRatio is the comparison the goal names, measured so a shared
// machine's drift cannot pick a side: keyed and unkeyed requests in alternating rounds on
// one warm server (refbench.Ratio). -benchtime is the requests of each kind.
//
//	go test -run '^$' -bench 'RefundPostgresRatio' -benchtime 20000x ./reference/pgstore/
func BenchmarkRefundPostgresRatio(b *testing.B) {
	for _, via := range []string{"tcp", "socket"} {
		b.Run(via, func(b *testing.B) {
			srv, meters := newPostgresServerMetered(b, via)
			refbench.Ratio(b, requestsPerCPU, 500, srv, meters...)
		})
	}
}

// BenchmarkRefundPostgresRatioHTTP is BenchmarkRefundPostgresRatio as a client sees the
// server: behind a real listener on 127.0.0.1.
//
//	go test -run '^$' -bench 'RefundPostgresRatioHTTP' -benchtime 20000x ./reference/pgstore/
func BenchmarkRefundPostgresRatioHTTP(b *testing.B) {
	for _, via := range []string{"tcp", "socket"} {
		b.Run(via, func(b *testing.B) {
			srv, meters := newPostgresServerMetered(b, via)
			refbench.RatioHTTP(b, requestsPerCPU, 500, srv, meters...)
		})
	}
}

// BenchmarkStorePostgresRatio is the store's share of BenchmarkRefundPostgresRatio on the
// two-phase path: the store called as the middleware calls it (refbench.StoreRefund), no
// handler, no HTTP.
// Keyed is two transactions (the key insert, then the refund with the completion),
// unkeyed one (the refund insert): the database's own price for the contract.
//
//	go test -run '^$' -bench 'StorePostgresRatio' -benchtime 10000x ./reference/pgstore/
func BenchmarkStorePostgresRatio(b *testing.B) {
	for _, via := range []string{"tcp", "socket"} {
		b.Run(via, func(b *testing.B) {
			st, meters := newPostgresStoreMetered(b, via)
			refbench.RatioFunc(b, requestsPerCPU, 500, refbench.StoreRefund(st), meters...)
		})
	}
}

// BenchmarkStorePostgresLocalRatio is BenchmarkStorePostgresRatio on the one-transaction
// path the reference's handlers take: keyed is ONE statement (the key's lock, the key row
// with the stored response, the refund), unkeyed the refund insert.
//
//	go test -run '^$' -bench 'StorePostgresLocalRatio' -benchtime 10000x ./reference/pgstore/
func BenchmarkStorePostgresLocalRatio(b *testing.B) {
	for _, via := range []string{"tcp", "socket"} {
		b.Run(via, func(b *testing.B) {
			st, meters := newPostgresStoreMetered(b, via)
			refbench.RatioFunc(b, requestsPerCPU, 500, refbench.StoreRefundLocal(st), meters...)
		})
	}
}

// newPostgresServer starts PostgreSQL and returns a server on it, keys optional, reached
// over via ("tcp" or "socket").
func newPostgresServer(b *testing.B, via string) *reference.Server {
	srv, _ := newPostgresServerMetered(b, via)
	return srv
}

// newPostgresServerMetered is newPostgresServer with the CPU meters of
// newPostgresStoreMetered.
func newPostgresServerMetered(b *testing.B, via string) (*reference.Server, []cpumeter.Meter) {
	store, meters := newPostgresStoreMetered(b, via)
	srv, err := reference.New(reference.WithStore(store), reference.WithKeysOptional(true))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { srv.Close() })
	return srv, meters
}

// fsyncEnv, set to "on", runs the benchmarks' PostgreSQL with fsync on (ci/bench
// postgres FSYNC=on): every commit waits for its flush. Off, the tests' setting, is the
// default and what the goals are judged on.
const fsyncEnv = "IDEMPROOF_BENCH_FSYNC"

// newPostgresStore starts PostgreSQL and opens the store on it, reached over via ("tcp"
// or "socket").
func newPostgresStore(b *testing.B, via string) *pgstore.Store {
	st, _ := newPostgresStoreMetered(b, via)
	return st
}

// newPostgresStoreMetered is newPostgresStore with CPU meters for the ratio benchmarks:
// "go", this process (the server, its clients, pgx), and "db", the PostgreSQL
// container, where its control group can be read here (not for a remote engine: then
// only "go"). Over tcp, Docker's userland proxy relays each round trip in a process of
// its own, which neither meter counts.
func newPostgresStoreMetered(b *testing.B, via string) (*pgstore.Store, []cpumeter.Meter) {
	var opts []testcontainers.ContainerCustomizer
	fsync := "off"
	switch v := os.Getenv(fsyncEnv); v {
	case "", "off":
	case "on":
		fsync = "on"
		opts = append(opts, testcontainers.WithCmd("postgres", "-c", "fsync=on"))
	default:
		b.Fatalf("%s=%q: want on or off", fsyncEnv, v)
	}
	var dsn string
	var pg *dockertest.Postgres
	switch via {
	case "tcp":
		pg = dockertest.RunPostgres(b, opts...)
		dsn = pg.DSN
	case "socket":
		dir, err := os.MkdirTemp("", "idemproof-pgsock-")
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { os.RemoveAll(dir) })
		if err := os.Chmod(dir, 0o777); err != nil { // the server runs as postgres in the container
			b.Fatal(err)
		}
		pg = dockertest.RunPostgres(b, append(opts, testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
			hc.Binds = append(hc.Binds, dir+":/var/run/postgresql")
		}))...)
		dsn = "postgres://idemproof:idemproof@/idemproof?host=" + dir
	default:
		b.Fatalf("unknown way to the database %q", via)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	store, err := pgstore.Open(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { store.Close() }) // before the container's own cleanup
	// The setting as the server has it, not as asked.
	var got string
	if err := store.Pool().QueryRow(ctx, "SHOW fsync").Scan(&got); err != nil {
		b.Fatal(err)
	}
	if got != fsync {
		b.Fatalf("the benchmark's PostgreSQL runs with fsync %s, want %s", got, fsync)
	}
	meters := []cpumeter.Meter{cpumeter.Process("go")}
	state, err := pg.State(ctx)
	if err != nil {
		b.Fatal(err)
	}
	if db, err := cpumeter.Cgroup("db", state.Pid); err != nil {
		b.Logf("the database's CPU is not measured: %v", err)
	} else {
		meters = append(meters, db)
	}
	return store, meters
}

// BenchmarkRetryPostgresLocal is a first attempt and its retry on the one-transaction
// path, the store alone: every op is the CommitLocal of a new key with its refund, then
// the CommitLocal of the same key again, which must replay (Completed). It prices the
// retry path, which the ratio benchmarks, all first attempts, never take. Besides the
// pair's time it reports each call's mean latency (first-µs, retry-µs).
//
//	go test -run '^$' -bench 'RetryPostgresLocal' -benchtime 10000x ./reference/pgstore/
func BenchmarkRetryPostgresLocal(b *testing.B) {
	for _, via := range []string{"tcp", "socket"} {
		b.Run(via, func(b *testing.B) {
			st := newPostgresStore(b, via)
			var n atomic.Int64
			var spent [2]atomic.Int64 // nanoseconds in first attempts, in retries
			b.SetParallelism(int(requestsPerCPU))
			b.ResetTimer() // not the container's start
			b.RunParallel(func(pb *testing.PB) {
				ctx := context.Background()
				for pb.Next() {
					i := n.Add(1)
					now := time.Now()
					id := fmt.Sprintf("re_%x%08x", now.UnixNano(), i)
					data := fmt.Appendf(nil, `{"id":%q,"amount":4900}`, id)
					effects := []idempotency.Effect{{Kind: "refund", ID: id, Entity: fmt.Sprint("order-", i), Principal: "anonymous", Data: data, Created: now}}
					req := idempotency.AcquireRequest{Scope: idempotency.Scope{Principal: "anonymous", Endpoint: "POST /v1/refunds",
						Key: fmt.Sprintf("retry-%d-%d", now.UnixNano(), i)}, Fingerprint: "f", Now: now,
						Retention: idempotency.DefaultRetention, LockTimeout: idempotency.DefaultLockTimeout}
					resp := idempotency.Response{Status: http.StatusCreated, Body: data, Header: map[string]string{"Content-Type": "application/json"}}
					for call, want := range []idempotency.State{idempotency.Acquired, idempotency.Completed} {
						start := time.Now()
						acq, err := st.CommitLocal(ctx, req, resp, effects, nil)
						spent[call].Add(int64(time.Since(start)))
						if err != nil {
							b.Fatal(err)
						}
						if acq.State != want {
							b.Fatalf("got %s, want %s", acq.State, want)
						}
						if want == idempotency.Completed && (acq.Record.Response == nil || !bytes.Equal(acq.Record.Response.Body, data)) {
							b.Fatalf("the retry of %s did not replay the first attempt's body", req.Scope.Key)
						}
					}
				}
			})
			b.ReportMetric(float64(spent[0].Load())/1e3/float64(b.N), "first-µs")
			b.ReportMetric(float64(spent[1].Load())/1e3/float64(b.N), "retry-µs")
		})
	}
}
