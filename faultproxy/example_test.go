package faultproxy_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/idemproof/idemproof/faultproxy"
)

// A refund commits upstream while the client sees a 503; the journal tells the truth.
func ExampleStart() {
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, `{"id":"re_1"}`)
	}))
	defer upstream.Close()

	ctx := context.Background()
	srv, err := faultproxy.Start(ctx, faultproxy.Config{Upstream: upstream.URL})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	srv.Proxy().AddRule(ctx, faultproxy.Rule{
		Name:  "lose-first",
		Match: faultproxy.Match{Key: "*", Attempts: &faultproxy.Range{From: 1, To: 1}},
		Fault: faultproxy.FaultSpec{Type: faultproxy.FaultAfterStatus, Status: 503},
	})

	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	for i := 0; i < 2; i++ {
		req, _ := http.NewRequest("POST", srv.URL()+"/v1/refunds", strings.NewReader(`{"amount":4900}`))
		req.Header.Set("Idempotency-Key", "refund-42")
		resp, err := client.Do(req)
		if err != nil {
			panic(err)
		}
		resp.Body.Close()
		fmt.Println("client got", resp.StatusCode)
	}

	srv.Proxy().WaitIdle(ctx)
	records, _ := srv.Proxy().Journal(ctx, faultproxy.JournalQuery{Key: "refund-42"})
	for _, r := range records {
		fmt.Printf("attempt %d: rule=%q upstream=%d client=%d outcome=%s\n", r.Attempt, r.Rule, r.UpstreamStatus, r.ClientStatus, r.Outcome)
	}
	// Output:
	// client got 503
	// client got 201
	// attempt 1: rule="lose-first" upstream=201 client=503 outcome=info
	// attempt 2: rule="" upstream=201 client=201 outcome=ok
}
