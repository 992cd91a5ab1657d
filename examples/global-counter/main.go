// Command global-counter is a tiny keyed API whose ledger is ONE counter: every effect
// of every request adds to `GET /counter`, as an account balance or a running total
// does. It has no per-entity ledger to read, and its test hooks are query parameters
// (`?ms=400` holds the work, `?fail=503` fails it), so its profile needs
// `side_effects.scope: global` and the query form of the hooks. It is its own Go module,
// like examples/fiber-refunds, and its idempotency is written to the IETF draft:
//
//   - a key (1–255 printable ASCII characters; the RFC 8941 quoted form is the same key)
//     is recorded before the work, with a digest of the body;
//   - a repeat while the original runs gets 409 with Retry-After; the same key with
//     another body gets 422; a replay is byte for byte, marked Idempotent-Replayed;
//   - a validation error (400) and a failure (5xx) are not stored: the key is released;
//     a business refusal (402, amount over 1000) is stored and replayed;
//   - keys expire after the retention, counted from their first record;
//   - every refusal is application/problem+json.
//
// Run it with `go run . --listen 127.0.0.1:8091 --retention 5s`.
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// maxHold bounds ?ms=: a hook, not a way to park connections forever.
const maxHold = 30 * time.Second

type entry struct {
	digest  [32]byte
	first   time.Time
	done    bool
	status  int
	body    []byte
	expires time.Time
}

type counter struct {
	retention time.Duration
	mu        sync.Mutex
	total     int
	keys      map[string]*entry
}

func newServer(retention time.Duration) http.Handler {
	c := &counter{retention: retention, keys: map[string]*entry{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /counter", c.increment)
	mux.HandleFunc("GET /counter", c.read)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, 200, map[string]string{"status": "ok"}) })
	return mux
}

func (c *counter) read(w http.ResponseWriter, _ *http.Request) {
	c.mu.Lock()
	n := c.total
	c.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]int{"count": n})
}

func (c *counter) increment(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		problem(w, http.StatusBadRequest, "Request body unreadable", "resend the request")
		return
	}
	key, err := parseKey(r.Header.Values("Idempotency-Key"))
	if err != nil {
		problem(w, http.StatusBadRequest, "Idempotency-Key missing or invalid", err.Error())
		return
	}
	digest := sha256.Sum256(body)
	now := time.Now()
	c.mu.Lock()
	e, seen := c.keys[key]
	if seen && now.After(e.expires) {
		delete(c.keys, key)
		seen = false
	}
	switch {
	case seen && e.digest != digest:
		c.mu.Unlock()
		problem(w, http.StatusUnprocessableEntity, "Idempotency-Key reused with another request", "mint a new key for a new operation")
		return
	case seen && !e.done:
		c.mu.Unlock()
		w.Header().Set("Retry-After", "1")
		problem(w, http.StatusConflict, "Idempotency-Key in use", "the original request is still running: retry after Retry-After seconds")
		return
	case seen:
		status, stored := e.status, e.body
		c.mu.Unlock()
		w.Header().Set("Content-Type", contentType(status))
		w.Header().Set("Idempotent-Replayed", "true")
		w.WriteHeader(status)
		w.Write(stored)
		return
	}
	e = &entry{digest: digest, first: now, expires: now.Add(c.retention)}
	c.keys[key] = e
	c.mu.Unlock()

	status, out := c.work(r, body)
	c.mu.Lock()
	if status == http.StatusBadRequest || status >= 500 {
		delete(c.keys, key) // not executed, or failed: nothing to store, the key is free
	} else {
		e.done, e.status, e.body = true, status, out
	}
	c.mu.Unlock()
	w.Header().Set("Content-Type", contentType(status))
	w.WriteHeader(status)
	w.Write(out)
}

// work validates, holds (?ms=), fails (?fail=) or adds to the counter.
func (c *counter) work(r *http.Request, body []byte) (int, []byte) {
	var in struct {
		Amount json.Number `json:"amount"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	amount, err := int64(0), dec.Decode(&in)
	if err == nil {
		amount, err = in.Amount.Int64()
	}
	if err != nil || amount <= 0 {
		if f, ferr := strconv.ParseFloat(string(in.Amount), 64); ferr == nil && f > 0 && f == float64(int64(f)) {
			amount, err = int64(f), nil // 4900.0 is the integer 4900
		} else {
			return http.StatusBadRequest, problemBody(http.StatusBadRequest, "Invalid request", "send {\"amount\": N} with a positive integer N")
		}
	}
	q := r.URL.Query()
	if ms, err := strconv.Atoi(q.Get("ms")); err == nil && ms > 0 {
		time.Sleep(min(time.Duration(ms)*time.Millisecond, maxHold))
	}
	if code, err := strconv.Atoi(q.Get("fail")); err == nil && code >= 500 && code <= 599 {
		return code, problemBody(code, "The work failed", "nothing was counted: retry with the same key")
	}
	if amount > 1000 {
		return http.StatusPaymentRequired, problemBody(http.StatusPaymentRequired, "Amount over the limit", "count at most 1000 at once")
	}
	c.mu.Lock()
	c.total++
	n := c.total
	c.mu.Unlock()
	out, _ := json.Marshal(map[string]any{"id": fmt.Sprintf("inc_%d", n), "amount": amount})
	return http.StatusCreated, out
}

// parseKey accepts one key of 1–255 printable ASCII characters; "abc" is abc.
func parseKey(values []string) (string, error) {
	if len(values) != 1 {
		return "", errors.New("send exactly one Idempotency-Key header")
	}
	key := values[0]
	if len(key) >= 2 && key[0] == '"' && key[len(key)-1] == '"' {
		key = key[1 : len(key)-1]
		if strings.ContainsAny(key, `"\`) {
			return "", errors.New("a quoted key must not contain quotes or backslashes")
		}
	}
	if key == "" || len(key) > 255 {
		return "", errors.New("the key must be 1 to 255 characters")
	}
	for i := 0; i < len(key); i++ {
		if key[i] < 0x20 || key[i] > 0x7e {
			return "", errors.New("the key must be printable ASCII")
		}
	}
	return key, nil
}

func contentType(status int) string {
	if status >= 400 {
		return "application/problem+json"
	}
	return "application/json"
}

func problemBody(status int, title, detail string) []byte {
	b, _ := json.Marshal(map[string]any{"type": "about:blank", "title": title, "status": status, "detail": detail})
	return b
}

func problem(w http.ResponseWriter, status int, title, detail string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	w.Write(problemBody(status, title, detail))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

func main() {
	listen := flag.String("listen", "127.0.0.1:8091", "address to listen on")
	retention := flag.Duration("retention", 5*time.Second, "how long a key lives, from its first record")
	flag.Parse()
	if *retention <= 0 {
		fmt.Fprintln(os.Stderr, "global-counter: --retention must be positive, e.g. 2s")
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatalf("global-counter: %v", err)
	}
	log.Printf("global-counter: listening on http://%s (retention %s)", ln.Addr(), *retention)
	log.Fatal(http.Serve(ln, newServer(*retention)))
}
