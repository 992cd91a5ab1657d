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
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, `{"id":"re_0123456789abcdef","order_id":"o-1","amount":4900,"status":"succeeded"}`)
	}))
	defer up.Close()
	upURL, _ := url.Parse(up.URL)

	bare := httputil.NewSingleHostReverseProxy(upURL)
	bare.Transport = &http.Transport{MaxIdleConnsPerHost: 1024}
	bareSrv := httptest.NewServer(bare)
	defer bareSrv.Close()

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

	targets := []struct{ name, url string }{
		{"direct", up.URL},
		{"reverseproxy", bareSrv.URL},
		{"faultproxy", plain.URL()},
		{"faultproxy-100-rules", many.URL()},
	}
	for _, tg := range targets {
		b.Run(tg.name+"/parallel", func(b *testing.B) { benchParallel(b, tg.url) })
	}
	for _, tg := range targets {
		b.Run(tg.name+"/serial", func(b *testing.B) { benchSerial(b, tg.url) })
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
