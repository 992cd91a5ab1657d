package idempotency

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

// Defaults of Config.
const (
	DefaultRetention   = 24 * time.Hour
	DefaultLockTimeout = 30 * time.Second
	DefaultMaxBody     = 1 << 20
	HeaderKey          = "Idempotency-Key"
	HeaderReplayed     = "Idempotent-Replayed"
)

// DefaultReplayHeaders are the response headers stored and replayed with the body.
var DefaultReplayHeaders = []string{"Content-Type", "Location"}

// Hooks are optional points in a request's life, for crash tests. Nil means nothing.
type Hooks struct {
	// AfterKey runs after the key is recorded and locked, before the handler.
	AfterKey func(*http.Request)
	// AfterCommit runs after effects and response are committed, before the response
	// is written.
	AfterCommit func(*http.Request)
}

// Config configures the middleware. Store is required; zero values take defaults.
type Config struct {
	Store Store
	// Now is the clock for windows and locks (nil: time.Now).
	Now          func() time.Time
	Retention    time.Duration // default DefaultRetention
	LockTimeout  time.Duration // default DefaultLockTimeout
	KeysOptional bool          // a request without a key executes unkeyed instead of 400
	// Principal names the caller a request acts for (nil: everyone is "anonymous").
	Principal     func(*http.Request) string
	ReplayHeaders []string // default DefaultReplayHeaders
	MaxBody       int64    // default DefaultMaxBody
	Hooks         Hooks
	Flaws         Flaws
	// StoreTimeout bounds the key's acquisition on the two-phase path: a store that has
	// not recorded the key by then gets the request refused with 503 (nothing was done;
	// the client retries). 0: no bound beyond the store's own.
	StoreTimeout time.Duration
	// UnkeyedStore is where work done without a key commits its effects (KeysOptional):
	// the application's own database connection, when the key store is reached apart
	// from it. nil: Store.
	UnkeyedStore Store
	// OneTransaction runs the request as one transaction when the Store is a LocalStore
	// (see the package doc, "Two paths"): only for a handler whose every effect is a
	// staged row and that does nothing outside the database. Otherwise ignored.
	OneTransaction bool
	Logger         *slog.Logger // store failures; nil: slog.Default()
}

type middleware struct {
	cfg  Config
	next http.Handler
}

// New wraps next with the Idempotency-Key contract described in the package doc.
func New(cfg Config, next http.Handler) (http.Handler, error) {
	if cfg.Store == nil {
		return nil, errors.New("idempotency: a Store is required")
	}
	if cfg.Retention < 0 || cfg.LockTimeout < 0 {
		return nil, errors.New("idempotency: retention and lock timeout must not be negative")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Retention == 0 {
		cfg.Retention = DefaultRetention
	}
	if cfg.LockTimeout == 0 {
		cfg.LockTimeout = DefaultLockTimeout
	}
	if cfg.Principal == nil {
		cfg.Principal = func(*http.Request) string { return "anonymous" }
	}
	if cfg.ReplayHeaders == nil {
		cfg.ReplayHeaders = DefaultReplayHeaders
	}
	// Canonical once here, not on every stored response.
	canonical := make([]string, len(cfg.ReplayHeaders))
	for i, name := range cfg.ReplayHeaders {
		canonical[i] = http.CanonicalHeaderKey(name)
	}
	cfg.ReplayHeaders = canonical
	if cfg.MaxBody == 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.UnkeyedStore == nil {
		cfg.UnkeyedStore = cfg.Store
	}
	if cfg.StoreTimeout < 0 {
		return nil, errors.New("idempotency: the store timeout must not be negative")
	}
	return &middleware{cfg: cfg, next: next}, nil
}

// forever stands in for "no limit" where a flaw disables a timeout.
const forever = 100 * 365 * 24 * time.Hour

func (m *middleware) retention() time.Duration {
	switch {
	case m.cfg.Flaws.NeverExpire:
		return forever
	case m.cfg.Flaws.EarlyExpiry:
		return max(m.cfg.Retention/10, time.Millisecond)
	}
	return m.cfg.Retention
}

func (m *middleware) lockTimeout() time.Duration {
	if m.cfg.Flaws.WedgeOnCrash {
		return forever
	}
	return m.cfg.LockTimeout
}

func (m *middleware) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, m.cfg.MaxBody))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		WriteProblem(w, http.StatusRequestEntityTooLarge, "body-too-large", "Request body too large",
			fmt.Sprintf("send a body of at most %d bytes", m.cfg.MaxBody))
		return
	case isTimeout(err):
		w.Header().Set("Connection", "close")
		WriteProblem(w, http.StatusRequestTimeout, "body-timeout", "Request body timed out",
			"the request body did not arrive in time; nothing was executed: resend the request")
		return
	case err != nil:
		WriteProblem(w, http.StatusBadRequest, "body-unreadable", "Request body unreadable",
			"the request body could not be read completely; nothing was executed: resend the request")
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))

	key, err := ParseKey(r.Header.Values(HeaderKey))
	if errors.Is(err, ErrNoKey) {
		if m.cfg.KeysOptional {
			m.serveUnkeyed(w, r, body)
			return
		}
		WriteProblem(w, http.StatusBadRequest, "idempotency-key-missing", "Idempotency-Key missing",
			"this endpoint requires an Idempotency-Key header: mint one unique key per operation and resend it unchanged on every retry")
		return
	}
	if err != nil {
		WriteProblem(w, http.StatusBadRequest, "idempotency-key-invalid", "Idempotency-Key invalid", err.Error())
		return
	}

	key = m.cfg.Flaws.storedKey(key)
	principal := m.cfg.Principal(r)
	scope := Scope{Principal: principal, Endpoint: r.Method + " " + r.URL.Path, Key: key}
	fpPrincipal, fpPath := principal, r.URL.Path
	if m.cfg.Flaws.GlobalScope {
		scope.Principal, fpPrincipal = "", ""
	}
	if m.cfg.Flaws.EndpointBlind {
		scope.Endpoint, fpPath = "", ""
	}
	fp, err := Fingerprint(r.Method, fpPath, fpPrincipal, body)
	var refused *BodyError
	if errors.As(err, &refused) {
		// Before Acquire: a body whose fingerprint cannot be trusted records no key.
		WriteProblem(w, refused.Status, refused.Slug, refused.Title, refused.Detail)
		return
	}
	if m.cfg.Flaws.EndpointBlind && err == nil {
		fp, _ = Fingerprint(r.Method, fpPath, fpPrincipal, orderAndAmount(body))
	}
	if m.cfg.Flaws.EntityBlind && err == nil {
		fp, _ = Fingerprint(r.Method, fpPath, fpPrincipal, withoutOrder(body))
	}
	if m.cfg.Flaws.FingerprintAmountOnly && err == nil {
		fp, _ = Fingerprint(r.Method, fpPath, fpPrincipal, amountOnly(body))
	}
	if m.cfg.Flaws.FingerprintInKey {
		scope.Key = key + "#" + fp
	}
	if m.cfg.Flaws.NoFingerprint {
		fp = ""
	}
	if m.cfg.Flaws.CheckThenSet {
		m.serveCheckThenSet(w, r, scope, fp)
		return
	}

	if ls, ok := m.oneTransaction(); ok {
		m.serveLocal(w, r, ls, scope, fp)
		return
	}

	// Once the key is ours the outcome must be recorded even if the client hangs up:
	// a lost response is exactly the case a retry has to recover from.
	ctx := context.WithoutCancel(r.Context())
	acq, err := m.acquire(ctx, AcquireRequest{
		Scope: scope, Fingerprint: fp, Now: m.cfg.Now(),
		Retention: m.retention(), LockTimeout: m.lockTimeout(),
	})
	if err != nil {
		if m.failsOpen(err) {
			m.cfg.Logger.Warn("idempotency: key store failed, running the request unkeyed (a flaw)", "err", err)
			m.serveUnkeyed(w, r, body)
			return
		}
		m.storeFailed(w, "acquire key", err)
		return
	}
	switch acq.State {
	case Mismatch:
		m.mismatch(w, r, scope, fp)
		return
	case InFlight:
		m.inFlight(w)
		return
	case Completed:
		m.replay(w, *acq.Record.Response)
		return
	}
	fence := acq.Record.Fence
	if h := m.cfg.Hooks.AfterKey; h != nil {
		h(r)
	}
	rec, u := m.run(r)
	effects, notExecuted := u.result()
	switch {
	case notExecuted:
		m.release(ctx, scope, fence)
		rec.flush(w)
		return
	case rec.code() >= 500 && !m.cfg.Flaws.Pin5xx:
		m.release(ctx, scope, fence)
		rec.flush(w)
		return
	case rec.code() >= 500:
		effects = nil // pin-5xx: the failed work is rolled back, but its answer is kept
	}
	err = m.cfg.Store.Complete(ctx, scope, fence, m.stored(rec), effects, !m.cfg.Flaws.NoFencing)
	if errors.Is(err, ErrFenced) {
		WriteProblem(w, http.StatusConflict, "idempotency-key-taken-over", "Idempotency-Key lock expired",
			"this attempt outlived the key's lock and another attempt took the key over; nothing was committed by this attempt: retry with the same key to get the outcome")
		return
	}
	if err != nil {
		m.release(ctx, scope, fence)
		m.storeFailed(w, "commit response", err)
		return
	}
	if h := m.cfg.Hooks.AfterCommit; h != nil {
		h(r)
	}
	rec.flush(w)
}

// acquire is Store.Acquire bounded by StoreTimeout.
func (m *middleware) acquire(ctx context.Context, req AcquireRequest) (Acquisition, error) {
	if m.cfg.StoreTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, m.cfg.StoreTimeout)
		defer cancel()
	}
	return m.cfg.Store.Acquire(ctx, req)
}

// failsOpen reports whether a flaw runs the request unkeyed after the store failed with
// err: any error (FailOpenOnStoreError), or the store timeout (StoreTimeoutAsMiss).
func (m *middleware) failsOpen(err error) bool {
	return m.cfg.Flaws.FailOpenOnStoreError || (m.cfg.Flaws.StoreTimeoutAsMiss && (errors.Is(err, context.DeadlineExceeded) || isTimeout(err)))
}

// isTimeout: a read that hit a deadline (the server's body timeout).
func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

// run executes the wrapped handler into a buffer.
func (m *middleware) run(r *http.Request) (*recorder, *unit) {
	u := &unit{}
	rec := newRecorder()
	m.next.ServeHTTP(rec, r.WithContext(withUnit(r.Context(), u)))
	return rec, u
}

func (m *middleware) serveUnkeyed(w http.ResponseWriter, r *http.Request, _ []byte) {
	if h := m.cfg.Hooks.AfterKey; h != nil {
		h(r)
	}
	rec, u := m.run(r)
	effects, notExecuted := u.result()
	if !notExecuted && rec.code() < 500 && len(effects) > 0 {
		if err := m.cfg.UnkeyedStore.CommitEffects(context.WithoutCancel(r.Context()), effects); err != nil {
			m.storeFailed(w, "commit effects", err)
			return
		}
	}
	if h := m.cfg.Hooks.AfterCommit; h != nil {
		h(r)
	}
	rec.flush(w)
}

// serveCheckThenSet is the check-then-set flaw: look, work, then record. Two attempts
// that look at the same time both find nothing and both execute. The test hooks act where
// the correct path has them (after the key's lookup, where it would have recorded the
// key; after the commit), so a run can prove them against this flaw too.
func (m *middleware) serveCheckThenSet(w http.ResponseWriter, r *http.Request, scope Scope, fp string) {
	ctx := context.WithoutCancel(r.Context())
	now := m.cfg.Now()
	existing, ok, err := m.cfg.Store.Lookup(ctx, scope, now)
	if err != nil {
		m.storeFailed(w, "look up key", err)
		return
	}
	if ok {
		switch {
		case existing.Fingerprint != fp:
			m.mismatch(w, r, scope, fp)
		case existing.Completed:
			m.replay(w, *existing.Response)
		default:
			m.inFlight(w)
		}
		return
	}
	if h := m.cfg.Hooks.AfterKey; h != nil {
		h(r)
	}
	rec, u := m.run(r)
	effects, notExecuted := u.result()
	if notExecuted || rec.code() >= 500 {
		rec.flush(w)
		return
	}
	if err := m.cfg.Store.CommitEffects(ctx, effects); err != nil {
		m.storeFailed(w, "commit effects", err)
		return
	}
	acq, err := m.cfg.Store.Acquire(ctx, AcquireRequest{Scope: scope, Fingerprint: fp, Now: m.cfg.Now(),
		Retention: m.retention(), LockTimeout: m.lockTimeout()})
	if err == nil && acq.State == Acquired {
		err = m.cfg.Store.Complete(ctx, scope, acq.Record.Fence, m.stored(rec), nil, true)
	}
	if err != nil {
		m.cfg.Logger.Warn("idempotency: record key after work", "err", err)
	}
	if h := m.cfg.Hooks.AfterCommit; h != nil {
		h(r)
	}
	rec.flush(w)
}

func (m *middleware) mismatch(w http.ResponseWriter, r *http.Request, scope Scope, fp string) {
	if m.cfg.Flaws.MismatchOverwrites {
		if err := m.cfg.Store.SetFingerprint(r.Context(), scope, fp); err != nil {
			m.cfg.Logger.Warn("idempotency: overwrite fingerprint", "err", err)
		}
	}
	WriteProblem(w, http.StatusUnprocessableEntity, "idempotency-key-reused", "Idempotency-Key reused with another request",
		"this key was first used with a different request (method, path or body): mint a new key for a new operation, or resend the original request unchanged")
}

func (m *middleware) inFlight(w http.ResponseWriter) {
	if m.cfg.Flaws.FabricateInFlight {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.Write([]byte(`{"status":"processing"}`))
		return
	}
	w.Header().Set("Retry-After", "1")
	WriteProblem(w, http.StatusConflict, "idempotency-key-in-use", "Idempotency-Key in use",
		"a request with this key is still being processed: retry the same request with the same key after Retry-After seconds")
}

func (m *middleware) replay(w http.ResponseWriter, resp Response) {
	h := w.Header()
	for k, v := range resp.Header {
		h.Set(k, v)
	}
	if !m.cfg.Flaws.NoReplayHeader {
		h.Set(HeaderReplayed, "true")
	}
	body := resp.Body
	if m.cfg.Flaws.ReplayRegenerates {
		body = regenerate(body, m.cfg.Now())
	}
	w.WriteHeader(resp.Status)
	w.Write(body)
}

// regenerate models a server that stores only the outcome and re-renders the body on
// replay: a fresh id and timestamp, keys in another order.
func regenerate(body []byte, now time.Time) []byte {
	var obj map[string]any
	if json.Unmarshal(body, &obj) != nil {
		return body
	}
	if id, ok := obj["id"].(string); ok {
		prefix, _, _ := strings.Cut(id, "_")
		var b [12]byte
		rand.Read(b[:])
		obj["id"] = prefix + "_" + hex.EncodeToString(b[:])
	}
	if _, ok := obj["created"]; ok {
		obj["created"] = now.Unix()
	}
	out, err := json.Marshal(obj)
	if err != nil {
		return body
	}
	return out
}

func (m *middleware) stored(rec *recorder) Response {
	hdr := make(map[string]string, len(m.cfg.ReplayHeaders))
	for _, name := range m.cfg.ReplayHeaders { // canonical names (New)
		if v := rec.header[name]; len(v) > 0 && v[0] != "" {
			hdr[name] = v[0]
		}
	}
	// The recorder is not reused, so its buffer can become the stored body.
	return Response{Status: rec.code(), Header: hdr, Body: rec.body.Bytes()}
}

func (m *middleware) release(ctx context.Context, scope Scope, fence int64) {
	// A failed release is not fatal: the lock goes stale after the lock timeout.
	if err := m.cfg.Store.Release(context.WithoutCancel(ctx), scope, fence); err != nil {
		m.cfg.Logger.Warn("idempotency: release key", "err", err)
	}
}

func (m *middleware) storeFailed(w http.ResponseWriter, what string, err error) {
	if errors.Is(err, ErrStoreFull) {
		m.cfg.Logger.Warn("idempotency: store full", "op", what, "err", err)
		WriteProblem(w, http.StatusInsufficientStorage, "store-full", "Idempotency store full",
			"the server's store holds all it may keep (the memory store's byte budget, --memory-limit); nothing was executed and the key was not recorded: restart the server with a larger budget or on PostgreSQL")
		return
	}
	m.cfg.Logger.Error("idempotency: store failed", "op", what, "err", err)
	w.Header().Set("Retry-After", "1")
	WriteProblem(w, http.StatusServiceUnavailable, "store-unavailable", "Idempotency store unavailable",
		"the server could not "+what+"; nothing was committed: retry with the same key")
}
