// Package servertest runs the reference server in-process for tests: an httptest server
// on 127.0.0.1:0 over a given store, a manual clock, and helpers to post keyed requests
// and read the ledger. Suite (suite.go) is the HTTP-level rule suite every store runs.
package servertest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/idemproof/idemproof/reference"
	"github.com/idemproof/idemproof/reference/idempotency"
	"github.com/stretchr/testify/require"
)

// Env is one running server.
type Env struct {
	Server *reference.Server
	URL    string
	Clock  *reference.ManualClock
	Client *http.Client
	store  idempotency.Store
}

// Start runs a server over store with test hooks on, a manual clock at the current
// time and cleanup effectively off (tests share a database; the cleanup test turns it
// on). opts come last and win.
func Start(t testing.TB, store idempotency.Store, opts ...reference.Option) *Env {
	t.Helper()
	clock := reference.NewManualClock(time.Now().UTC().Truncate(time.Second))
	all := append([]reference.Option{
		reference.WithStore(store),
		reference.WithClock(clock.Now),
		reference.WithTestHooks(true),
		reference.WithCleanupInterval(time.Hour),
	}, opts...)
	srv, err := reference.New(all...)
	require.NoError(t, err)
	hs := httptest.NewServer(srv)
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	t.Cleanup(func() {
		tr.CloseIdleConnections()
		hs.Close()
		srv.Close()
	})
	return &Env{Server: srv, URL: hs.URL, Clock: clock, Client: &http.Client{Transport: tr, Timeout: 30 * time.Second}, store: store}
}

// Fresh returns a unique name with prefix: every test mints its own keys and entities.
func Fresh(prefix string) string {
	var b [8]byte
	rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// Reply is a complete response, or Err when the connection gave none.
type Reply struct {
	Status int
	Header http.Header
	Body   []byte
	Err    error
}

// Replayed reports whether the reply carries the replay marker.
func (r Reply) Replayed() bool { return r.Header.Get(idempotency.HeaderReplayed) == "true" }

// Post sends body to path with the key (none when key is "") and extra headers as
// name, value pairs.
func (e *Env) Post(t testing.TB, path, key, body string, headers ...string) Reply {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.URL+path, bytes.NewBufferString(body))
	if err != nil {
		return Reply{Err: err} // no require here: Burst calls Post from many goroutines
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set(idempotency.HeaderKey, key)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return e.Do(req)
}

// PostFresh is Post on a connection of its own that is never reused: Go's transport
// silently resends a keyed request whose reused connection died, which would hide the
// very attempt a crash test abandons.
func (e *Env) PostFresh(t testing.TB, path, key, body string, headers ...string) Reply {
	t.Helper()
	saved := e.Client
	e.Client = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: saved.Timeout}
	defer func() { e.Client = saved }()
	return e.Post(t, path, key, body, headers...)
}

// Do sends req and reads the whole reply.
func (e *Env) Do(req *http.Request) Reply {
	resp, err := e.Client.Do(req)
	if err != nil {
		return Reply{Err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return Reply{Status: resp.StatusCode, Header: resp.Header, Body: b, Err: err}
}

// Count reads the ledger of kind ("refunds", "invoices") for an order and checks that
// count equals the length of data.
func (e *Env) Count(t testing.TB, kind, orderID string) int {
	t.Helper()
	resp, err := e.Client.Get(e.URL + "/v1/" + kind + "?order_id=" + orderID)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var page struct {
		Data  []map[string]any `json:"data"`
		Count int              `json:"count"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&page))
	require.Len(t, page.Data, page.Count)
	return page.Count
}

// WaitHeld waits until the key is recorded (the original holds it), polling the store
// with a deadline: the held request gives no other signal, and a fixed sleep would be
// flaky. On the one-transaction path the key row is not committed while the original
// runs, so the store's transaction lock is what shows it held.
func (e *Env) WaitHeld(t testing.TB, principal, path, key string) {
	t.Helper()
	sc := idempotency.Scope{Principal: principal, Endpoint: "POST " + path, Key: key}
	local, _ := e.store.(idempotency.LocalStore)
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, ok, err := e.store.Lookup(context.Background(), sc, e.Clock.Now())
		require.NoError(t, err)
		if !ok && local != nil {
			ok, err = local.Held(context.Background(), sc)
			require.NoError(t, err)
		}
		if ok {
			return
		}
		require.True(t, time.Now().Before(deadline), "key %q was never recorded", key)
		time.Sleep(2 * time.Millisecond)
	}
}

// RefundBody is a valid refund request for order.
func RefundBody(order string, amount int) string {
	b, _ := json.Marshal(map[string]any{"order_id": order, "amount": amount, "reason": "requested_by_customer"})
	return string(b)
}
