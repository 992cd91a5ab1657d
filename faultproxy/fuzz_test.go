package faultproxy_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idemproof/idemproof/faultproxy"
)

// FuzzParseRules: any input either parses into rules that a proxy accepts as they are,
// or fails with a *RuleError; never a panic.
func FuzzParseRules(f *testing.F) {
	f.Add([]byte(`[{name: a, match: {key: "*", attempts: {from: 1, to: 1}}, fault: {type: after-status, status: 503}}]`))
	f.Add([]byte(`[{name: h, fault: {type: after-hold, duration_ms: 1500, then: drop}, count: 2, probability: 0.5}]`))
	f.Add([]byte(`{"name":"d","match":{"method":"POST","path":"/v1/*","headers":{"X-A":""}},"fault":{"type":"duplicate","mode":"concurrent"}}`))
	f.Add([]byte(`[{"name":"t","fault":{"type":"after-truncate","bytes":3}}]`))
	f.Add([]byte(`[{name: x, fault: {type: before-delay, duration_ms: 1e300}}]`))
	f.Add([]byte(`- {name: "", fault: {type: nope}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, parse := range []func([]byte) ([]faultproxy.Rule, error){faultproxy.ParseRulesYAML, faultproxy.ParseRulesJSON} {
			rules, err := parse(b)
			if err != nil {
				var re *faultproxy.RuleError
				if !errors.As(err, &re) {
					t.Fatalf("error is %T, want *RuleError: %v", err, err)
				}
				continue
			}
			if _, err := faultproxy.New(faultproxy.Config{Upstream: "http://127.0.0.1:1", Rules: rules}); err != nil {
				t.Fatalf("parsed rules refused by New: %v", err)
			}
		}
	})
}

// forwardFuzzTarget is one proxy and a counting upstream shared by every fuzz input.
type forwardFuzzTarget struct {
	proxy   *faultproxy.Proxy
	addr    string
	mu      sync.Mutex
	commits int
	panics  bytes.Buffer
}

// newForwardFuzzTarget serves the proxy with net/http alone or, started, as Start does
// (the fast path first).
func newForwardFuzzTarget(f *testing.F, started bool) *forwardFuzzTarget {
	ft := &forwardFuzzTarget{}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		ft.mu.Lock()
		ft.commits++
		ft.mu.Unlock()
		w.Write([]byte("ok"))
	}))
	f.Cleanup(up.Close)
	// A short body timeout: an input whose framing promises more body than it sends ends
	// in a 408 at once instead of a wait (the client side half-closes, see FuzzForward).
	cfg := faultproxy.Config{Upstream: up.URL, BufferLimit: 1 << 16, BodyTimeout: time.Second, Rules: []faultproxy.Rule{
		{Name: "trunc", Match: faultproxy.Match{Method: "PUT"}, Fault: faultproxy.FaultSpec{Type: faultproxy.FaultAfterTruncate, Bytes: 1}},
		{Name: "dup", Match: faultproxy.Match{Method: "PATCH"}, Fault: faultproxy.FaultSpec{Type: faultproxy.FaultDuplicate}},
		{Name: "lost", Match: faultproxy.Match{Key: "*"}, Fault: faultproxy.FaultSpec{Type: faultproxy.FaultAfterStatus}},
	}}
	if started {
		// A panic on the fast path ends the test process; net/http's side logs a
		// recovered one to stderr, which the net/http-served target catches instead.
		srv, err := faultproxy.Start(context.Background(), cfg)
		if err != nil {
			f.Fatal(err)
		}
		f.Cleanup(func() { srv.Close() })
		ft.proxy, ft.addr = srv.Proxy(), strings.TrimPrefix(srv.URL(), "http://")
		return ft
	}
	p, err := faultproxy.New(cfg)
	if err != nil {
		f.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(p)
	// The server recovers handler panics and logs them: capture the log to fail on one.
	srv.Config.ErrorLog = log.New(&lockedWriter{w: &ft.panics, mu: &ft.mu}, "", 0)
	srv.Start()
	f.Cleanup(srv.Close)
	ft.proxy, ft.addr = p, srv.Listener.Addr().String()
	return ft
}

type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// FuzzAdminJSON posts any bytes as rules to the admin API: never a panic, always a JSON
// answer with a documented status, the same verdict as ParseRulesJSON, and a refused
// batch leaves no rule behind.
func FuzzAdminJSON(f *testing.F) {
	f.Add([]byte(`{"name":"a","fault":{"type":"after-status","status":503}}`))
	f.Add([]byte(`[{"name":"a","fault":{"type":"after-reset"}},{"name":"b","match":{"key":"*","attempts":{"from":1,"to":1}},"fault":{"type":"after-hold","duration_ms":10,"then":"drop"}}]`))
	f.Add([]byte(`{"name":"a","fault":{"type":"after-reset"}}]]]}}`))
	f.Add([]byte(`{"NAME":"a","name":"b","fault":{"type":"duplicate","mode":"concurrent"}}`))
	f.Add([]byte(`[{"name":"x","match":{"headers":{"X-A":"","x-a":"1"}},"fault":{"type":"before-delay","duration_ms":1e300}}]`))
	p, err := faultproxy.New(faultproxy.Config{Upstream: "http://127.0.0.1:1"})
	if err != nil {
		f.Fatal(err)
	}
	h := p.AdminHandler("")
	f.Fuzz(func(t *testing.T, body []byte) {
		p.Reset(context.Background())
		req := httptest.NewRequest(http.MethodPost, "/rules", bytes.NewReader(body))
		req.Host = "127.0.0.1"
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if !json.Valid(rec.Body.Bytes()) {
			t.Fatalf("answer is not JSON: %q", rec.Body.Bytes())
		}
		_, parseErr := faultproxy.ParseRulesJSON(body)
		switch rec.Code {
		case http.StatusCreated:
			if parseErr != nil {
				t.Fatalf("admin API took rules ParseRulesJSON refuses: %v", parseErr)
			}
		case http.StatusBadRequest, http.StatusConflict, http.StatusRequestEntityTooLarge:
			if len(p.Rules()) != 0 {
				t.Fatalf("a refused batch left %d rules", len(p.Rules()))
			}
			if rec.Code == http.StatusBadRequest && parseErr == nil {
				t.Fatalf("admin API refused rules ParseRulesJSON takes: %s", rec.Body.Bytes())
			}
		default:
			t.Fatalf("status %d: %s", rec.Code, rec.Body.Bytes())
		}
	})
}

// FuzzForward sends odd raw requests (bad methods, huge or broken headers, chunked bodies)
// through the proxy: no panic, a clear status when one comes back, and every upstream
// commit accounted for in the journal.
func FuzzForward(f *testing.F) {
	f.Add("POST", "/v1/refunds", "Idempotency-Key", "k1", []byte(`{"amount":1}`), false)
	f.Add("PATCH", "/dup", "X-A", "b", []byte("x"), true)
	f.Add("PUT", "/trunc", "Content-Type", "text/plain", []byte("hello"), true)
	f.Add("G@T", "/", "X", "y", []byte{}, false)
	f.Add("GET", "/%zz", "Connection", "X-Drop, close", []byte{}, false)
	f.Add("POST", "/", "X-Huge", strings.Repeat("h", 70000), []byte("b"), false)
	f.Add("POST", "\xaf", "X-Huge", strings.Repeat("h", 70000), []byte("b"), false)
	f.Add("POST", "/", "Transfer-Encoding", "chunked", []byte("zz\r\n"), false)
	f.Add("DELETE", "*", "Idempotency-Key", "", []byte{0, 1, 2}, true)
	f.Add("0", "*", "000000000000", "00000000000000000\xd200\xdc\xc7\xeb", []byte("0"), true)
	targets := []*forwardFuzzTarget{newForwardFuzzTarget(f, false), newForwardFuzzTarget(f, true)}
	f.Fuzz(func(t *testing.T, method, path, hname, hvalue string, body []byte, chunked bool) {
		if len(body) > 1<<16 || len(hvalue) > 1<<17 {
			return
		}
		for _, ft := range targets {
			ft.forward(t, method, path, hname, hvalue, body, chunked)
		}
	})
}

// forward sends one fuzzed request and checks what came of it.
func (ft *forwardFuzzTarget) forward(t *testing.T, method, path, hname, hvalue string, body []byte, chunked bool) {
	conn, err := net.Dial("tcp", ft.addr)
	if err != nil {
		t.Fatal(err)
	}
	// Closing with RST leaves no TIME_WAIT socket behind: a fuzz run opens thousands of
	// connections and must not exhaust the machine's ephemeral ports.
	conn.(*net.TCPConn).SetLinger(0)
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	var req bytes.Buffer
	fmt.Fprintf(&req, "%s %s HTTP/1.1\r\nHost: fuzz\r\n%s: %s\r\n", method, path, hname, hvalue)
	if chunked {
		fmt.Fprintf(&req, "Transfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n", len(body), body)
	} else {
		fmt.Fprintf(&req, "Content-Length: %d\r\n\r\n%s", len(body), body)
	}
	conn.Write(req.Bytes())
	// Most inputs are answered at once. One whose framing promises more than it sends
	// (a fuzzed Content-Length header) would make the server wait for the rest: when
	// nothing came back promptly, half-close, so the server sees the end of the
	// request and answers (400) now rather than after a timeout.
	br := bufio.NewReader(conn)
	conn.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if _, err := br.Peek(1); err != nil {
		conn.(*net.TCPConn).CloseWrite()
	}
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(br, nil)
	if err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode < 100 || resp.StatusCode > 599 {
			t.Fatalf("status %d", resp.StatusCode)
		}
	}
	conn.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := ft.proxy.WaitIdle(ctx); err != nil {
		t.Fatal(err)
	}
	recs, _ := ft.proxy.Journal(ctx, faultproxy.JournalQuery{})
	calls := 0
	for _, r := range recs {
		calls += r.UpstreamCalls
	}
	ft.mu.Lock()
	commits, panics := ft.commits, ft.panics.String()
	ft.mu.Unlock()
	if strings.Contains(panics, "panic") {
		t.Fatalf("handler panicked: %s", panics)
	}
	// A call counts as reaching the upstream once its headers are written, so the
	// journal may count a call whose handler never ran; never the other way round.
	if commits > calls {
		t.Fatalf("upstream committed %d requests, journal accounts for only %d", commits, calls)
	}
}
