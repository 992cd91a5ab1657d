package faultproxy_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/faultproxy"
)

// connUpstream answers every request 201 and records, per idempotency key in arrival
// order, the number of the upstream connection the request came on (connections are
// numbered as the server accepts them, so a number never stands for two connections).
type connUpstream struct {
	*httptest.Server
	mu    sync.Mutex
	conns map[string][]int64
}

type connNumberKey struct{}

func newConnUpstream(t *testing.T) *connUpstream {
	t.Helper()
	u := &connUpstream{conns: map[string][]int64{}}
	var accepted atomic.Int64
	u.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := r.Context().Value(connNumberKey{}).(int64)
		u.mu.Lock()
		key := r.Header.Get("Idempotency-Key")
		u.conns[key] = append(u.conns[key], n)
		u.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		w.Write([]byte(`{"ok":true}`))
	}))
	u.Config.ConnContext = func(ctx context.Context, _ net.Conn) context.Context {
		return context.WithValue(ctx, connNumberKey{}, accepted.Add(1))
	}
	u.Start()
	t.Cleanup(u.Close)
	return u
}

// on returns the upstream connection of each request of key, in arrival order.
func (u *connUpstream) on(key string) []int64 {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]int64(nil), u.conns[key]...)
}

// A fault that lets the upstream commit and then damages the answer retires the upstream
// connection that carried the attempt: the client's retry reaches the upstream on another
// connection, as a retry through another proxy instance would, so a target that scopes
// its idempotency entries to a connection cannot pass by connection reuse. Requests no
// fault touches keep reusing one connection, before and after.
func TestRetryAfterAnAfterUpstreamFaultArrivesOnAnotherConnection(t *testing.T) {
	faults := []faultproxy.FaultSpec{
		{Type: faultproxy.FaultAfterReset},
		{Type: faultproxy.FaultAfterClose},
		{Type: faultproxy.FaultAfterStatus, Status: http.StatusServiceUnavailable},
		{Type: faultproxy.FaultAfterTruncate, Bytes: 1},
		{Type: faultproxy.FaultAfterHold, Duration: 10 * time.Millisecond, Then: faultproxy.ThenDrop},
		{Type: faultproxy.FaultAfterDelay, Duration: 10 * time.Millisecond},
	}
	paths := []struct {
		name      string
		transport func() http.RoundTripper // nil: the direct client and the fast path
	}{
		{"direct", nil},
		{"http.Transport", func() http.RoundTripper { return faultproxy.NewTransport(false) }},
	}
	for _, path := range paths {
		for _, spec := range faults {
			t.Run(path.name+"/"+spec.Type, func(t *testing.T) {
				up := newConnUpstream(t)
				cfg := faultproxy.Config{Upstream: up.URL}
				if path.transport != nil {
					cfg.Transport = path.transport()
				}
				f := newFixture(t, cfg)
				f.addRule(faultproxy.Rule{Name: "lost", Match: faultproxy.Match{Key: "k", Attempts: &faultproxy.Range{From: 1, To: 1}}, Fault: spec})

				postOK(t, f, "warm-1")
				postOK(t, f, "warm-2")
				require.Equal(t, up.on("warm-1"), up.on("warm-2"), "unfaulted requests share a keep-alive connection")

				_, _, _ = f.post("k", `{}`) // the faulted attempt: the client's view depends on the fault
				recs := f.journal("k")
				require.Len(t, recs, 1)
				require.Equal(t, spec.Type, recs[0].Fault)
				require.Equal(t, 1, recs[0].UpstreamCalls)

				postOK(t, f, "k") // the retry
				conns := up.on("k")
				require.Len(t, conns, 2)
				require.NotEqual(t, conns[0], conns[1], "the retry came on the faulted attempt's upstream connection")

				postOK(t, f, "after")
				require.Equal(t, conns[1:], up.on("after"), "an unfaulted request reuses the retry's connection")
			})
		}
	}
}

// A duplicate's two copies reach the upstream on two connections even when they go one
// after the other to one upstream, and the next request on a third: a target that
// remembers keys per connection sees both copies as new.
func TestDuplicateCopiesArriveOnDifferentConnections(t *testing.T) {
	for _, mode := range []string{faultproxy.ModeSequential, faultproxy.ModeConcurrent} {
		t.Run(mode, func(t *testing.T) {
			up := newConnUpstream(t)
			f := newFixture(t, faultproxy.Config{Upstream: up.URL})
			f.addRule(faultproxy.Rule{Name: "lb", Match: faultproxy.Match{Key: "k", Attempts: &faultproxy.Range{From: 1, To: 1}},
				Fault: faultproxy.FaultSpec{Type: faultproxy.FaultDuplicate, Mode: mode}})

			postOK(t, f, "warm-1")
			postOK(t, f, "warm-2")
			require.Equal(t, up.on("warm-1"), up.on("warm-2"), "unfaulted requests share a keep-alive connection")

			postOK(t, f, "k")
			require.Equal(t, 2, f.only("k").UpstreamCalls)
			postOK(t, f, "k")
			conns := up.on("k")
			require.Len(t, conns, 3)
			require.NotEqual(t, conns[0], conns[1], "copy 2 came on copy 1's connection")
			require.NotContains(t, conns[:2], conns[2], "the next attempt came on a duplicate's connection")

			postOK(t, f, "after")
			require.Equal(t, conns[2:], up.on("after"), "an unfaulted request reuses the last attempt's connection")
		})
	}
}

// The proxy closes a retired connection itself: an upstream that ignores the request's
// "Connection: close" and keeps it open does not get the retry on it.
func TestRetiredConnectionIsClosedWhenTheUpstreamKeepsItAlive(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	var accepted, answered atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					io.Copy(io.Discard, req.Body)
					answered.Add(1)
					// Keeps the connection whatever the request's Connection field says.
					if _, err := io.WriteString(c, "HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok"); err != nil {
						return
					}
				}
			}()
		}
	}()
	f := newFixture(t, faultproxy.Config{Upstream: "http://" + ln.Addr().String()})
	f.addRule(faultproxy.Rule{Name: "lost", Match: faultproxy.Match{Key: "k", Attempts: &faultproxy.Range{From: 1, To: 1}},
		Fault: faultproxy.FaultSpec{Type: faultproxy.FaultAfterStatus}})

	postOK(t, f, "warm")
	status, _, err := f.post("k", `{}`)
	require.NoError(t, err)
	require.Equal(t, http.StatusServiceUnavailable, status)
	postOK(t, f, "k")
	postOK(t, f, "after")
	require.Equal(t, int32(4), answered.Load())
	require.Equal(t, int32(2), accepted.Load(), "warm and the faulted attempt on one connection, the retry and the next request on another")
}

func postOK(t *testing.T, f *fixture, key string) {
	t.Helper()
	status, body, err := f.post(key, `{}`)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, status, "body %s", body)
}

// countingUpstream answers 200 and counts the connections it holds open.
func countingUpstream(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var open atomic.Int64
	up := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Write([]byte("ok"))
	}))
	up.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			open.Add(1)
		case http.StateClosed, http.StateHijacked:
			open.Add(-1)
		}
	}
	up.Start()
	t.Cleanup(up.Close)
	return up, &open
}

// eventually polls cond until it holds, failing after a deadline far beyond what any
// machine needs (it bounds a broken proxy, not a slow one).
func eventually(t *testing.T, cond func() bool, msg string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf(msg, args...)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// After a flood of short-lived client connections the proxy's pooled upstream
// connections are closed in the background once idle for UpstreamIdleTimeout — on the
// fast path's own client (small bodies) and on http.Transport (streamed ones) — and a
// steady trickle keeps only the connections it needs: the pool hands out its most
// recently used connection first, so the ones the flood left below it age out.
func TestIdleUpstreamConnectionsAreClosedInTheBackground(t *testing.T) {
	up, open := countingUpstream(t)
	const idle = 200 * time.Millisecond
	srv, err := faultproxy.Start(context.Background(), faultproxy.Config{Upstream: up.URL, UpstreamIdleTimeout: idle})
	require.NoError(t, err)
	t.Cleanup(func() { srv.Close() })

	oneShot := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 30 * time.Second}
	var wg sync.WaitGroup
	for c := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 8 {
				body := []byte("{}")
				if (c+i)%2 == 1 {
					body = make([]byte, 8<<10) // streamed: through http.Transport
				}
				resp, err := oneShot.Post(srv.URL()+"/flood", "application/json", bytes.NewReader(body))
				if err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}
		}()
	}
	wg.Wait()
	peak := open.Load()
	t.Logf("upstream connections open after the flood: %d", peak)

	// A trickle on one keep-alive client connection: one upstream connection serves it.
	stop := make(chan struct{})
	trickled := make(chan struct{})
	go func() {
		defer close(trickled)
		client := &http.Client{Timeout: 30 * time.Second}
		for {
			select {
			case <-stop:
				return
			case <-time.After(idle / 4):
			}
			if resp, err := client.Get(srv.URL() + "/trickle"); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}
	}()
	eventually(t, func() bool { return open.Load() <= 2 }, "the flood's idle upstream connections stayed open under a trickle: %d", open.Load())
	close(stop)
	<-trickled
	eventually(t, func() bool { return open.Load() == 0 }, "idle upstream connections stayed open: %d", open.Load())
}
