package downstream

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/tidwall/gjson"

	"github.com/idemproof/idemproof/faultproxy/sockpeek"
)

// Bounds of what the sink keeps.
const (
	MaxCalls = 100_000
	MaxBody  = 1 << 20
)

// Config says where the sink listens and how it reads a call.
type Config struct {
	// Listen is the address, e.g. "127.0.0.1:0" (a free port) or "0.0.0.0:9090" (a fixed
	// address a container is pointed at).
	Listen string
	// KeyHeader is the header that carries the downstream key (default
	// "Idempotency-Key"); KeyField, when set, is a JSON path into the body instead.
	KeyHeader string
	KeyField  string
	// EntityField is a JSON path into the body naming the logical operation the call
	// belongs to (e.g. "order_id"); "" records no entity.
	EntityField string
}

// Answer is what the sink did with a call.
type Answer string

const (
	AnswerCommitted  Answer = "committed"   // a new effect, answered 201
	AnswerReplayed   Answer = "replayed"    // the key was committed before: 200, no new effect
	Answer503Before  Answer = "503-before"  // a fault: 503, nothing committed
	Answer503After   Answer = "503-after"   // a fault: committed, then 503
	AnswerResetAfter Answer = "reset-after" // a fault: committed, then the connection reset
)

// Call is one request the sink received.
type Call struct {
	Seq        uint64    `json:"seq"`
	Time       time.Time `json:"time"`
	Method     string    `json:"method"`
	Path       string    `json:"path"`
	Key        string    `json:"key,omitempty"`
	HasKey     bool      `json:"has_key"`
	Entity     string    `json:"entity,omitempty"`
	BodySHA256 string    `json:"body_sha256"`
	Answer     Answer    `json:"answer"`
	// Effect is the vendor-side id of the effect the call committed or replayed.
	Effect string `json:"effect,omitempty"`
	// CallerLeft: the caller had hung up before the answer was written, or writing it
	// failed. Such a caller never had the answer, so calling again is what a correct
	// at-least-once sender does (its own timeout fired while the vendor was slow), not a
	// second call for an operation it knew was done.
	CallerLeft bool `json:"caller_left,omitempty"`
}

// NewEffect reports whether the call made the vendor do something new.
func (c Call) NewEffect() bool {
	return c.Answer == AnswerCommitted || c.Answer == Answer503After || c.Answer == AnswerResetAfter
}

// Fault is a fault a rule injects.
type Fault string

const (
	Fault503Before  Fault = "503-before"  // answer 503 without committing
	Fault503After   Fault = "503-after"   // commit, then answer 503: the caller cannot know
	FaultResetAfter Fault = "reset-after" // commit, then reset the connection
)

// Rule injects Fault on the Nth call (1-based) naming Entity; it fires once.
type Rule struct {
	Entity string `json:"entity"`
	Nth    int    `json:"nth"`
	Fault  Fault  `json:"fault"`
}

// Sink is a running recording vendor.
type Sink struct {
	cfg  Config
	ln   net.Listener
	srv  *http.Server
	done chan struct{}

	mu       sync.Mutex
	calls    []Call
	dropped  int
	seq      uint64
	byKey    map[string]string // downstream key → effect id
	byEntity map[string]int    // calls per entity so far (the rules' ordinals)
	rules    []Rule
	changed  chan struct{} // closed and replaced on every call
	// beforeAnswer, when set (tests), runs between recording a call and answering it: a
	// slow vendor.
	beforeAnswer func(ctx context.Context)
}

// Start listens on cfg.Listen and serves until Close.
func Start(cfg Config) (*Sink, error) {
	if cfg.Listen == "" {
		return nil, errors.New("downstream sink: listen address is required, e.g. 127.0.0.1:0")
	}
	if cfg.KeyHeader == "" && cfg.KeyField == "" {
		cfg.KeyHeader = "Idempotency-Key"
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("downstream sink: listen on %s: %w", cfg.Listen, err)
	}
	s := &Sink{cfg: cfg, ln: ln, done: make(chan struct{}), byKey: map[string]string{}, byEntity: map[string]int{}, changed: make(chan struct{})}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second,
		ConnContext: func(ctx context.Context, c net.Conn) context.Context { return context.WithValue(ctx, connKey{}, c) }}
	go func() { defer close(s.done); _ = s.srv.Serve(ln) }()
	return s, nil
}

// URL is the sink's base URL, e.g. http://127.0.0.1:41234.
func (s *Sink) URL() string { return "http://" + s.ln.Addr().String() }

// Close stops the sink.
func (s *Sink) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	<-s.done
	return err
}

// AddRule installs a fault rule.
func (s *Sink) AddRule(r Rule) error {
	switch r.Fault {
	case Fault503Before, Fault503After, FaultResetAfter:
	default:
		return fmt.Errorf("downstream rule: unknown fault %q: use %s, %s or %s", r.Fault, Fault503Before, Fault503After, FaultResetAfter)
	}
	if r.Entity == "" || r.Nth < 1 {
		return fmt.Errorf("downstream rule: want an entity and nth >= 1")
	}
	s.mu.Lock()
	s.rules = append(s.rules, r)
	s.mu.Unlock()
	return nil
}

// RemoveRules removes the rules of an entity.
func (s *Sink) RemoveRules(entity string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	kept := s.rules[:0]
	for _, r := range s.rules {
		if r.Entity != entity {
			kept = append(kept, r)
		}
	}
	s.rules = kept
}

// Calls returns the calls naming entity, in arrival order.
func (s *Sink) Calls(entity string) []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Call
	for _, c := range s.calls {
		if c.Entity == entity {
			out = append(out, c)
		}
	}
	return out
}

// All returns every call kept, and how many were not kept (past MaxCalls).
func (s *Sink) All() ([]Call, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...), s.dropped
}

// Settle waits until the calls naming entity have been quiet for quiet after one of
// them took effect, or until deadline: a target that calls its vendor asynchronously
// (an outbox) calls it after the client's answer, and a target whose first call failed
// may retry later, so without an effect it waits to the deadline. It returns the calls.
func (s *Sink) Settle(ctx context.Context, entity string, quiet time.Duration, deadline time.Time) []Call {
	return s.settle(ctx, entity, 1, quiet, deadline)
}

// settle is Settle that also waits for at least minCalls calls before it may stop early
// (a scenario that lost the vendor's first answer waits for the re-drive).
func (s *Sink) settle(ctx context.Context, entity string, minCalls int, quiet time.Duration, deadline time.Time) []Call {
	for {
		s.mu.Lock()
		changed := s.changed
		effect, n := false, 0
		var last time.Time
		for _, c := range s.calls {
			if c.Entity == entity {
				last = c.Time
				n++
				effect = effect || c.NewEffect()
			}
		}
		s.mu.Unlock()
		wait := time.Until(deadline)
		if effect && n >= minCalls {
			if q := last.Add(quiet); q.Before(deadline) {
				wait = time.Until(q)
			}
		}
		if wait <= 0 {
			return s.Calls(entity)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return s.Calls(entity)
		case <-changed:
			t.Stop()
		case <-t.C:
		}
	}
}

// connKey is the request context's key of the caller's connection.
type connKey struct{}

// ServeHTTP records a call and answers it as a keyed vendor would.
func (s *Sink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, MaxBody))
	sum := sha256.Sum256(body)
	c := Call{Time: time.Now(), Method: r.Method, Path: r.URL.Path, BodySHA256: hex.EncodeToString(sum[:])}
	if s.cfg.KeyField != "" {
		if v := gjson.GetBytes(body, s.cfg.KeyField); v.Exists() {
			c.Key, c.HasKey = v.String(), true
		}
	} else if vs, ok := r.Header[http.CanonicalHeaderKey(s.cfg.KeyHeader)]; ok && len(vs) > 0 {
		c.Key, c.HasKey = vs[0], true
	}
	if s.cfg.EntityField != "" {
		c.Entity = gjson.GetBytes(body, s.cfg.EntityField).String()
	}

	s.mu.Lock()
	s.seq++
	c.Seq = s.seq
	s.byEntity[c.Entity]++
	fault := s.takeRule(c.Entity, s.byEntity[c.Entity])
	prior, replay := "", false
	if c.HasKey && c.Key != "" {
		prior, replay = s.byKey[c.Key]
	}
	switch {
	case fault == Fault503Before:
		c.Answer = Answer503Before
	case replay:
		c.Answer, c.Effect = AnswerReplayed, prior
	default:
		c.Effect = "ve_" + strconv.FormatUint(c.Seq, 10)
		if c.HasKey && c.Key != "" {
			s.byKey[c.Key] = c.Effect
		}
		c.Answer = AnswerCommitted
		switch fault {
		case Fault503After:
			c.Answer = Answer503After
		case FaultResetAfter:
			c.Answer = AnswerResetAfter
		}
	}
	kept := -1
	if len(s.calls) < MaxCalls {
		kept = len(s.calls)
		s.calls = append(s.calls, c)
	} else {
		s.dropped++
	}
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()

	if s.beforeAnswer != nil {
		s.beforeAnswer(r.Context())
	}
	// net/http cancels the request's context once its background read sees the caller's
	// connection close, but that read is another goroutine, late on a loaded machine: the
	// connection is looked at too.
	left := r.Context().Err() != nil
	if nc, ok := r.Context().Value(connKey{}).(net.Conn); ok && !left {
		left = sockpeek.Gone(nc)
	}
	switch c.Answer {
	case Answer503Before, Answer503After:
		w.Header().Set("Retry-After", "0")
		http.Error(w, `{"error":"vendor unavailable"}`, http.StatusServiceUnavailable)
	case AnswerResetAfter:
		reset(w)
		return
	case AnswerReplayed:
		writeJSON(w, http.StatusOK, map[string]string{"id": c.Effect})
	default:
		writeJSON(w, http.StatusCreated, map[string]string{"id": c.Effect})
	}
	if err := http.NewResponseController(w).Flush(); err != nil {
		left = true
	}
	if left && kept >= 0 {
		s.mu.Lock()
		s.calls[kept].CallerLeft = true
		s.mu.Unlock()
	}
}

// takeRule returns (and consumes) the fault of the rule matching the entity's nth call.
func (s *Sink) takeRule(entity string, nth int) Fault {
	for i, r := range s.rules {
		if r.Entity == entity && r.Nth == nth {
			s.rules = append(s.rules[:i], s.rules[i+1:]...)
			return r.Fault
		}
	}
	return ""
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

// reset closes the connection with an RST (SO_LINGER 0), or just closes it when the
// connection cannot be hijacked.
func reset(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	conn.Close()
}
