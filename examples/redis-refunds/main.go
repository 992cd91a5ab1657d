// Command redis-refunds is a keyed refund API whose idempotency middleware keeps its keys
// in Redis — and, like several middlewares of this shape, FAILS OPEN: when Redis errors
// (down, reset, timed out), it runs the handler anyway, unkeyed, so a retry that arrives
// while Redis flaps executes a second time. `--fail-closed` makes it refuse with 503
// instead, which is what the contract needs. It is its own Go module (go-redis), like
// examples/fiber-refunds, and the worked example of docs/profiles.md ("Store outages").
//
//   - a key is taken with SET NX (value "pending:" and a token of its own, expiring after a
//     2 s lock timeout, so a key whose request never completed — its SET's answer lost —
//     is not wedged) before the work; until the work's result is recorded the lock is
//     extended every 500 ms, only while it still holds the request's token, so a slow
//     machine does not let it expire under running work. The lock is not fenced: when
//     Redis cannot be reached for the whole 2 s meanwhile, the lock expires and a retry
//     that comes then executes again. A repeat while the key is pending gets 409 with
//     Retry-After; the completed response is stored for the retention (retried for up to
//     10 s when Redis fails right then); a completed key's status and body are replayed,
//     marked Idempotent-Replayed;
//   - the refunds themselves (the ledger, GET /v1/refunds?order_id=) live in the process,
//     apart from Redis, as an application's own database does;
//   - every Redis call has a 500 ms timeout and no retries of go-redis's own.
//
// Run it with `go run . --listen 127.0.0.1:8092 --redis 127.0.0.1:6380` and point the
// profile's store.listen at 127.0.0.1:6380 (store.upstream: where redis-server listens).
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// storeTimeout bounds one Redis call.
const storeTimeout = 500 * time.Millisecond

// lockTimeout is how long a pending key holds without being extended: past it a request
// that never completed no longer blocks its key's retry.
const lockTimeout = 2 * time.Second

// extendEvery is how often a running request extends its lock: four tries within the
// lock timeout, each bounded by storeTimeout.
const extendEvery = lockTimeout / 4

// extendIfOwned extends a pending lock only while it still holds the request's token: a
// lock that expired and was taken by another copy, or already replaced by the stored
// response, is left alone.
var extendIfOwned = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("PEXPIRE", KEYS[1], ARGV[2]) end return 0`)

// completeFor bounds how long the middleware keeps trying to store a completed response
// (or to release a failed one) while Redis fails: within the lock timeout's reach.
const completeFor = 10 * time.Second

type server struct {
	rdb        *redis.Client
	retention  time.Duration
	lock       time.Duration // how long a pending key holds (lockTimeout)
	failClosed bool

	mu     sync.Mutex
	ledger map[string][]json.RawMessage
}

func newServer(redisAddr string, retention time.Duration, failClosed bool) *server {
	rdb := redis.NewClient(&redis.Options{
		Addr: redisAddr, DialTimeout: storeTimeout, ReadTimeout: storeTimeout, WriteTimeout: storeTimeout,
		MaxRetries: -1, // no retries of its own: an error is the middleware's to handle
	})
	return &server{rdb: rdb, retention: retention, lock: lockTimeout, failClosed: failClosed, ledger: map[string][]json.RawMessage{}}
}

func (s *server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("POST /v1/refunds", s.idempotent(http.HandlerFunc(s.refund)))
	mux.HandleFunc("GET /v1/refunds", s.list)
	return mux
}

// stored is a completed key's response.
type stored struct {
	Status int             `json:"status"`
	Body   json.RawMessage `json:"body"`
}

// idempotent is the middleware: the key is taken in Redis before the work.
func (s *server) idempotent(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get("Idempotency-Key")
		if key == "" || len(key) > 255 {
			problem(w, http.StatusBadRequest, "an Idempotency-Key header of 1 to 255 characters is required")
			return
		}
		rkey := "idem:" + key
		ctx := r.Context()
		token := pendingToken()
		taken, err := s.rdb.SetNX(ctx, rkey, token, s.lock).Result()
		if err != nil {
			if s.failClosed {
				w.Header().Set("Retry-After", "1")
				problem(w, http.StatusServiceUnavailable, "the idempotency store is unavailable; nothing was done: retry with the same key")
				return
			}
			// FAIL OPEN: the bug this example exists to show.
			log.Printf("redis-refunds: idempotency store failed (%v): running the request unkeyed", err)
			next.ServeHTTP(w, r)
			return
		}
		if !taken {
			s.answerExisting(w, r, rkey)
			return
		}
		rec := &recorder{header: http.Header{}}
		// Extended until the result is recorded, not only while the work runs: storing it
		// is retried for up to 10 s while Redis fails, and a lock that expired meanwhile
		// would let a retry execute the done work again.
		stopExtending := s.extendWhileRunning(rkey, token)
		next.ServeHTTP(rec, r)
		if rec.status >= 500 {
			s.retrying(func(ctx context.Context) error { return s.rdb.Del(ctx, rkey).Err() }) // not stored: the retry executes
		} else {
			value, _ := json.Marshal(stored{Status: rec.status, Body: rec.body})
			if err := s.retrying(func(ctx context.Context) error { return s.rdb.Set(ctx, rkey, value, s.retention).Err() }); err != nil {
				log.Printf("redis-refunds: store the response of %s: %v", key, err)
			}
		}
		stopExtending()
		rec.flush(w)
	})
}

// pendingToken is a pending key's value: "pending:" and a random token, so a request
// extends only its own lock.
func pendingToken() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return "pending:" + hex.EncodeToString(b)
}

// extendWhileRunning extends the request's lock every extendEvery until the returned
// function is called; that function returns once no extension is in flight. An
// extension that meets the stored response (no longer the token) changes nothing.
func (s *server) extendWhileRunning(rkey, token string) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(extendEvery)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				_ = extendIfOwned.Run(context.Background(), s.rdb, []string{rkey}, token, s.lock.Milliseconds()).Err()
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

// retrying runs a Redis write until it succeeds or completeFor has passed, 50 ms apart:
// the work is done, and its record must not be lost to a moment of Redis failing.
func (s *server) retrying(write func(context.Context) error) error {
	deadline := time.Now().Add(completeFor)
	for {
		err := write(context.Background())
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (s *server) answerExisting(w http.ResponseWriter, r *http.Request, rkey string) {
	v, err := s.rdb.Get(r.Context(), rkey).Result()
	switch {
	case err != nil && !errors.Is(err, redis.Nil):
		w.Header().Set("Retry-After", "1")
		problem(w, http.StatusServiceUnavailable, "the idempotency store is unavailable; retry with the same key")
	case err != nil || strings.HasPrefix(v, "pending"):
		w.Header().Set("Retry-After", "1")
		problem(w, http.StatusConflict, "a request with this key is still being processed")
	default:
		var st stored
		if json.Unmarshal([]byte(v), &st) != nil {
			problem(w, http.StatusInternalServerError, "stored response unreadable")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Idempotent-Replayed", "true")
		w.WriteHeader(st.Status)
		w.Write(st.Body)
	}
}

// refund is the work: one refund row for the order, answered 201.
func (s *server) refund(w http.ResponseWriter, r *http.Request) {
	var req struct {
		OrderID string `json:"order_id"`
		Amount  int    `json:"amount"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.OrderID == "" || req.Amount <= 0 {
		problem(w, http.StatusBadRequest, "want {\"order_id\": \"…\", \"amount\": a positive integer}")
		return
	}
	id := make([]byte, 8)
	_, _ = rand.Read(id)
	body, _ := json.Marshal(map[string]any{"id": "re_" + hex.EncodeToString(id), "order_id": req.OrderID, "amount": req.Amount})
	s.mu.Lock()
	s.ledger[req.OrderID] = append(s.ledger[req.OrderID], body)
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	w.Write(body)
}

// list is the ledger: the refunds of one order.
func (s *server) list(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	rows := append([]json.RawMessage{}, s.ledger[r.URL.Query().Get("order_id")]...)
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"data": rows, "count": len(rows)})
}

func problem(w http.ResponseWriter, status int, detail string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"title":%q,"status":%d,"detail":%q}`, http.StatusText(status), status, detail)
}

// recorder buffers the handler's response so the middleware can store it.
type recorder struct {
	header http.Header
	status int
	body   []byte
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
}
func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	r.body = append(r.body, b...)
	return len(b), nil
}
func (r *recorder) flush(w http.ResponseWriter) {
	for k, v := range r.header {
		w.Header()[k] = v
	}
	w.WriteHeader(r.status)
	w.Write(r.body)
}

func main() {
	listen := flag.String("listen", "127.0.0.1:8092", "address to serve on")
	redisAddr := flag.String("redis", "127.0.0.1:6379", "the Redis address (the profile's store.listen, for the store scenarios)")
	retention := flag.Duration("retention", time.Hour, "how long a key lives")
	failClosed := flag.Bool("fail-closed", false, "refuse with 503 when Redis errors, instead of running the request unkeyed")
	lifetime := flag.Duration("lifetime", 0, "exit after this long (0: never)")
	flag.Parse()
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	if *lifetime > 0 {
		time.AfterFunc(*lifetime, func() { os.Exit(0) })
	}
	fmt.Println("redis-refunds on http://"+ln.Addr().String(), "redis", *redisAddr, "fail-closed", strconv.FormatBool(*failClosed))
	log.Fatal(http.Serve(ln, newServer(*redisAddr, *retention, *failClosed).routes()))
}
