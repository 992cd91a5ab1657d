package faultproxy_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/idemproof/idemproof/faultproxy"
)

// cannedTransport answers every request in memory, so BenchmarkHandler measures the
// proxy's own work (matching, journal, copying) without the network.
type cannedTransport struct{}

func (cannedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		io.Copy(io.Discard, r.Body)
	}
	return &http.Response{
		StatusCode: http.StatusCreated, ProtoMajor: 1, ProtoMinor: 1,
		Header:        http.Header{"Content-Type": {"application/json"}},
		Body:          io.NopCloser(strings.NewReader(`{"id":"re_1"}`)),
		ContentLength: 13, Request: r,
	}, nil
}

// BenchmarkHandler is the proxy's own cost per attempt, with 0 and 100 non-matching rules:
//
//	go test -run '^$' -bench BenchmarkHandler -benchmem ./faultproxy/
func BenchmarkHandler(b *testing.B) {
	for _, n := range []int{0, 100} {
		b.Run("rules="+strconv.Itoa(n), func(b *testing.B) {
			var rules []faultproxy.Rule
			for i := 0; i < n; i++ {
				rules = append(rules, faultproxy.Rule{
					Name:  "never-" + strconv.Itoa(i),
					Match: faultproxy.Match{Method: "POST", Path: "/v1/never/" + strconv.Itoa(i), Key: "*"},
					Fault: faultproxy.FaultSpec{Type: faultproxy.FaultAfterReset},
				})
			}
			p, err := faultproxy.New(faultproxy.Config{Upstream: "http://127.0.0.1:1", Transport: cannedTransport{}, Rules: rules})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			cpu := startCPU()
			defer cpu.report(b)
			b.RunParallel(func(pb *testing.PB) {
				i := 0
				for pb.Next() {
					i++
					req := httptest.NewRequest(http.MethodPost, "/v1/refunds", strings.NewReader(`{"amount":4900}`))
					req.Header.Set("Idempotency-Key", "k-"+strconv.Itoa(i%1000))
					w := httptest.NewRecorder()
					p.ServeHTTP(w, req)
					if w.Code != http.StatusCreated {
						b.Fatalf("status %d", w.Code)
					}
				}
			})
		})
	}
}
