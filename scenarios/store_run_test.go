package scenarios_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/scenarios"
	"github.com/idemproof/idemproof/storefault"
	"github.com/idemproof/idemproof/verdict"
)

// kvStore is a tiny key store on TCP, one command a line, for the store scenarios'
// fakes: PUT k v (EXISTS or OK: set only when absent), SET k v, GET k (VAL v or NONE),
// FLUSH. It stands in for Redis without a Redis.
type kvStore struct {
	mu   sync.Mutex
	keys map[string]string
}

func startKV(t *testing.T) string {
	t.Helper()
	kv := &kvStore{keys: map[string]string{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go kv.serve(c)
		}
	}()
	return ln.Addr().String()
}

func (kv *kvStore) serve(c net.Conn) {
	defer c.Close()
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		cmd, rest, _ := strings.Cut(strings.TrimSuffix(line, "\n"), " ")
		k, v, _ := strings.Cut(rest, " ")
		kv.mu.Lock()
		var reply string
		switch cmd {
		case "PUT":
			if _, ok := kv.keys[k]; ok {
				reply = "EXISTS"
			} else {
				kv.keys[k], reply = v, "OK"
			}
		case "SET":
			kv.keys[k], reply = v, "OK"
		case "GET":
			if got, ok := kv.keys[k]; ok {
				reply = "VAL " + got
			} else {
				reply = "NONE"
			}
		case "FLUSH":
			clear(kv.keys)
			reply = "OK"
		default:
			reply = "ERR"
		}
		kv.mu.Unlock()
		if _, err := fmt.Fprintln(c, reply); err != nil {
			return
		}
	}
}

// storeAPI is a keyed refund API whose keys live in a kvStore it reaches over TCP (one
// connection per request, a 300 ms timeout on each store call), with its ledger in
// process. On a store error it fails open (executes unkeyed) or closed (503); volatile
// flushes its key store after a store error (a reconnect that re-initialises the store).
type storeAPI struct {
	storeAddr string
	failOpen  bool
	volatile  bool

	mu     sync.Mutex
	ledger map[string]int
	dirty  bool // volatile: a store error happened since the last flush
}

const storeCallTimeout = 300 * time.Millisecond

func (a *storeAPI) call(cmd string) (string, error) {
	c, err := net.DialTimeout("tcp", a.storeAddr, storeCallTimeout)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(storeCallTimeout))
	if _, err := fmt.Fprintln(c, cmd); err != nil {
		return "", err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return strings.TrimSuffix(line, "\n"), err
}

func (a *storeAPI) storeErr() {
	a.mu.Lock()
	a.dirty = true
	a.mu.Unlock()
}

func (a *storeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet {
		a.mu.Lock()
		n := a.ledger[r.URL.Query().Get("order_id")]
		a.mu.Unlock()
		fmt.Fprintf(w, `{"count":%d}`, n)
		return
	}
	var body struct {
		OrderID string `json:"order_id"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.OrderID == "" {
		http.Error(w, "bad body", http.StatusBadRequest)
		return
	}
	key := r.Header.Get("Idempotency-Key")
	if key == "" {
		http.Error(w, "key required", http.StatusBadRequest)
		return
	}
	if a.volatile {
		a.mu.Lock()
		dirty := a.dirty
		a.mu.Unlock()
		if dirty {
			if _, err := a.call("FLUSH"); err == nil {
				a.mu.Lock()
				a.dirty = false
				a.mu.Unlock()
			}
		}
	}
	got, err := a.call("PUT " + key + " pending")
	switch {
	case err != nil && a.failOpen:
		a.execute(w, body.OrderID) // unkeyed: the bug
		return
	case err != nil:
		a.storeErr()
		w.Header().Set("Retry-After", "1")
		http.Error(w, "key store unavailable", http.StatusServiceUnavailable)
		return
	case got == "EXISTS":
		stored, err := a.call("GET " + key)
		if err != nil {
			a.storeErr()
			http.Error(w, "key store unavailable", http.StatusServiceUnavailable)
			return
		}
		if v := strings.TrimPrefix(stored, "VAL "); v != "pending" && v != stored {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Idempotent-Replayed", "true")
			w.WriteHeader(http.StatusCreated)
			fmt.Fprint(w, v)
			return
		}
		http.Error(w, "in flight", http.StatusConflict)
		return
	}
	resp := a.execute(w, body.OrderID)
	if _, err := a.call("SET " + key + " " + resp); err != nil {
		a.storeErr()
	}
}

// execute adds one refund to the ledger and answers 201 with a fresh id.
func (a *storeAPI) execute(w http.ResponseWriter, order string) string {
	a.mu.Lock()
	a.ledger[order]++
	a.mu.Unlock()
	var id [6]byte
	_, _ = rand.Read(id[:])
	resp := fmt.Sprintf(`{"id":"re_%s","order_id":%s}`, hex.EncodeToString(id[:]), strconv.Quote(order))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	fmt.Fprint(w, resp)
	return resp
}

// storeTarget starts a kv store, a store fault point in front of it, and the API (with
// its store address set to the point's, or to the store itself when bypass is set),
// and returns the profile that describes them.
func storeTarget(t *testing.T, api *storeAPI, bypass bool) *profile.Profile {
	t.Helper()
	kv := startKV(t)
	pt, err := storefault.Start(storefault.Config{Listen: "127.0.0.1:0", Upstream: kv})
	require.NoError(t, err)
	t.Cleanup(func() { pt.Close() })
	api.storeAddr, api.ledger = pt.Addr(), map[string]int{}
	if bypass {
		api.storeAddr = kv
	}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	_, err = profile.Parse("store-fake.yaml", storeFakeProfile(srv.URL, "127.0.0.1:0", kv))
	require.ErrorContains(t, err, "store.listen", "a free port the API cannot know is refused without a running point")
	p, err := profile.Parse("store-fake.yaml", storeFakeProfile(srv.URL, pt.Addr(), kv))
	require.NoError(t, err)
	p.Store.Point = pt
	return p
}

// storeFakeProfile describes a storeAPI at base whose key store is reached at listen.
func storeFakeProfile(base, listen, store string) []byte {
	return []byte(`name: store-fake
base_url: ` + base + `
key_header: Idempotency-Key
operation:
  method: POST
  path: /refunds
  body: '{"order_id": "{{.Entity}}", "amount": 100}'
side_effects: {method: GET, path: "/refunds?order_id={{.Entity}}", count: count}
expect: {in_flight: 409, mismatch: 422, missing_key: "400"}
client_timeout: 2s
store: {listen: "` + listen + `", upstream: "` + store + `", timeout: 300ms}
`)
}

func runStore(t *testing.T, p *profile.Profile, only ...string) map[string]verdict.Result {
	t.Helper()
	if len(only) == 0 {
		only = []string{"store/*"}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := scenarios.Run(ctx, scenarios.RunConfig{Profiles: []*profile.Profile{p}, Only: only, Seed: 1})
	require.NoError(t, err)
	out := map[string]verdict.Result{}
	for _, r := range rep.Results {
		out[r.ScenarioID] = r
	}
	return out
}

var storeIDs = []string{"store/down-on-retry", "store/down-on-first", "store/hang-race", "store/back-replays"}

func TestStoreScenariosFailAFailOpenAPI(t *testing.T) {
	t.Parallel()
	got := runStore(t, storeTarget(t, &storeAPI{failOpen: true}, false))
	for _, id := range storeIDs {
		t.Run(id, func(t *testing.T) {
			r := got[id]
			t.Log(r.Verdict, r.Message)
			require.Equal(t, verdict.Fail, r.Verdict, "%s: %s", id, r.Message)
			require.Contains(t, r.Message, "fail-open", id)
			require.Positive(t, r.Evidence.Categories[verdict.CatDuplicated], id)
		})
	}
}

func TestStoreScenariosPassAFailClosedAPI(t *testing.T) {
	t.Parallel()
	got := runStore(t, storeTarget(t, &storeAPI{}, false))
	for _, id := range storeIDs {
		t.Run(id, func(t *testing.T) {
			r := got[id]
			t.Log(r.Verdict, r.Message)
			require.Equal(t, verdict.Pass, r.Verdict, "%s: %s", id, r.Message)
			require.Equal(t, 1, r.Evidence.Record.Ledger[verdict.LedgerOperation], id)
			require.NotEmpty(t, r.Evidence.Record.Store, "the record shows the store's switches")
		})
	}
}

func TestStoreThatLosesItsKeysIsInfoOrAFailWhenDeclaredDurable(t *testing.T) {
	t.Parallel()
	p := storeTarget(t, &storeAPI{volatile: true}, false)
	r := runStore(t, p, "store/back-replays")["store/back-replays"]
	require.Equal(t, verdict.Info, r.Verdict, r.Message)
	require.Contains(t, r.Message, "the store lost the key taken before the outage")

	p.Expect.DurableKeys = true
	r = runStore(t, p, "store/back-replays")["store/back-replays"]
	require.Equal(t, verdict.Fail, r.Verdict, r.Message)
	require.Contains(t, r.Message, "expect.durable_keys")
}

func TestStoreScenariosAreNotApplicableWithoutStore(t *testing.T) {
	t.Parallel()
	p := storeTarget(t, &storeAPI{}, false)
	p.Store = nil
	for id, r := range runStore(t, p) {
		require.Equal(t, verdict.NA, r.Verdict, id)
		require.Contains(t, r.Message, "store not declared", id)
	}
}

func TestPreflightSeesAnAPIThatNeverUsesTheStorePoint(t *testing.T) {
	t.Parallel()
	p := storeTarget(t, &storeAPI{}, true)
	err := scenarios.Preflight(context.Background(), p)
	var pe *scenarios.PreflightError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, "store.listen", pe.Field)
	require.ErrorContains(t, err, "the API never used store.listen")
}

func TestAnUnreachableStoreUpstreamStopsTheRunBeforeItStarts(t *testing.T) {
	t.Parallel()
	p := storeTarget(t, &storeAPI{}, false)
	gone := freeAddr(t) // nothing listens there
	p.Store = &profile.Store{Listen: freeAddr(t), Upstream: gone}
	_, err := scenarios.Run(context.Background(), scenarios.RunConfig{Profiles: []*profile.Profile{p}, Only: []string{"store/*"}})
	require.ErrorContains(t, err, "the store at upstream "+gone+" does not accept connections")
}

// freeAddr is a loopback address nothing listens on (a port the kernel just handed out
// and took back).
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}
