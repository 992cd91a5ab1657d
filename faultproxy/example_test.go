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

// A tool call over MCP answers 200 with an event stream whose JSON-RPC response says "in
// progress": the outcome (by status) is ok, the class (by the Classify hook, on the
// response inside the stream) says what it meant.
func ExampleConfig_classify() {
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"error\":{\"code\":-32010,\"message\":\"in progress\"}}\n\n")
	}))
	defer upstream.Close()

	ctx := context.Background()
	srv, err := faultproxy.Start(ctx, faultproxy.Config{
		Upstream: upstream.URL,
		KeyField: "params._meta.idempotency_key",
		Classify: func(status int, _ http.Header, body []byte) string {
			if strings.Contains(string(body), `"code":-32010`) {
				return "in_flight"
			}
			return "success"
		},
	})
	if err != nil {
		panic(err)
	}
	defer srv.Close()

	call := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"refund","arguments":{},"_meta":{"idempotency_key":"refund-42"}}}`
	resp, err := http.Post(srv.URL()+"/mcp", "application/json", strings.NewReader(call))
	if err != nil {
		panic(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()

	srv.Proxy().WaitIdle(ctx)
	records, _ := srv.Proxy().Journal(ctx, faultproxy.JournalQuery{Key: "refund-42"})
	r := records[0]
	fmt.Printf("%s id=%s: client=%d outcome=%s class=%s\n", r.RPCMethod, r.RPCID, r.ClientStatus, r.Outcome, r.Class)
	// Output:
	// tools/call id=7: client=200 outcome=ok class=in_flight
}
