package scenarios_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fakeRefunds is a deliberately minimal keyed refund API for runner tests: keys scoped by
// Authorization, fingerprint of the body, 409 while in flight, 400 without a key, a
// ledger per order. broken turns idempotency off entirely (every attempt executes).
type fakeRefunds struct {
	broken   bool
	keyField func(body map[string]any) (string, bool) // nil: the Idempotency-Key header
	// wedge: once a key was refused as in flight, it stays refused for good (the flaw
	// of a lock released only by an uncontended request).
	wedge bool
	// wedgeFor: a key refused as in flight stays refused this long, then replays (a
	// lock that goes stale only after a long lock timeout).
	wedgeFor time.Duration
	// waits: a repeat while the original runs waits for it and gets the replay (the
	// block-and-replay school) instead of a 409.
	waits bool
	// errorAsSuccess: a stored 4xx is replayed as an empty 200 (a false success).
	errorAsSuccess bool
	// hold keeps every execution in flight this long, so concurrent attempts meet.
	hold time.Duration
	// uuidOnly: a key that is not a lower-case UUID is refused with 400, as a middleware
	// that parses the key as a UUID refuses it.
	uuidOnly bool
	// uuid500: with uuidOnly, the refusal is a 500 (a key parser that fails), not a 400.
	uuid500 bool
	// validates: a negative amount is refused with 400 by the work, before any effect;
	// the refusal is stored under the key with the invalid body's fingerprint, as every
	// answer of the work is.
	validates bool
	// globalScope: keys are not scoped by principal (Authorization), only by path.
	globalScope bool
	// loseFirst: the record a key's first request leaves is lost once it is answered (a
	// key store that files it under another key, as one that aliases keys across reused
	// connections does); later records of the key are kept.
	loseFirst bool
	// noFingerprint: the payload is never compared; a key's record answers any body.
	noFingerprint bool
	// aliasByLength: keys of one length share one record (a store that keeps a key as a
	// view of a reused buffer finds the previous key of that length).
	aliasByLength bool
	// pathHooks: the test hooks are paths of their own, as some middlewares' test apps
	// have them: POST /slow?ms=N holds the work N ms, POST /status/N fails it with N. Keys
	// are scoped by path (as by principal), so a key there is another operation's.
	pathHooks bool
	// outcomeHeader: the in-flight and the mismatch refusals are both 409 with an empty
	// body, told apart only by an Idempotency-Outcome header (in_progress, conflict).
	outcomeHeader bool
	// latency delays every answer, ledger reads too: a slow but correct target.
	latency time.Duration
	// aliasConn: on a connection that carried a request before, the key is read as that
	// connection's first key (a parser that keeps the key as a view of a reused buffer).
	aliasConn bool
	// capacity: at most this many keys are kept, the oldest evicted (0: all), as a
	// bounded in-process cache does.
	capacity int
	// bodyHooks: the test hooks are members of the JSON body, test_delay (a duration)
	// and test_fail (a status), left out of the fingerprint as the key is, unless
	// hooksFingerprinted.
	bodyHooks, hooksFingerprinted bool

	mu     sync.Mutex
	seen   []seenRequest // every POST as received, for tests of what the runner sends
	keys   map[string]*fakeEntry
	lost   map[string]bool // keys whose first record loseFirst dropped
	order  []string        // keys in the order they were first stored (capacity)
	ledger map[string]int
	seq    int
}

// fakeConn is what the fake remembers of one connection (aliasConn).
type fakeConn struct {
	mu       sync.Mutex
	firstKey string
}

type fakeConnKey struct{}

type fakeEntry struct {
	fp     [32]byte
	done   bool
	status int
	body   []byte
	wedged bool
	// wedgedUntil: refused as in flight until then (wedgeFor)
	wedgedUntil time.Time
	settled     chan struct{} // closed when done
}

func startFake(t testing.TB, f *fakeRefunds) string {
	t.Helper()
	f.keys, f.ledger, f.lost = map[string]*fakeEntry{}, map[string]int{}, map[string]bool{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := httptest.NewUnstartedServer(f)
	srv.Config.ConnContext = func(ctx context.Context, _ net.Conn) context.Context {
		return context.WithValue(ctx, fakeConnKey{}, &fakeConn{})
	}
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL
}

func (f *fakeRefunds) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	time.Sleep(f.latency) // a deliberate delay: the target is slow, not the machine
	if r.Method == http.MethodGet {
		f.mu.Lock()
		n := f.ledger[r.URL.Query().Get("order_id")]
		f.mu.Unlock()
		writeJSON(w, 200, map[string]any{"count": n})
		return
	}
	raw, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.seen = append(f.seen, seenRequest{URI: r.URL.RequestURI(), Header: r.Header.Clone(), Body: string(raw)})
	f.mu.Unlock()
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		writeJSON(w, 400, map[string]any{"error": "bad json"})
		return
	}
	key, ok := r.Header.Get("Idempotency-Key"), len(r.Header.Values("Idempotency-Key")) > 0
	if f.keyField != nil {
		key, ok = f.keyField(body)
		if params, _ := body["params"].(map[string]any); params != nil {
			if args, _ := params["arguments"].(map[string]any); args != nil {
				delete(args, "idempotency_key") // the key is not part of the fingerprint
			}
		}
		raw, _ = json.Marshal(body)
	}
	if f.bodyHooks {
		for member, header := range map[string]string{"test_delay": "X-Test-Delay", "test_fail": "X-Test-Fail"} {
			if v, ok := body[member].(string); ok {
				r.Header.Set(header, v)
				delete(body, member)
			}
		}
		// Numbers too, as some test apps take them: test_delay_ms (milliseconds) and
		// test_fail (a status). A string there is no number, and holds nothing.
		if ms, ok := body["test_delay_ms"].(float64); ok {
			r.Header.Set("X-Test-Delay", fmt.Sprintf("%dms", int(ms)))
		}
		if n, ok := body["test_fail"].(float64); ok {
			r.Header.Set("X-Test-Fail", strconv.Itoa(int(n)))
		}
		delete(body, "test_delay_ms") // a hook's member is never fingerprinted, whatever its type
		delete(body, "test_fail")
		if !f.hooksFingerprinted {
			raw, _ = json.Marshal(body)
		}
	}
	if f.broken {
		f.execute(w, r, body)
		return
	}
	if fc, _ := r.Context().Value(fakeConnKey{}).(*fakeConn); f.aliasConn && fc != nil && ok {
		fc.mu.Lock()
		if fc.firstKey == "" {
			fc.firstKey = key
		}
		key = fc.firstKey
		fc.mu.Unlock()
	}
	if f.uuidOnly && f.uuid500 && key != "" && !lowerUUID.MatchString(key) {
		writeJSON(w, 500, map[string]any{"error": "invalid UUID"})
		return
	}
	if !ok || key == "" || len(key) > 255 || strings.ContainsAny(key, "\t\x00") || f.uuidOnly && !lowerUUID.MatchString(key) {
		writeJSON(w, 400, map[string]any{"error": "bad or missing key"})
		return
	}
	scope := r.Header.Get("Authorization") + " " + r.URL.Path + " " + key
	if f.globalScope {
		scope = r.URL.Path + " " + key
	}
	if f.aliasByLength {
		scope = r.Header.Get("Authorization") + " " + r.URL.Path + " " + strconv.Itoa(len(key))
	}
	fp := sha256.Sum256(raw)
	f.mu.Lock()
	e, seen := f.keys[scope]
	switch {
	case seen && e.fp != fp && !f.noFingerprint && f.outcomeHeader:
		f.mu.Unlock()
		w.Header().Set("Idempotency-Outcome", "conflict")
		w.WriteHeader(409)
		return
	case seen && e.fp != fp && !f.noFingerprint:
		f.mu.Unlock()
		writeJSON(w, 422, map[string]any{"error": "mismatch"})
		return
	case seen && !e.done && f.waits:
		f.mu.Unlock()
		<-e.settled
		f.mu.Lock()
		fallthrough
	case seen && e.done && !e.wedged && !time.Now().Before(e.wedgedUntil):
		status, stored := e.status, e.body
		f.mu.Unlock()
		if f.errorAsSuccess && status >= 400 {
			status, stored = 200, nil
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Idempotent-Replayed", "true")
		w.WriteHeader(status)
		_, _ = w.Write(stored)
		return
	case seen:
		e.wedged = f.wedge
		if f.wedgeFor > 0 && e.wedgedUntil.IsZero() {
			e.wedgedUntil = time.Now().Add(f.wedgeFor)
		}
		f.mu.Unlock()
		w.Header().Set("Retry-After", "1")
		if f.outcomeHeader {
			w.Header().Set("Idempotency-Outcome", "in_progress")
			w.WriteHeader(409)
			return
		}
		writeJSON(w, 409, map[string]any{"error": "in flight"})
		return
	}
	e = &fakeEntry{fp: fp, settled: make(chan struct{})}
	f.keys[scope] = e
	f.order = append(f.order, scope)
	if f.capacity > 0 && len(f.order) > f.capacity {
		delete(f.keys, f.order[0])
		f.order = f.order[1:]
	}
	f.mu.Unlock()
	rec := httptest.NewRecorder()
	f.execute(rec, r, body)
	f.mu.Lock()
	e.done, e.status, e.body = true, rec.Code, rec.Body.Bytes()
	close(e.settled)
	if f.loseFirst && !f.lost[key] {
		f.lost[key] = true
		delete(f.keys, scope)
	}
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

func (f *fakeRefunds) execute(w http.ResponseWriter, r *http.Request, body map[string]any) {
	if d, err := time.ParseDuration(r.Header.Get("X-Test-Delay")); err == nil {
		time.Sleep(d) // the slow hook: hold the work in flight, as the profile declares
	}
	if f.pathHooks && r.URL.Path == "/slow" {
		ms, _ := strconv.Atoi(r.URL.Query().Get("ms"))
		time.Sleep(time.Duration(ms) * time.Millisecond)
	}
	if n, err := strconv.Atoi(r.Header.Get("X-Test-Fail")); f.bodyHooks && err == nil {
		writeJSON(w, n, map[string]any{"error": "failed on purpose"})
		return
	}
	if status, ok := strings.CutPrefix(r.URL.Path, "/status/"); f.pathHooks && ok {
		n, _ := strconv.Atoi(status)
		writeJSON(w, n, map[string]any{"error": "failed on purpose"})
		return
	}
	time.Sleep(f.hold)
	if amount, _ := body["amount"].(float64); f.validates && amount < 0 {
		writeJSON(w, 400, map[string]any{"error": "amount must be positive"}) // refused before any effect
		return
	}
	if amount, _ := body["amount"].(float64); amount > 1000000 {
		writeJSON(w, 402, map[string]any{"error": "refund limit exceeded"}) // executed, refused, no effect
		return
	}
	order := fmt.Sprint(body["order_id"])
	if params, _ := body["params"].(map[string]any); params != nil {
		if args, _ := params["arguments"].(map[string]any); args != nil {
			order = fmt.Sprint(args["order_id"])
		}
	}
	f.mu.Lock()
	f.ledger[order]++
	f.seq++
	id := f.seq
	f.mu.Unlock()
	writeJSON(w, 201, map[string]any{"id": id, "order_id": order})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

type seenRequest struct {
	URI    string
	Header http.Header
	Body   string
}

func (f *fakeRefunds) requests() []seenRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]seenRequest(nil), f.seen...)
}

// lowerUUID is a lower-case RFC 9562 UUID (version 1 to 8, the RFC 9562 variant).
var lowerUUID = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
