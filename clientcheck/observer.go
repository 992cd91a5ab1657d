package clientcheck

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// maxObservedBody bounds what the observer reads of one request body; the refund body is
// a few dozen bytes.
const maxObservedBody = 1 << 20

// observer sits between the proxy and the reference server. The journal holds only a
// body hash, so the observer learns which operation (order_id) each body names, and the
// Retry-After of every 409 the server sent, per key.
//
//	client <-> faultproxy <-> observer <-> reference server
type observer struct {
	next      http.Handler
	keyHeader string

	mu         sync.Mutex
	entities   map[string]string        // body SHA-256 → order_id
	retryAfter map[string]time.Duration // key → Retry-After of the last 409
}

func newObserver(next http.Handler, keyHeader string) *observer {
	return &observer{next: next, keyHeader: keyHeader, entities: map[string]string{}, retryAfter: map[string]time.Duration{}}
}

func (o *observer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != OperationMethod || r.URL.Path != OperationPath {
		o.next.ServeHTTP(w, r)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxObservedBody))
	if err != nil {
		http.Error(w, "read body: "+err.Error(), http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	sum := sha256.Sum256(body)
	var fields struct {
		OrderID string `json:"order_id"`
	}
	if json.Unmarshal(body, &fields) == nil && fields.OrderID != "" {
		o.mu.Lock()
		o.entities[hex.EncodeToString(sum[:])] = fields.OrderID
		o.mu.Unlock()
	}
	sw := &statusWriter{ResponseWriter: w}
	o.next.ServeHTTP(sw, r)
	if sw.status == http.StatusConflict {
		if secs, err := strconv.Atoi(sw.Header().Get("Retry-After")); err == nil {
			o.mu.Lock()
			o.retryAfter[r.Header.Get(o.keyHeader)] = time.Duration(secs) * time.Second
			o.mu.Unlock()
		}
	}
}

// snapshot copies what was observed.
func (o *observer) snapshot() (entities map[string]string, retryAfter map[string]time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	entities = make(map[string]string, len(o.entities))
	for k, v := range o.entities {
		entities[k] = v
	}
	retryAfter = make(map[string]time.Duration, len(o.retryAfter))
	for k, v := range o.retryAfter {
		retryAfter[k] = v
	}
	return entities, retryAfter
}

// statusWriter remembers the status the handler wrote.
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

// Unwrap lets http.ResponseController reach the underlying writer.
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }
