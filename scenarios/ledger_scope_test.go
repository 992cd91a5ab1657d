package scenarios_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/scenarios"
)

// counterAPI is a keyed API whose ledger is one global counter (GET /counter), held with
// a query parameter (?ms=) and failed with a path (/counter/fail/503): the shapes of
// ledger and hook the format must express.
type counterAPI struct {
	mu      sync.Mutex
	count   int
	keys    map[string]*counterEntry
	queries []string // every POST's request URI, to see the hooks arrive
}

type counterEntry struct {
	fp     [32]byte
	done   bool
	status int
	body   []byte
}

func (c *counterAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet {
		c.mu.Lock()
		n := c.count
		c.mu.Unlock()
		writeJSON(w, 200, map[string]any{"count": n})
		return
	}
	raw, _ := io.ReadAll(r.Body)
	key := r.Header.Get("Idempotency-Key")
	c.mu.Lock()
	c.queries = append(c.queries, r.URL.RequestURI())
	if key == "" || len(key) > 255 || strings.ContainsAny(key, "\t") || key == `""` {
		c.mu.Unlock()
		writeJSON(w, 400, map[string]any{"error": "bad or missing key"})
		return
	}
	fp := sha256.Sum256(raw)
	e, seen := c.keys[key]
	switch {
	case seen && e.fp != fp:
		c.mu.Unlock()
		writeJSON(w, 422, map[string]any{"error": "mismatch"})
		return
	case seen && !e.done:
		c.mu.Unlock()
		w.Header().Set("Retry-After", "1")
		writeJSON(w, 409, map[string]any{"error": "in flight"})
		return
	case seen:
		c.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(e.status)
		_, _ = w.Write(e.body)
		return
	}
	e = &counterEntry{fp: fp}
	c.keys[key] = e
	c.mu.Unlock()
	if ms, err := strconv.Atoi(r.URL.Query().Get("ms")); err == nil {
		time.Sleep(time.Duration(ms) * time.Millisecond) // the hold the scenario asked for
	}
	if status, ok := strings.CutPrefix(r.URL.Path, "/counter/fail/"); ok {
		code, _ := strconv.Atoi(status)
		c.mu.Lock()
		delete(c.keys, key) // a failure is not stored: the key is released
		c.mu.Unlock()
		writeJSON(w, code, map[string]any{"error": "failed"})
		return
	}
	c.mu.Lock()
	c.count++
	body, _ := json.Marshal(map[string]any{"id": c.count})
	e.done, e.status, e.body = true, 201, body
	c.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(201)
	_, _ = w.Write(body)
}

func (c *counterAPI) posted() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.queries...)
}

func TestGlobalLedgerRunsOneAtATimeAndCountsTheDelta(t *testing.T) {
	t.Parallel()
	api := &counterAPI{keys: map[string]*counterEntry{}}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	p, err := profile.Parse("counter.yaml", []byte(`name: counter
base_url: `+srv.URL+`
operation: {path: /counter, body: '{"amount": 1}', altered_body: '{"amount": 2}'}
side_effects: {path: /counter, count: count, scope: global}
expect: {in_flight: 409, mismatch: 422, missing_key: "400"}
slow_operation: {query: {ms: "{{.HoldMs}}"}, hold: 300ms}
fail_operation: {path: "/counter/fail/{{.Value}}", value: "503"}
client_timeout: 10s
`))
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var notices []string
	rep, err := scenarios.Run(ctx, scenarios.RunConfig{
		Profiles:    []*profile.Profile{p},
		Only:        []string{"replay/after-503", "replay/sequential", "race/concurrent-pair", "race/in-flight-409", "race/burst-50", "key/distinct-keys-same-body", "storage/5xx-not-pinned"},
		Concurrency: 4,
		Notice:      func(s string) { notices = append(notices, s) },
	})
	require.NoError(t, err)
	require.Equal(t, []string{"target counter has a global ledger: scenarios run one at a time"}, notices)
	for _, r := range rep.Results {
		requirePassOrUnrefusedBurst(t, r.ScenarioID, r)
	}
	require.Equal(t, 2, result(t, rep, "key/distinct-keys-same-body").Evidence.Record.Ledger["operation"], "the delta, not the counter")
	require.Equal(t, 1, result(t, rep, "race/burst-50").Evidence.Record.Ledger["operation"])

	// One at a time: no two scenarios' attempts overlap.
	type span struct{ from, to time.Time }
	var spans []span
	for _, r := range rep.Results {
		h := r.Evidence.Record.History
		spans = append(spans, span{h[0].Time, h[len(h)-1].Time})
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].from.Before(spans[j].from) })
	for i := 1; i < len(spans); i++ {
		require.False(t, spans[i].from.Before(spans[i-1].to), "scenarios %d and %d overlap", i-1, i)
	}

	// The hooks arrived as a query parameter and as a path.
	var held, failed int
	for _, uri := range api.posted() {
		if uri == "/counter?ms=300" {
			held++
		}
		if uri == "/counter/fail/503" {
			failed++
		}
	}
	require.Positive(t, held, "the slow hook as ?ms=300")
	// The scenario's failing request, and the hook proof's two: the hook acting on a key
	// of its own, and a key sent plain then hooked (answered from its record: the key's
	// scope ignores the path, so the path form is the same operation).
	require.Equal(t, 3, failed, "the fail hook as a path")
}

func TestLedgerScopeAndHookShapesAreValidated(t *testing.T) {
	t.Parallel()
	const base = "name: x\nbase_url: http://127.0.0.1:1\noperation: {path: /v1/refunds, body: '{}'}\nexpect: {in_flight: 409, mismatch: 422, missing_key: \"400\"}\n"
	parse := func(extra string) error {
		_, err := profile.Parse("x.yaml", []byte(base+extra))
		return err
	}
	require.NoError(t, parse("side_effects: {path: /counter, count: count, scope: global}\n"))
	require.ErrorContains(t, parse("side_effects: {path: /counter, count: count}\n"), "side_effects.path: must contain {{.Entity}}")
	require.ErrorContains(t, parse("side_effects: {path: /counter, count: count, scope: everything}\n"), `side_effects.scope: must be "entity"`)

	const ledger = "side_effects: {path: '/r?o={{.Entity}}', count: count}\n"
	require.NoError(t, parse(ledger+"slow_operation: {header: X-Test-Delay, value: 400ms}\n"))
	require.NoError(t, parse(ledger+"slow_operation: {query: {ms: \"{{.HoldMs}}\"}, hold: 400ms}\n"))
	require.NoError(t, parse(ledger+"slow_operation: {path: \"/slow?ms={{.HoldMs}}\", hold: 400ms}\n"))
	require.NoError(t, parse(ledger+"fail_operation: {query: {fail: \"{{.Value}}\"}, value: \"503\"}\ncrash: {path: \"/crash/{{.Value}}\", after_key: key}\n"))
	require.ErrorContains(t, parse(ledger+"slow_operation: {query: {ms: \"{{.HoldMs}}\"}}\n"), "slow_operation.hold: required unless value is a duration")
	require.ErrorContains(t, parse(ledger+"slow_operation: {header: X-Hold, path: /slow, value: 1s}\n"), "slow_operation: set one of header, query, path and field")
	require.ErrorContains(t, parse(ledger+"slow_operation: {hold: 1s}\n"), "slow_operation: set how a request switches the hook on")
	require.ErrorContains(t, parse(ledger+"slow_operation: {path: \"/slow?ms={{.HoldMillis}}\", hold: 1s}\n"), "slow_operation.path: template")
	require.ErrorContains(t, parse(ledger+"fail_operation: {path: fail}\n"), "fail_operation.path: must start with /")
	require.ErrorContains(t, parse(ledger+"fail_operation: {header: X-Test-Fail}\n"), "fail_operation.value: required with header")
	require.ErrorContains(t, parse(ledger+"keyed_methods: [post]\n"), "keyed_methods[0]: must be an upper-case HTTP method")
	require.ErrorContains(t, parse(ledger+"keyed_methods: [PUT]\n"), "keyed_methods: must include operation.method POST")
}

// Past the lock, {{.HoldMs}} is twice the lock timeout, in the query form as in the header.
func TestHoldPastTheLockIsTwiceTheLockTimeout(t *testing.T) {
	t.Parallel()
	api := &counterAPI{keys: map[string]*counterEntry{}}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	p, err := profile.Parse("counter.yaml", []byte(`name: counter
base_url: `+srv.URL+`
operation: {path: /counter, body: '{"amount": 1}'}
side_effects: {path: /counter, count: count, scope: global}
expect: {in_flight: 409, mismatch: 422, missing_key: "400"}
slow_operation: {query: {ms: "{{.HoldMs}}"}, hold: 100ms}
lock_timeout: 150ms
retention: 2s
`))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = scenarios.Run(ctx, scenarios.RunConfig{Profiles: []*profile.Profile{p}, Only: []string{"recovery/slow-past-lock"}})
	require.NoError(t, err)
	require.Contains(t, api.posted(), "/counter?ms=300")
}
