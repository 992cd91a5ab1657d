package faultproxy_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idemproof/idemproof/faultproxy"
)

// BenchmarkProxy compares, in one run, a direct connection to the upstream, a bare
// httputil.ReverseProxy (only its Transport's idle pool raised) and faultproxy in
// pass-through, with no rules and with 100 rules that never match:
//
//	go test -run '^$' -bench BenchmarkProxy -benchtime 2s -count 3 ./faultproxy/
//
// "parallel" reports throughput (req/s) with 16 goroutines per CPU sharing one keep-alive
// client; "serial" reports the p50 latency of one connection (p50-µs). Both report the
// CPU time of the whole process per request (cpu-µs/op: client, proxy and upstream),
// which stays comparable when other load shares the machine.
func BenchmarkProxy(b *testing.B) {
	for _, tg := range benchTargets(b) {
		b.Run(tg.name+"/parallel", func(b *testing.B) { tg.prepare(); benchParallel(b, tg.url) })
	}
	for _, tg := range benchTargets(b) {
		b.Run(tg.name+"/serial", func(b *testing.B) { tg.prepare(); benchSerial(b, tg.url) })
	}
}

// BenchmarkProxyInterleaved measures the same four targets in turns — each round gives
// every target the same slice of time, first one connection sending one request at a
// time (p50 latency), then 32 concurrent clients (throughput and CPU per request) — so
// that load from other tenants of a shared machine falls on all of them alike:
//
//	go test -run '^$' -bench BenchmarkProxyInterleaved -benchtime 10x ./faultproxy/
//
// One b.N iteration is one round; the metrics are per target over all rounds.
func BenchmarkProxyInterleaved(b *testing.B) {
	targets := benchTargets(b)
	const slice, clients = 300 * time.Millisecond, 32
	done := make([]int64, len(targets))
	cpu := make([]time.Duration, len(targets))
	lat := make([][]time.Duration, len(targets))
	for round := 0; round < b.N; round++ {
		for i, tg := range targets {
			tg.prepare()
			// One connection, one request at a time: latency.
			one := benchClient()
			benchRequest(b, one, tg.url)
			for stop := time.Now().Add(slice / 2); time.Now().Before(stop); {
				t0 := time.Now()
				benchRequest(b, one, tg.url)
				lat[i] = append(lat[i], time.Since(t0))
			}
			one.CloseIdleConnections()
			// Many clients: throughput.
			c := benchClient()
			var n atomic.Int64
			stop := time.Now().Add(slice)
			cpu0 := processCPU()
			var wg sync.WaitGroup
			for g := 0; g < clients; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for time.Now().Before(stop) {
						benchRequest(b, c, tg.url)
						n.Add(1)
					}
				}()
			}
			wg.Wait()
			cpu[i] += processCPU() - cpu0
			done[i] += n.Load()
			c.CloseIdleConnections()
		}
	}
	total := slice * time.Duration(b.N)
	for i, tg := range targets {
		b.ReportMetric(float64(done[i])/total.Seconds(), tg.name+"-req/s")
		b.ReportMetric(float64(cpu[i].Microseconds())/float64(done[i]), tg.name+"-cpu-µs/op")
		sort.Slice(lat[i], func(a, c int) bool { return lat[i][a] < lat[i][c] })
		b.ReportMetric(float64(lat[i][len(lat[i])/2].Microseconds()), tg.name+"-p50-µs")
	}
}

type benchTarget struct {
	name, url string
	prepare   func()
}

// benchTargets starts the upstream, the bare ReverseProxy and two faultproxies (no rules;
// 100 rules that never match) for one benchmark, stopped at its end.
func benchTargets(b *testing.B) []benchTarget {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, `{"id":"re_0123456789abcdef","order_id":"o-1","amount":4900,"status":"succeeded"}`)
	}))
	b.Cleanup(up.Close)
	upURL, _ := url.Parse(up.URL)

	bare := httputil.NewSingleHostReverseProxy(upURL)
	bare.Transport = &http.Transport{MaxIdleConnsPerHost: 1024}
	bareSrv := httptest.NewServer(bare)
	b.Cleanup(bareSrv.Close)

	plain := startBenchProxy(b, up.URL, nil)
	var rules []faultproxy.Rule
	for i := 0; i < 100; i++ {
		rules = append(rules, faultproxy.Rule{
			Name:  "never-" + strconv.Itoa(i),
			Match: faultproxy.Match{Method: "POST", Path: "/v1/never/" + strconv.Itoa(i), Key: "*"},
			Fault: faultproxy.FaultSpec{Type: faultproxy.FaultAfterReset},
		})
	}
	many := startBenchProxy(b, up.URL, rules)

	// Each run starts from a fresh journal and attempt counters (Reset, rules re-added),
	// so one run's live heap does not tax the next.
	fresh := func(srv *faultproxy.Server, rules []faultproxy.Rule) func() {
		return func() {
			ctx := context.Background()
			srv.Proxy().Reset(ctx)
			for _, r := range rules {
				if err := srv.Proxy().AddRule(ctx, r); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	return []benchTarget{
		{"direct", up.URL, func() {}},
		{"reverseproxy", bareSrv.URL, func() {}},
		{"faultproxy", plain.URL(), fresh(plain, nil)},
		{"faultproxy-100-rules", many.URL(), fresh(many, rules)},
	}
}

func startBenchProxy(b *testing.B, upstream string, rules []faultproxy.Rule) *faultproxy.Server {
	srv, err := faultproxy.Start(context.Background(), faultproxy.Config{Upstream: upstream, Rules: rules})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { srv.Close() })
	return srv
}

var benchKeys atomic.Uint64

func benchClient() *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1024, DisableCompression: true}}
}

// benchRequest sends one keyed POST (a fresh key each time, as a real client would).
func benchRequest(b *testing.B, c *http.Client, target string) {
	req, _ := http.NewRequest(http.MethodPost, target+"/v1/refunds", strings.NewReader(`{"order_id":"o-1","amount":4900}`))
	req.Header.Set("Idempotency-Key", "bench-"+strconv.FormatUint(benchKeys.Add(1), 10))
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		b.Fatalf("status %d", resp.StatusCode)
	}
}

func benchParallel(b *testing.B, target string) {
	c := benchClient()
	defer c.CloseIdleConnections()
	b.SetParallelism(16)
	b.ResetTimer()
	start, cpu := time.Now(), startCPU()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			benchRequest(b, c, target)
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
	cpu.report(b)
}

func benchSerial(b *testing.B, target string) {
	c := benchClient()
	defer c.CloseIdleConnections()
	benchRequest(b, c, target) // warm the connection
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	cpu := startCPU()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		benchRequest(b, c, target)
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	cpu.report(b)
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
}
