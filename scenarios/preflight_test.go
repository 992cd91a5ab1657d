package scenarios_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/scenarios"
	"github.com/idemproof/idemproof/verdict"
)

// preflightErr runs Preflight (bounded) and returns its *PreflightError.
func preflightErr(t *testing.T, p *profile.Profile) *scenarios.PreflightError {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := scenarios.Preflight(ctx, p)
	require.Error(t, err)
	var pe *scenarios.PreflightError
	require.True(t, errors.As(err, &pe), "%T: %v", err, err)
	require.Equal(t, p.Name, pe.Target)
	t.Log(pe.Error())
	return pe
}

func TestPreflightPassesACorrectTargetWithOneFreshOperation(t *testing.T) {
	t.Parallel()
	f := &fakeRefunds{}
	p := fakeProfile(t, startFake(t, f))
	require.NoError(t, scenarios.Preflight(context.Background(), p))
	sent := f.requests()
	require.Len(t, sent, 1, "the operation is sent exactly once")
	require.Regexp(t, `^idemproof-[0-9a-f]{8}-000$`, sent[0].Header.Get("Idempotency-Key"), "a fresh key in key_header, of the form the scenarios send")
	require.Equal(t, "/v1/refunds", sent[0].URI)
	require.Contains(t, sent[0].Body, `"order_id":"ip-preflight-`, "a fresh entity in the body")

	require.NoError(t, scenarios.Preflight(context.Background(), p))
	again := f.requests()
	require.Len(t, again, 2)
	require.NotEqual(t, sent[0].Header.Get("Idempotency-Key"), again[1].Header.Get("Idempotency-Key"), "every preflight mints its own key")
	require.NotEqual(t, sent[0].Body, again[1].Body, "and its own entity")
}

// The key goes where the profile puts it: here, a JSON body field.
func TestPreflightHonoursKeyField(t *testing.T) {
	t.Parallel()
	var seenKey string
	f := &fakeRefunds{keyField: func(body map[string]any) (string, bool) {
		params, _ := body["params"].(map[string]any)
		args, _ := params["arguments"].(map[string]any)
		k, ok := args["idempotency_key"].(string)
		seenKey = k
		return k, ok
	}}
	base := startFake(t, f)
	p, err := profile.Parse("tools.yaml", []byte(`name: tools
base_url: `+base+`
key_field: params.arguments.idempotency_key
operation:
  path: /mcp
  body: '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "refund", "arguments": {"order_id": "{{.Entity}}", "amount": 4900}}}'
  altered_body: '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "refund", "arguments": {"order_id": "{{.Entity}}", "amount": 5000}}}'
side_effects: {path: '/ledger?order_id={{.Entity}}', count: count}
expect: {in_flight: 409, mismatch: 422, missing_key: "400"}
`))
	require.NoError(t, err)
	require.NoError(t, scenarios.Preflight(context.Background(), p))
	require.Regexp(t, `^idemproof-[0-9a-f]{8}-000$`, seenKey, "the key travelled in the body")
	require.Empty(t, f.requests()[0].Header.Get("Idempotency-Key"))
}

func TestPreflightNamesAnUnreachableTarget(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	url := "http://" + ln.Addr().String()
	require.NoError(t, ln.Close())
	pe := preflightErr(t, fakeProfile(t, url))
	require.Equal(t, "base_url", pe.Field)
	require.Contains(t, pe.Error(), "preflight target fake: base_url "+url+" is not reachable (reading the ledger: Get \""+url+"/v1/refunds?order_id=ip-preflight-")
	require.Contains(t, pe.Error(), "fix base_url")
}

// hangingServer accepts connections and never answers.
func hangingServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	return "http://" + ln.Addr().String()
}

func TestPreflightNamesAHangingTarget(t *testing.T) {
	t.Parallel()
	p := fakeProfile(t, hangingServer(t))
	p.ClientTimeout = profile.Duration(200 * time.Millisecond)
	pe := preflightErr(t, p)
	require.Equal(t, "base_url", pe.Field)
	require.Contains(t, pe.Error(), "did not answer within client_timeout (200ms)")
}

// A ledger that answers but an operation that hangs: the operation is named.
func TestPreflightNamesAHangingOperation(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			<-release
			return
		}
		writeJSON(w, 200, map[string]any{"count": 0})
	}))
	t.Cleanup(ts.Close)
	t.Cleanup(func() { close(release) })
	p := fakeProfile(t, ts.URL)
	p.ClientTimeout = profile.Duration(200 * time.Millisecond)
	pe := preflightErr(t, p)
	require.Equal(t, "base_url", pe.Field)
	require.Contains(t, pe.Error(), "POST "+ts.URL+"/v1/refunds did not answer within client_timeout (200ms)")
	require.Contains(t, pe.Error(), "raise client_timeout")
}

const htmlPage = "<!DOCTYPE html>\n<html><head><title>Welcome to nginx!</title></head><body>hello</body></html>"

func TestPreflightNamesAnHTMLTarget(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, htmlPage)
	}))
	t.Cleanup(ts.Close)
	pe := preflightErr(t, fakeProfile(t, ts.URL))
	require.Equal(t, "base_url", pe.Field)
	require.Contains(t, pe.Error(), "answered a web page, not an API's answer (200 (text/html; charset=utf-8) <!DOCTYPE html> <html><head><title>Welcome to nginx!")
	require.Contains(t, pe.Error(), "check that base_url points at the API, then side_effects.path and operation.path")
}

// A target that does not find the key where the profile puts it answers missing_key: the
// preflight names key_field (or key_header), not the operation.
func TestPreflightNamesTheKeyPlaceATargetDoesNotRead(t *testing.T) {
	t.Parallel()
	f := &fakeRefunds{keyField: func(body map[string]any) (string, bool) {
		k, ok := body["idempotency_key"].(string) // the target reads it at the top level
		return k, ok
	}}
	base := startFake(t, f)
	p := fakeProfile(t, base)
	p.KeyHeader, p.KeyField = "", "meta.idempotency_key"
	pe := preflightErr(t, p)
	require.Equal(t, "key_field", pe.Field, pe.Error())
	require.Contains(t, pe.Error(), "the target did not find the key at key_field meta.idempotency_key; fix key_field")

	p = fakeProfile(t, startFake(t, &fakeRefunds{}))
	p.KeyHeader = "PayPal-Request-Id" // the target reads Idempotency-Key
	pe = preflightErr(t, p)
	require.Equal(t, "key_header", pe.Field, pe.Error())
	require.Contains(t, pe.Error(), "did not read the key from the PayPal-Request-Id header; fix key_header")
}

// The ledger is fine, the operation's path is not: a 404 page, classified client_error.
func TestPreflightNamesAnOperationThatDoesNotSucceed(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, "<html><body>404 page not found</body></html>")
			return
		}
		writeJSON(w, 200, map[string]any{"count": 0})
	}))
	t.Cleanup(ts.Close)
	pe := preflightErr(t, fakeProfile(t, ts.URL))
	require.Equal(t, "operation", pe.Field)
	require.Contains(t, pe.Error(), `POST `+ts.URL+`/v1/refunds answered 404 (text/html) <html><body>404 page not found</body></html>, which the profile's rules call client_error, not success`)
	require.Contains(t, pe.Error(), "fix operation.path")
}

func TestPreflightNamesALedgerCountTypo(t *testing.T) {
	t.Parallel()
	p := fakeProfile(t, startFake(t, &fakeRefunds{}))
	p.SideEffects.Count = "cuont"
	pe := preflightErr(t, p)
	require.Equal(t, "side_effects.count", pe.Field)
	require.Contains(t, pe.Error(), `/v1/refunds?order_id=ip-preflight-`)
	require.Contains(t, pe.Error(), ` answered (application/json) {"count":0}, which does not resolve to a number (count cuont: nothing at that path): `)
	require.NotContains(t, pe.Error(), `\"`, "the body is JSON text, not a Go-quoted string")
	require.Contains(t, pe.Error(), "fix side_effects.count")
}

func TestPreflightNamesALedgerPathThatFails(t *testing.T) {
	t.Parallel()
	p := fakeProfile(t, startFake(t, &fakeRefunds{}))
	p.SideEffects.Method = http.MethodDelete // the fake answers any non-GET as the operation: 400 bad json
	pe := preflightErr(t, p)
	require.Equal(t, "side_effects.path", pe.Field)
	require.Contains(t, pe.Error(), "answered 400")
	require.Contains(t, pe.Error(), `answered 400 (application/json) {"error":"bad json"}: fix side_effects.path`)
}

// A ledger that does not count the operation's effect (here: another entity's).
func TestPreflightNamesALedgerThatDoesNotCount(t *testing.T) {
	t.Parallel()
	p := fakeProfile(t, startFake(t, &fakeRefunds{}))
	p.SideEffects.Path = "/v1/refunds?order_id=someone-else-{{.Entity}}"
	pe := preflightErr(t, p)
	require.Equal(t, "side_effects", pe.Field)
	require.Contains(t, pe.Error(), "changed the ledger by 0 (before 0, after 0), not 1")
}

// A ledger counting every effect of the target (one global counter) passes: the
// preflight compares before and after, not an absolute count.
func TestPreflightComparesTheCountBeforeAndAfter(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	total, perPost := 41, 1
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if r.Method == http.MethodPost {
			total += perPost
			writeJSON(w, 201, map[string]any{"id": total})
			return
		}
		writeJSON(w, 200, map[string]any{"n": total})
	}))
	t.Cleanup(ts.Close)
	p := fakeProfile(t, ts.URL)
	p.SideEffects.Path, p.SideEffects.Count = "/counter?ignored={{.Entity}}", "n"
	require.NoError(t, scenarios.Preflight(context.Background(), p))

	mu.Lock()
	perPost = 2
	mu.Unlock()
	pe := preflightErr(t, p)
	require.Equal(t, "side_effects", pe.Field)
	require.Contains(t, pe.Error(), "changed the ledger by 2 (before 42, after 44), not 1")
}

// Run refuses a target that fails the preflight before any scenario starts.
func TestRunStopsAtThePreflight(t *testing.T) {
	t.Parallel()
	f := &fakeRefunds{}
	p := fakeProfile(t, startFake(t, f))
	p.SideEffects.Count = "cuont"
	var started int
	_, err := scenarios.Run(context.Background(), scenarios.RunConfig{
		Profiles: []*profile.Profile{p}, Only: []string{"replay/*"},
		Progress: func(verdict.Result) { started++ },
	})
	var pe *scenarios.PreflightError
	require.True(t, errors.As(err, &pe), "%v", err)
	require.Zero(t, started)
	require.Empty(t, f.requests(), "the ledger typo is found before anything is sent")

	err = scenarios.Check(context.Background(), p, scenarios.Only("replay/sequential"))
	require.True(t, errors.As(err, &pe), "Check runs the preflight too: %v", err)
}

// A cancelled run returns what finished, lists the rest as not run, and Findings says
// it is incomplete.
func TestRunStoppedEarlyIsIncomplete(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	p := fakeProfile(t, startFake(t, &fakeRefunds{}))
	var finished int
	rep, err := scenarios.Run(ctx, scenarios.RunConfig{
		Profiles: []*profile.Profile{p}, Only: []string{"replay/*", "key/*"}, Concurrency: 1,
		Progress: func(verdict.Result) {
			finished++
			if finished == 2 {
				cancel(errors.New("test stop"))
			}
		},
	})
	require.NoError(t, err)
	require.False(t, rep.Complete)
	require.True(t, rep.Incomplete())
	require.Equal(t, "test stop", rep.Interrupted)
	require.Len(t, rep.Results, 2, "no scenario starts once the run is stopped")
	selected, err := scenarios.Select([]string{"replay/*", "key/*"}, nil)
	require.NoError(t, err)
	require.Len(t, rep.NotRun, len(selected)-2)
	for _, nr := range rep.NotRun {
		require.Equal(t, "fake", nr.Target)
	}
	findings := scenarios.Findings(rep)
	require.Error(t, findings)
	require.Contains(t, findings.Error(), fmt.Sprintf("run incomplete (test stop): %d scenario(s) not run", len(selected)-2))

	full, err := scenarios.Run(context.Background(), scenarios.RunConfig{Profiles: []*profile.Profile{p}, Only: []string{"replay/sequential"}})
	require.NoError(t, err)
	require.True(t, full.Complete)
	require.Empty(t, full.NotRun)
	require.NoError(t, scenarios.Findings(full))
	require.Empty(t, full.Interrupted)
}

// Stopped during the first target, the second never starts: all its scenarios are not
// run, and no proxy is opened for it.
func TestRunStoppedEarlySkipsTheNextTarget(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	first := fakeProfile(t, startFake(t, &fakeRefunds{}))
	f2 := &fakeRefunds{}
	second := fakeProfile(t, startFake(t, f2))
	second.Name = "second"
	rep, err := scenarios.Run(ctx, scenarios.RunConfig{
		Profiles: []*profile.Profile{first, second}, Only: []string{"replay/sequential", "key/missing"}, Concurrency: 1,
		Progress: func(verdict.Result) { cancel(errors.New("test stop")) },
	})
	require.NoError(t, err)
	require.True(t, rep.Incomplete())
	require.Len(t, rep.Results, 1)
	require.Equal(t, "fake", rep.Results[0].Target)
	other := map[string]string{"key/missing": "replay/sequential", "replay/sequential": "key/missing"}[rep.Results[0].ScenarioID]
	require.Equal(t, []verdict.NotRun{
		{ScenarioID: other, Target: "fake"},
		{ScenarioID: "key/missing", Target: "second"},
		{ScenarioID: "replay/sequential", Target: "second"},
	}, notRunSorted(rep.NotRun))
	require.Len(t, f2.requests(), 1, "the second target saw its preflight only")
	require.Equal(t, []string{"fake", "second"}, rep.Targets)
}

func notRunSorted(list []verdict.NotRun) []verdict.NotRun {
	out := append([]verdict.NotRun(nil), list...)
	sort.Slice(out, func(i, j int) bool {
		if out[i].Target != out[j].Target {
			return out[i].Target < out[j].Target
		}
		return out[i].ScenarioID < out[j].ScenarioID
	})
	return out
}

// An operation that answers, but slower than half of client_timeout, is noted: a target
// that slow times out whenever it is slower still. The bounds hold on any machine: the
// slow one takes at least its hold, the fast one has half a minute.
func TestPreflightNotesAnOperationNearClientTimeout(t *testing.T) {
	t.Parallel()
	slow := fakeProfile(t, startFake(t, &fakeRefunds{hold: 3 * time.Second}))
	slow.ClientTimeout = profile.Duration(5 * time.Second)
	notes, err := scenarios.PreflightNotes(context.Background(), slow)
	require.NoError(t, err)
	require.Len(t, notes, 1)
	require.Contains(t, notes[0], "of client_timeout (5s): attempts of a target this slow time out whenever it is slower still")
	require.Contains(t, notes[0], "raise client_timeout")

	fast := fakeProfile(t, startFake(t, &fakeRefunds{}))
	fast.ClientTimeout = profile.Duration(30 * time.Second)
	notes, err = scenarios.PreflightNotes(context.Background(), fast)
	require.NoError(t, err)
	require.Empty(t, notes)
}

// A unique_field the operation's answer does not have is noted: every check that would
// tell a replay from a new execution by it falls back on bytes and the ledger.
func TestPreflightNotesAUniqueFieldTheAnswerLacks(t *testing.T) {
	t.Parallel()
	p := fakeProfile(t, startFake(t, &fakeRefunds{}))
	p.ClientTimeout = profile.Duration(30 * time.Second)
	p.Expect.UniqueField = "refund.id"
	notes, err := scenarios.PreflightNotes(context.Background(), p)
	require.NoError(t, err)
	require.Len(t, notes, 1)
	require.Contains(t, notes[0], "expect.unique_field refund.id names nothing in the operation's answer")

	p.Expect.UniqueField = "id"
	notes, err = scenarios.PreflightNotes(context.Background(), p)
	require.NoError(t, err)
	require.Empty(t, notes)
}

// An operation a rate limit refuses is sent again once the limit allows.
func TestPreflightWaitsOutAThrottledOperation(t *testing.T) {
	t.Parallel()
	inner := &fakeRefunds{}
	startFake(t, inner)
	var mu sync.Mutex
	posts := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			mu.Lock()
			posts++
			first := posts == 1
			mu.Unlock()
			if first {
				w.Header().Set("Retry-After", "0")
				w.WriteHeader(http.StatusTooManyRequests)
				return
			}
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	p := fakeProfile(t, srv.URL)
	p.ClientTimeout = profile.Duration(30 * time.Second)
	_, err := scenarios.PreflightNotes(context.Background(), p)
	require.NoError(t, err)
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, 2, posts)
}

// The free-form default against the same target: the runner's keys are refused, so the
// catalogue's keyed scenarios could not run; the preflight says so and names the fix.
func TestPreflightNamesKeyFormatForAUUIDOnlyTarget(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p := fakeProfile(t, startFake(t, &fakeRefunds{uuidOnly: true}))
	p.ClientTimeout = profile.Duration(10 * time.Second)
	err := scenarios.Preflight(ctx, p)
	var pe *scenarios.PreflightError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, "expect.key_format", pe.Field)
	require.Regexp(t, `answered 400 .*bad or missing key.* to the key idemproof-[0-9a-f]+-000`, pe.Msg)
	require.Contains(t, pe.Msg, "but accepted a UUID key")
	require.Contains(t, pe.Msg, "set expect.key_format: uuid")
}

// A target whose key parser fails with a 500 on a free-form key and accepts a UUID is not
// stopped: a 5xx for a valid key is what key/valid-never-5xx judges (the reference's
// strict-key-shape flaw must reach it). A note names expect.key_format.
func TestPreflightNotesAServerErrorForAFreeFormKey(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p := fakeProfile(t, startFake(t, &fakeRefunds{uuidOnly: true, uuid500: true}))
	p.ClientTimeout = profile.Duration(10 * time.Second)
	notes, err := scenarios.PreflightNotes(ctx, p)
	require.NoError(t, err, "the UUID key's operation executed once, and the ledger shows it")
	require.Len(t, notes, 1)
	require.Regexp(t, `answered 500 .*invalid UUID.* to the key idemproof-[0-9a-f]+-000, but accepted a UUID key \(201\)`, notes[0])
	require.Contains(t, notes[0], "key/valid-never-5xx")
	require.Contains(t, notes[0], "set expect.key_format: uuid")
}

// A target that refuses a harness key for another reason than its shape is no key_format
// problem: the preflight names key_header, as before.
func TestPreflightKeyRefusalThatIsNotTheShape(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p := fakeProfile(t, startFake(t, &fakeRefunds{}))
	p.ClientTimeout = profile.Duration(10 * time.Second)
	p.KeyHeader = "X-Idempotency-Key" // the fake reads Idempotency-Key: every key is missing
	err := scenarios.Preflight(ctx, p)
	var pe *scenarios.PreflightError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, "key_header", pe.Field, pe.Msg)
	require.NotContains(t, pe.Msg, "key_format")
}
