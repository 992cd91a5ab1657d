// Package refbench holds the keyed-against-unkeyed refund benchmarks that the memory
// and PostgreSQL stores share, so both measure exactly the same requests.
//
// Every keyed iteration is a new key (a first attempt: the expensive path) on its own
// order; unkeyed iterations send the same body without the key, which the server accepts
// because it runs with optional keys. Both carry one header of the same shape (the key,
// or an X-Request-Id the server ignores), so the benchmark's own work of building a
// request is the same on both sides and only the server's work differs.
package refbench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idemproof/idemproof/internal/cpumeter"
	"github.com/idemproof/idemproof/reference/idempotency"
)

// Parallelism is the goroutines per CPU of b.RunParallel: 1 for a CPU-bound store, more
// where requests wait on a database.
type Parallelism int

var seq atomic.Int64

// run is the prefix of this process's keys: a database kept between two benchmark
// processes never sees the same key twice.
var run = time.Now().UnixNano()

func request(url string, keyed bool) *http.Request {
	n := seq.Add(1)
	req := httptest.NewRequest(http.MethodPost, url,
		strings.NewReader(fmt.Sprintf(`{"order_id":"bench-%d","amount":4900}`, n)))
	header := "X-Request-Id"
	if keyed {
		header = "Idempotency-Key"
	}
	req.Header.Set(header, fmt.Sprintf("bench-key-%d-%d", run, n))
	return req
}

// Refunds runs the keyed and unkeyed sub-benchmarks through the handler, without the
// network. newServer makes each its own server, so one's retained keys do not slow the
// other's garbage collector (a PostgreSQL-backed factory may return the same one).
func Refunds(b *testing.B, p Parallelism, newServer func(*testing.B) http.Handler) {
	for _, keyed := range []bool{true, false} {
		b.Run(name(keyed), func(b *testing.B) {
			h := newServer(b)
			b.ReportAllocs()
			b.SetParallelism(int(p))
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					rec := httptest.NewRecorder()
					h.ServeHTTP(rec, request("/v1/refunds", keyed))
					if rec.Code != http.StatusCreated {
						b.Fatalf("status %d: %s", rec.Code, rec.Body)
					}
				}
			})
		})
	}
}

// RefundsHTTP is Refunds as a client sees the server: behind a real listener on
// 127.0.0.1, over keep-alive connections, the client in the same process.
func RefundsHTTP(b *testing.B, p Parallelism, newServer func(*testing.B) http.Handler) {
	for _, keyed := range []bool{true, false} {
		b.Run(name(keyed), func(b *testing.B) {
			ts, client := listen(b, newServer(b))
			b.ReportAllocs()
			b.SetParallelism(int(p))
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := post(client, ts.URL, keyed); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

func name(keyed bool) string {
	if keyed {
		return "keyed"
	}
	return "unkeyed"
}

// Ratio measures keyed against unkeyed throughput on one warm server, interleaved: b.N
// requests of each kind in rounds of block, which kind goes first alternating from round
// to round, so drift on a shared machine (a checkpoint, a neighbour's build, a table
// growing) lands on both sides alike. It reports each kind's time per request and the
// keyed/unkeyed throughput ratio: the ratio of the totals, and the median of the
// per-round ratios, which one disturbed round cannot move. With meters it also reports
// the CPU each kind cost each meter's owner per request (RatioFunc).
func Ratio(b *testing.B, p Parallelism, block int, h http.Handler, meters ...cpumeter.Meter) {
	RatioFunc(b, p, block, func(keyed bool) error {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, request("/v1/refunds", keyed))
		if rec.Code != http.StatusCreated {
			return fmt.Errorf("%s: status %d: %s", name(keyed), rec.Code, rec.Body)
		}
		return nil
	}, meters...)
}

// RatioHTTP is Ratio as a client sees the server: behind a real listener on 127.0.0.1,
// over keep-alive connections, the client in the same process.
func RatioHTTP(b *testing.B, p Parallelism, block int, h http.Handler, meters ...cpumeter.Meter) {
	ts, client := listen(b, h)
	RatioFunc(b, p, block, func(keyed bool) error { return post(client, ts.URL, keyed) }, meters...)
}

// listen serves h on 127.0.0.1 and returns a keep-alive client for it, both closed when b
// ends. The cleanup lets go of the server: testing keeps cleanup functions after running
// them, and a held server would keep the store's keys alive into the next run.
func listen(b *testing.B, h http.Handler) (*httptest.Server, *http.Client) {
	ts := httptest.NewServer(h)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	b.Cleanup(func() {
		client.CloseIdleConnections()
		ts.Close()
		ts.Config.Handler = nil
	})
	return ts, client
}

// StoreRefund is one refund as the middleware hands it to st, without the handler or
// HTTP: keyed, the Acquire of a new key and the Complete of the refund with its response;
// unkeyed, the CommitEffects of the same refund. Under RatioFunc it measures what the
// store alone costs the keyed path, the database's share for PostgreSQL.
func StoreRefund(st idempotency.Store) func(keyed bool) error {
	ctx := context.Background()
	// The middleware's fingerprint is not the store's work: one for every key.
	fp, _ := idempotency.Fingerprint(http.MethodPost, "/v1/refunds", "anonymous", []byte(`{"order_id":"bench","amount":4900}`))
	return func(keyed bool) error {
		n := seq.Add(1)
		now := time.Now()
		id := fmt.Sprintf("re_%x%08x", run, n) // the server's ids are "re_" and 24 hex digits
		order := fmt.Sprintf("bench-%d", n)
		data := fmt.Appendf(nil, `{"id":%q,"order_id":%q,"amount":4900,"reason":"","created":%d}`, id, order, now.Unix())
		effects := []idempotency.Effect{{Kind: "refund", ID: id, Entity: order, Principal: "anonymous", Data: data, Created: now}}
		if !keyed {
			return st.CommitEffects(ctx, effects)
		}
		sc := idempotency.Scope{Principal: "anonymous", Endpoint: "POST /v1/refunds", Key: fmt.Sprintf("bench-key-%d-%d", run, n)}
		acq, err := st.Acquire(ctx, idempotency.AcquireRequest{Scope: sc, Fingerprint: fp, Now: now,
			Retention: idempotency.DefaultRetention, LockTimeout: idempotency.DefaultLockTimeout})
		if err != nil {
			return err
		}
		if acq.State != idempotency.Acquired {
			return fmt.Errorf("a new key was %s", acq.State)
		}
		resp := idempotency.Response{Status: http.StatusCreated, Body: data,
			Header: map[string]string{"Content-Type": "application/json", "Location": "/v1/refunds/" + id}}
		return st.Complete(ctx, sc, acq.Record.Fence, resp, effects, true)
	}
}

// StoreRefundLocal is StoreRefund on the one-transaction path: keyed, the CommitLocal of
// a new key with the refund and its response (one statement); unkeyed, the same
// CommitEffects.
func StoreRefundLocal(st idempotency.LocalStore) func(keyed bool) error {
	ctx := context.Background()
	fp, _ := idempotency.Fingerprint(http.MethodPost, "/v1/refunds", "anonymous", []byte(`{"order_id":"bench","amount":4900}`))
	return func(keyed bool) error {
		n := seq.Add(1)
		now := time.Now()
		id := fmt.Sprintf("re_%x%08x", run, n)
		order := fmt.Sprintf("bench-%d", n)
		data := fmt.Appendf(nil, `{"id":%q,"order_id":%q,"amount":4900,"reason":"","created":%d}`, id, order, now.Unix())
		effects := []idempotency.Effect{{Kind: "refund", ID: id, Entity: order, Principal: "anonymous", Data: data, Created: now}}
		if !keyed {
			return st.CommitEffects(ctx, effects)
		}
		sc := idempotency.Scope{Principal: "anonymous", Endpoint: "POST /v1/refunds", Key: fmt.Sprintf("bench-key-%d-%d", run, n)}
		resp := idempotency.Response{Status: http.StatusCreated, Body: data,
			Header: map[string]string{"Content-Type": "application/json", "Location": "/v1/refunds/" + id}}
		acq, err := st.CommitLocal(ctx, idempotency.AcquireRequest{Scope: sc, Fingerprint: fp, Now: now,
			Retention: idempotency.DefaultRetention, LockTimeout: idempotency.DefaultLockTimeout}, resp, effects, nil)
		if err == nil && acq.State != idempotency.Acquired {
			err = fmt.Errorf("a new key was %s", acq.State)
		}
		return err
	}
}

// post sends one refund to the server at base and reads the whole answer.
func post(client *http.Client, base string, keyed bool) error {
	req := request(base+"/v1/refunds", keyed)
	req.RequestURI = "" // a client request, not a server one
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("%s: status %d", name(keyed), resp.StatusCode)
	}
	return nil
}

// RatioFunc is Ratio for any pair of operations: do(true) is one keyed request, do(false)
// one unkeyed, however they reach the server (a store called directly, say).
//
// Each meter is read around every round of each kind, and the CPU its owner spent per
// request is reported as keyed-NAME-cpu-µs/req and unkeyed-NAME-cpu-µs/req: where the
// keyed request's extra cost lands (this process, the database), which is what decides
// the throughput ratio when they share the machine's cores.
func RatioFunc(b *testing.B, p Parallelism, block int, do func(keyed bool) error, meters ...cpumeter.Meter) {
	workers := int(p) * runtime.GOMAXPROCS(0)
	serve := func(keyed bool, n int) time.Duration {
		var left atomic.Int64
		left.Store(int64(n))
		var wg sync.WaitGroup
		var failed atomic.Value
		start := time.Now()
		for range workers {
			wg.Go(func() {
				for left.Add(-1) >= 0 {
					if err := do(keyed); err != nil {
						failed.CompareAndSwap(nil, err.Error())
						return
					}
				}
			})
		}
		wg.Wait()
		if msg := failed.Load(); msg != nil {
			b.Fatal(msg)
		}
		return time.Since(start)
	}
	// Warm both paths (connections, prepared statements, caches) outside the clock.
	serve(true, min(block, 200))
	serve(false, min(block, 200))
	// cpu[kind][i] is what meters[i]'s owner spent on that kind's requests (1: keyed).
	cpu := [2][]time.Duration{make([]time.Duration, len(meters)), make([]time.Duration, len(meters))}
	metered := func(keyed bool, n int) time.Duration {
		before := readMeters(b, meters)
		d := serve(keyed, n)
		after, kind := readMeters(b, meters), 0
		if keyed {
			kind = 1
		}
		for i := range meters {
			cpu[kind][i] += after[i] - before[i]
		}
		return d
	}
	b.ResetTimer()
	var keyedTotal, unkeyedTotal time.Duration
	var ratios []float64
	for round, done := 0, 0; done < b.N; round++ {
		n := min(block, b.N-done)
		var k, u time.Duration
		if round%2 == 0 {
			k, u = metered(true, n), metered(false, n)
		} else {
			u, k = metered(false, n), metered(true, n)
		}
		keyedTotal, unkeyedTotal = keyedTotal+k, unkeyedTotal+u
		ratios = append(ratios, float64(u)/float64(k))
		done += n
	}
	b.StopTimer()
	sort.Float64s(ratios)
	b.ReportMetric(0, "ns/op") // two kinds per iteration: the per-kind figures below say it
	b.ReportMetric(float64(keyedTotal.Microseconds())/float64(b.N), "keyed-µs/req")
	b.ReportMetric(float64(unkeyedTotal.Microseconds())/float64(b.N), "unkeyed-µs/req")
	b.ReportMetric(float64(unkeyedTotal)/float64(keyedTotal), "ratio")
	b.ReportMetric(ratios[len(ratios)/2], "median-ratio")
	for i, m := range meters {
		b.ReportMetric(float64(cpu[1][i].Microseconds())/float64(b.N), "keyed-"+m.Name+"-cpu-µs/req")
		b.ReportMetric(float64(cpu[0][i].Microseconds())/float64(b.N), "unkeyed-"+m.Name+"-cpu-µs/req")
	}
}

// readMeters reads every meter; a meter that worked when it was made and fails now
// ends the benchmark.
func readMeters(b *testing.B, meters []cpumeter.Meter) []time.Duration {
	v := make([]time.Duration, len(meters))
	for i, m := range meters {
		d, err := m.Read()
		if err != nil {
			b.Fatalf("read the %s CPU meter: %v", m.Name, err)
		}
		v[i] = d
	}
	return v
}
