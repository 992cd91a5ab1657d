package faultproxy_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/faultproxy"
)

// upstream is a real HTTP server that counts commits: every request it receives is one
// committed side effect, counted per idempotency key.
type upstream struct {
	*httptest.Server
	name string
	mu   sync.Mutex
	byKy map[string]int
	all  int
}

func newUpstream(t testing.TB, name string) *upstream {
	t.Helper()
	u := &upstream{name: name, byKy: map[string]int{}}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		key := r.Header.Get("Idempotency-Key")
		u.mu.Lock()
		u.all++
		u.byKy[key]++
		n := u.all
		u.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Upstream", u.name)
		status := http.StatusCreated
		if r.Method == http.MethodGet {
			status = http.StatusOK
		}
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"commit":%d,"key":%q,"upstream":%q,"body_bytes":%d}`, n, key, u.name, len(body))
	}))
	t.Cleanup(u.Close)
	return u
}

func (u *upstream) commits(key string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.byKy[key]
}

func (u *upstream) total() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.all
}

// fixture is an upstream behind a started proxy, and a client that never reuses
// connections, so Go's client Transport cannot replay a keyed request on its own.
type fixture struct {
	t      testing.TB
	up     *upstream
	srv    *faultproxy.Server
	proxy  *faultproxy.Proxy
	client *http.Client
}

func newFixture(t testing.TB, cfg faultproxy.Config) *fixture {
	t.Helper()
	up := newUpstream(t, "a")
	if cfg.Upstream == "" && len(cfg.Upstreams) == 0 {
		cfg.Upstream = up.URL
	}
	srv, err := faultproxy.Start(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { srv.Close() })
	return &fixture{
		t: t, up: up, srv: srv, proxy: srv.Proxy(),
		client: &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second},
	}
}

func (f *fixture) addRule(r faultproxy.Rule) {
	f.t.Helper()
	require.NoError(f.t, f.proxy.AddRule(context.Background(), r))
}

// post sends a keyed POST and returns the status and body, or the transport error.
func (f *fixture) post(key, body string) (int, []byte, error) {
	req, err := http.NewRequest(http.MethodPost, f.srv.URL()+"/v1/refunds", strings.NewReader(body))
	require.NoError(f.t, err)
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	req.Header.Set("Authorization", "Bearer secret")
	resp, err := f.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// journal waits until no attempt is in flight, then returns the key's records.
func (f *fixture) journal(key string) []faultproxy.Record {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(f.t, f.proxy.WaitIdle(ctx))
	recs, err := f.proxy.Journal(ctx, faultproxy.JournalQuery{Key: key})
	require.NoError(f.t, err)
	return recs
}

// only returns the single record of a key.
func (f *fixture) only(key string) faultproxy.Record {
	f.t.Helper()
	recs := f.journal(key)
	require.Len(f.t, recs, 1, "records for key %s: %+v", key, recs)
	return recs[0]
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func decode(t testing.TB, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m), "body %q", b)
	return m
}
