package clientcheck

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/reference/idempotency"
)

// Headers the front adds to every attempt of the operation. The proxy's rules match on
// the first, the journal keeps both (so the front's record and the journal's join), and
// the proxy's upstream transport removes them: the target never sees them.
const (
	HeaderFault   = "X-Idemproof-Fault"   // the fault kind dealt to the attempt's operation, "none" for none
	HeaderAttempt = "X-Idemproof-Attempt" // the front's number of the attempt
	// HeaderFirstKeyless marks the first attempt without a key of an operation: the
	// proxy numbers attempts per key, so a client that sends none would otherwise never
	// meet the fault its operation was dealt, and its retry of a committed request (the
	// duplicate a key prevents) would never be shown.
	HeaderFirstKeyless = "X-Idemproof-First-Keyless"
)

// Bounds of what the front keeps: a request body it reads to find the entity, and the
// delivered body it keeps for the classifier (an answer's verdict is near its start).
const (
	maxObservedBody  = 1 << 20
	maxDeliveredBody = 64 << 10
	// maxDeliveredTotal bounds the delivered bytes kept over a whole run: past it, an
	// answer's body is not kept (its class then rests on its status and headers).
	maxDeliveredTotal = 64 << 20
)

// front sits before the fault proxy. For each attempt of the operation it learns the
// operation the request names (the profile's entity), deals the operation its fault kind,
// and records the answer the proxy delivered (status, headers, the start of the body)
// and when it started and ended.
//
//	client <-> front <-> faultproxy <-> target
type front struct {
	next      http.Handler
	method    string
	pathGlob  string
	entity    profile.EntityRef
	keyHeader string
	keyField  string // the profile's key_field as a gjson path (faultproxy.KeyPath)
	// tool, for an MCP operation, is its tool: only tools/call requests of it are
	// attempts of the operation.
	tool   string
	dealer *dealer
	// baseline reads an entity's ledger before its first attempt goes on (nil: none), so
	// effects left by an earlier run against the same target are not counted.
	baseline *baselines
	// restarter decides which attempts restart the client (nil: none do).
	restarter *restarter

	seq      atomic.Uint64
	mu       sync.Mutex
	attempts map[uint64]*frontAttempt
	keys     map[string]bool // keys seen so far: the next attempt of one is not its first
	keyless  map[string]bool // operations that have had an attempt without a key
	kept     int             // delivered body bytes kept, at most maxDeliveredTotal
}

// frontAttempt is what the front saw of one attempt.
type frontAttempt struct {
	entity     string
	op         string // entity, or the body operation when the request named none
	key        string // the key the attempt carried ("" none)
	payload    string // SHA-256 (hex) of the body without the key
	kind       string
	start, end time.Time
	// sent is when the front last handed answer bytes on, stamped before the write: the
	// client cannot have had the whole answer earlier. end (after the handler returned)
	// can be later than the client's receipt on a loaded machine.
	sent   time.Time
	wrote  bool // a status line was written through the front (not a hijacked connection)
	status int
	header http.Header
	body   []byte
}

func newFront(next http.Handler, p *profile.Profile, entity profile.EntityRef, d *dealer) *front {
	return &front{
		next: next, method: p.Operation.Method, pathGlob: operationPathGlob(p), entity: entity,
		keyHeader: p.KeyHeader, keyField: faultproxy.KeyPath(p.KeyField), tool: p.Operation.Tool, dealer: d, attempts: map[uint64]*frontAttempt{}, keys: map[string]bool{}, keyless: map[string]bool{},
	}
}

func (f *front) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !strings.EqualFold(r.Method, f.method) || !pathMatches(f.pathGlob, r.URL.Path) {
		f.next.ServeHTTP(w, r)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxObservedBody+1))
	if err != nil {
		http.Error(w, "client-check: read request body: "+err.Error(), http.StatusBadRequest)
		return
	}
	if len(body) > maxObservedBody {
		// Too large to look into: forwarded as is, never counted as an attempt.
		r.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
		f.next.ServeHTTP(w, r)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	attrs, a := f.begin(r.Context(), r, body)
	if a == nil {
		f.next.ServeHTTP(w, r)
		return
	}
	for k, v := range attrs {
		r.Header.Set(k, v)
	}
	cw := &captureWriter{ResponseWriter: w, a: a, f: f}
	f.next.ServeHTTP(cw, r)
	f.mu.Lock()
	a.end = time.Now()
	f.mu.Unlock()
}

// begin takes one request (r nil over stdio, where the body is the JSON-RPC line): when
// it is an attempt of the keyed operation, it numbers it, deals its operation a fault
// kind, and returns the attributes the fault rules match on and the journal keeps
// (HeaderAttempt, HeaderFault, …) with the front's record of it; nil otherwise.
func (f *front) begin(ctx context.Context, r *http.Request, body []byte) (map[string]string, *frontAttempt) {
	if f.tool != "" && !f.isToolCall(body) {
		// Another JSON-RPC request (initialize, tools/list, a read-only tool such as the
		// ledger): no attempt of the keyed operation, retried freely.
		return nil, nil
	}
	var h http.Header
	if r != nil {
		h = r.Header
	}
	entity := f.entityOf(r, body)
	keyed := f.hasKey(h, body)
	if entity == "" && !keyed {
		// Neither names an operation nor carries a key (a session set-up call on the
		// same endpoint, say): not an attempt of the keyed operation.
		return nil, nil
	}
	op := entity
	if op == "" {
		op = bodyOperation(body)
	}
	if entity != "" && f.baseline != nil {
		f.baseline.take(context.WithoutCancel(ctx), entity) // a client giving up must not void the count
	}
	a := &frontAttempt{entity: entity, op: op, key: f.keyOf(h, body), payload: f.payloadOf(body), start: time.Now()}
	a.kind = f.dealer.deal(op).Kind
	n := f.seq.Add(1)
	f.mu.Lock()
	f.attempts[n] = a
	firstOfKey := a.key != "" && !f.keys[a.key]
	f.keys[a.key] = true
	firstKeyless := !keyed && !f.keyless[op]
	if !keyed {
		f.keyless[op] = true
	}
	f.mu.Unlock()
	attrs := map[string]string{HeaderAttempt: strconv.FormatUint(n, 10), HeaderFault: orNone(a.kind)}
	if firstKeyless {
		attrs[HeaderFirstKeyless] = "1"
	}
	if f.restarter.claim(op, a.kind, firstOfKey) {
		attrs[headerRestart] = "1"
	}
	return attrs, a
}

// isToolCall reports whether a JSON-RPC request is a tools/call of the operation's tool.
func (f *front) isToolCall(body []byte) bool {
	got := gjson.GetManyBytes(body, "method", "params.name")
	return got[0].Str == "tools/call" && got[1].Str == f.tool
}

func (f *front) entityOf(r *http.Request, body []byte) string {
	switch {
	case r == nil && f.entity.JSON == "":
		return "" // over stdio a request is its JSON-RPC line alone
	case f.entity.Header != "":
		return r.Header.Get(f.entity.Header)
	case f.entity.Path != "":
		e, _ := profile.PathEntity(f.entity.Path, r.URL.Path)
		return e
	case f.entity.Form != "":
		return profile.FormValue(string(body), f.entity.Form)
	}
	v := gjson.GetBytes(body, f.entity.JSON)
	if v.Type == gjson.String || v.Type == gjson.Number {
		return v.String()
	}
	return ""
}

// payloadOf fingerprints what the client asked for, the key left out: a body that
// carries the key differs by it alone between a retry under a fresh key and the original.
// A JSON-RPC request's id is left out too: every MCP SDK numbers each request anew (the
// go-sdk's and mcp-go's connections count them), so a correct retry never has the
// original's bytes. A JSON body is compared as canonical JSON, so a retry re-serialized
// with its members in another order is the same payload.
func (f *front) payloadOf(body []byte) string {
	if f.keyField != "" {
		if stripped, err := sjson.DeleteBytes(body, f.keyField); err == nil {
			body = stripped
		}
	}
	if gjson.ValidBytes(body) && gjson.GetBytes(body, "jsonrpc").Exists() {
		if stripped, err := sjson.DeleteBytes(body, "id"); err == nil {
			body = stripped
		}
	}
	if canonical, ok := idempotency.CanonicalJSON(body); ok {
		body = canonical
	}
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:])
}

// keyOf is the key an attempt carried ("" none).
func (f *front) keyOf(h http.Header, body []byte) string {
	if f.keyField != "" {
		return gjson.GetBytes(body, f.keyField).String()
	}
	return h.Get(f.keyHeader)
}

func (f *front) hasKey(h http.Header, body []byte) bool {
	if f.keyField != "" {
		return gjson.GetBytes(body, f.keyField).Exists()
	}
	_, ok := h[http.CanonicalHeaderKey(f.keyHeader)]
	return ok
}

// snapshot copies the attempt the front numbered n.
func (f *front) snapshot(n uint64) (frontAttempt, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	a, ok := f.attempts[n]
	if !ok {
		return frontAttempt{}, false
	}
	return *a, true
}

// baselines are the ledger counts of each entity before its first attempt.
type baselines struct {
	ledger ledgerReader
	mu     sync.Mutex
	byOp   map[string]*baseline
}

type baseline struct {
	once sync.Once
	n    int
	err  error
}

func newBaselines(l ledgerReader) *baselines {
	return &baselines{ledger: l, byOp: map[string]*baseline{}}
}

// take reads the entity's count once, whichever attempt comes first; the others wait.
func (b *baselines) take(ctx context.Context, entity string) {
	b.mu.Lock()
	e, ok := b.byOp[entity]
	if !ok {
		e = &baseline{}
		b.byOp[entity] = e
	}
	b.mu.Unlock()
	e.once.Do(func() { e.n, e.err = b.ledger.count(ctx, entity) })
}

// of is the entity's count before its first attempt (0 when none was taken).
func (b *baselines) of(entity string) (int, error) {
	b.mu.Lock()
	e, ok := b.byOp[entity]
	b.mu.Unlock()
	if !ok {
		return 0, nil
	}
	e.once.Do(func() {}) // a take still running finishes first
	return e.n, e.err
}

// bodyOperation names an operation whose request named no entity by its body hash, the
// way the journal's records are grouped.
func bodyOperation(body []byte) string {
	sum := sha256.Sum256(body)
	return "body:" + hex.EncodeToString(sum[:])[:12]
}

func orNone(kind string) string {
	if kind == "" {
		return "none"
	}
	return kind
}

// captureWriter keeps the status, headers and the start of the body the proxy delivered.
// It flushes through (event streams must not sit in a buffer) and unwraps for the
// proxy's hijacking faults, which bypass it.
type captureWriter struct {
	http.ResponseWriter
	a *frontAttempt
	f *front // its lock guards a: snapshots may read while a straggler still writes
}

func (c *captureWriter) WriteHeader(code int) {
	c.f.mu.Lock()
	c.a.sent = time.Now()
	if !c.a.wrote && code >= 200 {
		c.a.wrote, c.a.status, c.a.header = true, code, c.Header().Clone()
	}
	c.f.mu.Unlock()
	c.ResponseWriter.WriteHeader(code)
}

func (c *captureWriter) Write(b []byte) (int, error) {
	c.f.mu.Lock()
	c.a.sent = time.Now()
	if !c.a.wrote {
		c.a.wrote, c.a.status, c.a.header = true, http.StatusOK, c.Header().Clone()
	}
	room := min(maxDeliveredBody-len(c.a.body), maxDeliveredTotal-c.f.kept)
	if room > 0 {
		n := min(room, len(b))
		c.a.body = append(c.a.body, b[:n]...)
		c.f.kept += n
	}
	c.f.mu.Unlock()
	return c.ResponseWriter.Write(b)
}

func (c *captureWriter) Flush() {
	c.f.mu.Lock()
	c.a.sent = time.Now()
	c.f.mu.Unlock()
	if fl, ok := c.ResponseWriter.(http.Flusher); ok {
		fl.Flush()
	}
}

func (c *captureWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// stripInternal removes the front's headers before a request leaves for the target.
type stripInternal struct{ next http.RoundTripper }

func (s stripInternal) RoundTrip(r *http.Request) (*http.Response, error) {
	if _, ok := r.Header[HeaderAttempt]; ok {
		r = r.Clone(r.Context())
		r.Header.Del(HeaderAttempt)
		r.Header.Del(HeaderFault)
		r.Header.Del(HeaderFirstKeyless)
		r.Header.Del(headerRestart)
	}
	return s.next.RoundTrip(r)
}

// CloseIdleConnections lets the proxy close the pooled connections of the transport.
func (s stripInternal) CloseIdleConnections() {
	if t, ok := s.next.(interface{ CloseIdleConnections() }); ok {
		t.CloseIdleConnections()
	}
}
