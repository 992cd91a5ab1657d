package reference

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/idemproof/idemproof/reference/idempotency"
)

// Flaws that live around the middleware rather than inside it: each wraps the keyed
// handler the way a buggy framework layer would, in front of (or behind) a correct
// middleware. The middleware's own switches are reference/idempotency.Flaws.

// wrapperFlaws are the catalogue entries of the wrapping flaws; their switch is the
// wrapper, so apply does nothing.
func wrapperFlaws() []Flaw {
	none := func(*idempotency.Flaws) {}
	return []Flaw{
		{"wedge-after-contention", "after a contended burst the key answers 409 forever: a request that meets the in-flight marker takes it over, and nobody clears it", "race/burst-50", none},
		{"replay-error-as-success", "a stored business error (402) is replayed as 200 with an empty body", "storage/business-4xx", none},
		{"key-aliasing", "the key is kept as a view of the connection's reused read buffer: on a keep-alive connection the next request's key of the same length finds the previous key's record", "race/keepalive-many-keys", none},
		{"distinct-keys-dedup", "the payload alone decides: the key is replaced by a hash of the request, so two keys with one payload are one operation", "key/distinct-keys-same-body", none},
		{"strict-key-shape", "a key that is not shaped like a UUID (36 characters) makes the key parser fail with a 500", "key/valid-never-5xx", none},
		{"evict-oldest-keys", "keys live in a bounded LRU cache of 128: once 128 newer keys arrived, the oldest is forgotten and its retry inside the retention executes again", "expiry/not-evicted", none},
	}
}

// flawWrappers returns the wrappers of the named flaws (unknown names are parseFlaws's
// to report), innermost first.
func flawWrappers(names []string) []func(http.Handler) http.Handler {
	byName := map[string]func(http.Handler) http.Handler{
		"wedge-after-contention":  wedgeAfterContention,
		"replay-error-as-success": replayErrorAsSuccess,
		"key-aliasing":            keyAliasing,
		"distinct-keys-dedup":     distinctKeysDedup,
		"strict-key-shape":        strictKeyShape,
		"evict-oldest-keys":       evictOldestKeys,
	}
	var out []func(http.Handler) http.Handler
	for _, n := range names {
		if w, ok := byName[n]; ok {
			out = append(out, w)
		}
	}
	return out
}

// wrapFlaws applies the configured wrapping flaws to a keyed handler.
func (s *Server) wrapFlaws(h http.Handler) http.Handler {
	for _, w := range flawWrappers(s.cfg.flawNames) {
		h = w(h)
	}
	return h
}

// maxFlawEntries bounds the per-key and per-connection state of the flaws: past it the
// state starts over (a flaw only has to misbehave, not remember forever).
const maxFlawEntries = 1 << 14

// flawScope names a key as the middleware scopes it: principal, endpoint, key.
func flawScope(r *http.Request) string {
	return principalOf(r) + "\x00" + r.Method + " " + r.URL.Path + "\x00" + r.Header.Get(idempotency.HeaderKey)
}

// markerRoundTrip is the latency of the lock service wedgeAfterContention models: the
// in-flight marker is set with one round trip before the middleware runs.
const markerRoundTrip = 25 * time.Millisecond

// wedgeAfterContention models an in-flight marker kept in a lock service (one round
// trip to set it) that only the request which set it may clear: a request that arrives
// while another with the key holds the marker takes the marker over, and nobody ever
// clears it. Once two requests with one key were in the server at the same time (a
// contended burst, a repeat meeting the original in flight), the key answers 409
// forever. Without contention it behaves like the correct middleware.
func wedgeAfterContention(next http.Handler) http.Handler {
	var mu sync.Mutex
	active := map[string]int{}
	contended, wedged := map[string]bool{}, map[string]bool{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(idempotency.HeaderKey) == "" {
			next.ServeHTTP(w, r)
			return
		}
		scope := flawScope(r)
		mu.Lock()
		if wedged[scope] {
			mu.Unlock()
			w.Header().Set("Retry-After", "1")
			idempotency.WriteProblem(w, http.StatusConflict, "idempotency-key-in-use", "Idempotency-Key in use",
				"a request with this key is still being processed: retry the same request with the same key after Retry-After seconds")
			return
		}
		if len(active) >= maxFlawEntries {
			clear(active)
			clear(contended)
			clear(wedged)
		}
		if active[scope] > 0 {
			contended[scope] = true
		}
		active[scope]++
		mu.Unlock()
		hold(markerRoundTrip)
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			mu.Lock()
			defer mu.Unlock()
			if sw.status == http.StatusConflict {
				contended[scope] = true
			}
			if active[scope]--; active[scope] <= 0 {
				delete(active, scope)
				if contended[scope] {
					wedged[scope] = true
				}
			}
		}()
		next.ServeHTTP(sw, r)
	})
}

// replayErrorAsSuccess: a replayed 4xx (a stored business error) is turned into a 200
// with an empty body, as a replay layer does that rebuilds the response from a "done"
// flag and the stored body it failed to keep.
func replayErrorAsSuccess(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		buf := &bufferedWriter{header: http.Header{}}
		next.ServeHTTP(buf, r)
		status := buf.code()
		if buf.header.Get(idempotency.HeaderReplayed) == "true" && status >= 400 && status < 500 {
			for _, h := range []string{"Content-Type", "Content-Length"} {
				buf.header.Del(h)
			}
			buf.body.Reset()
			status = http.StatusOK
		}
		for k, v := range buf.header {
			w.Header()[k] = v
		}
		w.WriteHeader(status)
		w.Write(buf.body.Bytes())
	})
}

// keyAliasing models a zero-copy header parser: the key is a view of the connection's
// read buffer, and the buffer is reused for the connection's next request. The record
// made for one key is found again when the next request on the connection carries a key
// of the same length (its bytes now sit where the old key's were): that request is
// served as the previous key. A fresh connection per request (or Connection: close)
// never shows it, which is how the bug hides from clients without keep-alive.
func keyAliasing(next http.Handler) http.Handler {
	var mu sync.Mutex
	last := map[string]string{} // connection (remote address) -> the key its buffer still holds
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get(idempotency.HeaderKey)
		if key == "" {
			next.ServeHTTP(w, r)
			return
		}
		mu.Lock()
		prev, reused := last[r.RemoteAddr]
		switch {
		case r.Close:
			delete(last, r.RemoteAddr) // the connection ends with this request
		default:
			if len(last) >= maxFlawEntries {
				clear(last)
			}
			last[r.RemoteAddr] = key
		}
		mu.Unlock()
		if reused && prev != key && len(prev) == len(key) {
			r.Header.Set(idempotency.HeaderKey, prev)
		}
		next.ServeHTTP(w, r)
	})
}

// distinctKeysDedup: the key is replaced by a digest of the request (method, path,
// body), so the payload alone decides what counts as a repeat. A key the middleware
// would refuse (empty, too long) is left for it to refuse.
func distinctKeysDedup(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := idempotency.ParseKey(r.Header.Values(idempotency.HeaderKey)); err != nil {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, idempotency.DefaultMaxBody+1))
		if err != nil {
			idempotency.WriteProblem(w, http.StatusBadRequest, "body-unreadable", "Request body unreadable", "resend the request")
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		sum := sha256.Sum256(append([]byte(r.Method+" "+r.URL.Path+"\n"), body...))
		r.Header.Set(idempotency.HeaderKey, "payload-"+hex.EncodeToString(sum[:]))
		next.ServeHTTP(w, r)
	})
}

// strictKeyShape: a key parser that only knows UUIDs fails with a 500 on any key that is
// not 36 characters long, valid or not.
func strictKeyShape(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v := r.Header.Values(idempotency.HeaderKey); len(v) == 1 && len(v[0]) != 36 {
			idempotency.WriteProblem(w, http.StatusInternalServerError, "internal-error", "Internal Server Error",
				"invalid UUID length: "+strconv.Itoa(len(v[0])))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// statusWriter passes everything through and remembers the status.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// bufferedWriter holds a whole response so a flaw can rewrite it.
type bufferedWriter struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferedWriter) Header() http.Header { return b.header }

func (b *bufferedWriter) WriteHeader(code int) {
	if b.status == 0 {
		b.status = code
	}
}

func (b *bufferedWriter) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.body.Write(p)
}

func (b *bufferedWriter) code() int {
	if b.status == 0 {
		return http.StatusOK
	}
	return b.status
}
