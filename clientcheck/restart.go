package clientcheck

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// A restart kills the code under test right after an attempt whose response the proxy
// lost (the upstream answered, so the operation may have committed) and starts it again
// with the same environment, IDEMPROOF_STATE_DIR included: what an agent harness lives
// through when it crashes, is redeployed, or resumes a conversation. A client that kept
// its pending operation (and its key) in the state directory before the first attempt
// resumes it under the same key; one that derives the key from something of its process
// (the start time, a counter in memory, a transcript position) sends a new key, and the
// server executes the operation twice.
//
// The kill is synchronous: the proxy's transport calls it after the upstream answered
// and before the proxy applies the attempt's fault, and it returns once the code under
// test has ended (a command's whole process group SIGKILLed and reaped; a ClientFunc's
// context cancelled and the function returned). Each operation is restarted at most
// once, and a run at most MaxRestarts times.

// EnvStateDir is the folder a client may keep its pending operations in; it survives
// restarts within one run.
const EnvStateDir = "IDEMPROOF_STATE_DIR"

// MaxRestarts bounds the restarts of one run.
const MaxRestarts = 20

// headerRestart marks an attempt after which the front wants the client restarted; the
// proxy's transport strips it before the request leaves for the target.
const headerRestart = "X-Idemproof-Restart"

// Restart is one kill and restart of the code under test.
type Restart struct {
	// Operation is the operation of the attempt after which the client was killed, Key
	// the key that attempt carried ("" none) and Attempt the front's number of it.
	Operation string `json:"operation"`
	Key       string `json:"key,omitempty"`
	Attempt   uint64 `json:"attempt"`
	// At is when the killed client had ended: every later attempt is the restarted one's.
	At time.Time `json:"at"`
}

// restarter runs the code under test and restarts it on demand.
type restarter struct {
	enabled bool // Config.Restart: every lost response restarts; else only the restart kind

	mu       sync.Mutex
	claimed  map[string]bool // operations already restarted (or about to be)
	cancel   context.CancelFunc
	exited   chan struct{}
	killed   bool
	pending  Restart // the kill in progress, recorded when the killed client has ended
	restarts []Restart
}

func newRestarter(enabled bool) *restarter {
	return &restarter{enabled: enabled, claimed: map[string]bool{}}
}

// lostKinds are the kinds that lose a response after the upstream answered.
var lostKinds = map[string]bool{"hold": true, "reset": true, "close": true, "503": true, "502": true, "504": true, "restart": true}

// claim reports whether the client is to be restarted after this attempt: the first
// attempt of a key of an operation whose dealt kind loses the response after the
// commit, for an operation not restarted yet, within MaxRestarts.
func (r *restarter) claim(op, kind string, firstOfKey bool) bool {
	if r == nil || !firstOfKey || !(kind == "restart" || (r.enabled && lostKinds[kind])) {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.claimed[op] || len(r.claimed) >= MaxRestarts {
		return false
	}
	r.claimed[op] = true
	return true
}

// run calls client until it returns without having been killed for a restart.
func (r *restarter) run(ctx context.Context, client ClientFunc, env Env) error {
	for {
		runCtx, cancel := context.WithCancel(ctx)
		exited := make(chan struct{})
		r.mu.Lock()
		r.cancel, r.exited, r.killed = cancel, exited, false
		r.mu.Unlock()
		err := client(runCtx, env)
		cancel()
		r.mu.Lock()
		killed := r.killed
		r.cancel = nil
		if killed {
			// The restart is timed here, between the two lives and before the next one
			// starts: every attempt after At is the restarted client's, however late
			// the goroutine that asked for the kill is scheduled again.
			rs := r.pending
			rs.At = time.Now()
			r.restarts = append(r.restarts, rs)
		}
		r.mu.Unlock()
		close(exited)
		if !killed || ctx.Err() != nil {
			return err
		}
	}
}

// kill ends the running client (once per run of it) and waits until it has ended; the
// run loop then starts it again. Without a running client it does nothing.
func (r *restarter) kill(ctx context.Context, op, key string, attempt uint64) {
	r.mu.Lock()
	if r.cancel == nil {
		r.mu.Unlock()
		return
	}
	if !r.killed {
		r.pending = Restart{Operation: op, Key: key, Attempt: attempt}
	}
	r.killed = true
	cancel, exited := r.cancel, r.exited
	r.mu.Unlock()
	cancel()
	select {
	case <-exited:
	case <-ctx.Done():
	}
}

// all is every restart so far.
func (r *restarter) all() []Restart {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Restart(nil), r.restarts...)
}

// restartTransport kills the client after the upstream answered an attempt the front
// marked, before the proxy applies the attempt's fault: the client never sees the
// answer, and the operation may have committed.
type restartTransport struct {
	next      http.RoundTripper
	restarter *restarter
	front     *front
	// lifetime is the run's context: a kill waits for the client at most that long.
	lifetime context.Context
}

func (t restartTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if _, marked := req.Header[headerRestart]; !marked {
		return t.next.RoundTrip(req)
	}
	req = req.Clone(req.Context())
	req.Header.Del(headerRestart)
	n, _ := strconv.ParseUint(req.Header.Get(HeaderAttempt), 10, 64)
	resp, err := t.next.RoundTrip(req)
	if a, ok := t.front.snapshot(n); ok {
		op := a.entity
		if op == "" {
			op = a.op
		}
		t.restarter.kill(t.lifetime, op, a.key, n)
	}
	return resp, err
}

// CloseIdleConnections lets the proxy close the pooled connections of the transport.
func (t restartTransport) CloseIdleConnections() {
	if c, ok := t.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
