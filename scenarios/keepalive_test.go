package scenarios_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/scenarios"
	"github.com/idemproof/idemproof/verdict"
)

// directKey is a key of the direct key set ("-d" and three digits at its end); the run
// nonce is hex and may itself contain "-d", so a substring test would count the
// proxy's connections too.
var directKey = regexp.MustCompile(`-d[0-9]{3}$`)

// connCounter remembers the client address of every keyed POST that went straight to
// the target (past the proxy), by key set.
type connCounter struct {
	next   http.Handler
	mu     sync.Mutex
	direct map[string]bool
}

func (c *connCounter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if k := r.Header.Get("Idempotency-Key"); r.Method == http.MethodPost && directKey.MatchString(k) {
		c.mu.Lock()
		c.direct[r.RemoteAddr] = true
		c.mu.Unlock()
	}
	c.next.ServeHTTP(w, r)
}

// runKeepAlive runs race/keepalive-many-keys against the fake served at url.
func runKeepAlive(t *testing.T, url string) verdict.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, err := scenarios.Run(ctx, scenarios.RunConfig{Profiles: []*profile.Profile{fakeProfile(t, url)}, Only: []string{"race/keepalive-many-keys"}})
	require.NoError(t, err)
	require.Len(t, rep.Results, 1)
	return rep.Results[0]
}

// race/keepalive-many-keys really reuses at most four connections, and keep-alive hides
// no attempt: every proxied attempt is one journal record, the direct ones none.
func TestKeepAliveManyKeysReusesFewConnectionsAndHidesNoAttempt(t *testing.T) {
	t.Parallel()
	fake := &fakeRefunds{}
	startFake(t, fake) // initialises the fake; it is served below behind the counter
	counter := &connCounter{next: fake, direct: map[string]bool{}}
	srv := httptest.NewServer(counter)
	t.Cleanup(srv.Close)

	r := runKeepAlive(t, srv.URL)
	require.Equal(t, verdict.Pass, r.Verdict, r.Message)
	rec := r.Evidence.Record
	require.Equal(t, 400, rec.Ledger["operation"], "200 keys through the proxy and 200 direct, each executed once")

	proxied, direct := 0, 0
	for _, op := range rec.History {
		if op.Type != verdict.OpInvoke {
			continue
		}
		switch op.Step {
		case "proxied", "proxied-again":
			proxied++
		case "direct", "direct-again":
			direct++
		}
	}
	require.Equal(t, 400, proxied)
	require.Equal(t, 400, direct)
	require.Len(t, rec.Journal, proxied, "one journal record per proxied attempt, none for the direct ones")

	counter.mu.Lock()
	defer counter.mu.Unlock()
	require.NotEmpty(t, counter.direct)
	require.LessOrEqual(t, len(counter.direct), scenarios.MaxKeepAliveConns, "400 direct attempts over at most 4 connections")
}

// A target that closes every connection after its answer gives the keys no connection
// to share: the scenario reports that (INFO) instead of a PASS it has no proof for.
func TestKeepAliveManyKeysAgainstATargetThatClosesEveryConnection(t *testing.T) {
	t.Parallel()
	fake := &fakeRefunds{}
	startFake(t, fake)
	srv := httptest.NewUnstartedServer(fake)
	srv.Config.SetKeepAlivesEnabled(false)
	srv.Start()
	t.Cleanup(srv.Close)

	r := runKeepAlive(t, srv.URL)
	require.Equal(t, verdict.Info, r.Verdict, r.Message)
	// 400 keys, or fewer when the preflight measured a machine too loaded for them in
	// the scenario's time (the message then says it was fitted).
	require.Regexp(t, `each of the \d+ keys executed once`, r.Message)
	require.Contains(t, r.Message, "the target kept no connection alive")
	for _, op := range r.Evidence.Record.History {
		if op.Step == "direct" || op.Step == "direct-again" {
			require.False(t, op.ReusedConn, "every direct attempt on a new connection")
		}
	}
}

// refusesRepeats runs each key once and refuses every later request with it as in flight
// (409), however long ago the first finished: moov-io/base's idempotent package does
// that with 412, and stores no response to replay.
type refusesRepeats struct {
	next http.Handler
	mu   sync.Mutex
	seen map[string]bool
}

func (h *refusesRepeats) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if k := r.Header.Get("Idempotency-Key"); r.Method == http.MethodPost && k != "" {
		h.mu.Lock()
		again := h.seen[k]
		h.seen[k] = true
		h.mu.Unlock()
		if again {
			writeJSON(w, http.StatusConflict, map[string]any{"error": "seen before"})
			return
		}
	}
	h.next.ServeHTTP(w, r)
}

// A repeat refused as in flight after its key's first answer shows the target knew the
// key: it is no fresh key refused as another key's (the FAIL this was), and no replay was
// seen either, so the scenario is INFO and says how many repeats it compared.
func TestKeepAliveManyKeysRepeatsRefusedAreNoAliasing(t *testing.T) {
	t.Parallel()
	fake := &fakeRefunds{}
	startFake(t, fake)
	srv := httptest.NewServer(&refusesRepeats{next: fake, seen: map[string]bool{}})
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, err := scenarios.Run(ctx, scenarios.RunConfig{Profiles: []*profile.Profile{patientProfile(t, srv.URL)}, Only: []string{"race/keepalive-many-keys"}})
	require.NoError(t, err)
	r := rep.Results[0]
	require.Equal(t, verdict.Info, r.Verdict, r.Message)
	require.Regexp(t, `each of the \d+ keys executed once and no fresh key was refused`, r.Message)
	require.Regexp(t, `\d+ repeats sent after their key's answer were refused as in flight`, r.Message)
	require.Contains(t, r.Message, "no repeat was compared with its key's first response")
	require.Zero(t, r.Evidence.Categories[verdict.CatLeaked])
}
