package scenarios_test

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/scenarios"
	"github.com/idemproof/idemproof/verdict"
)

func fakeProfile(t testing.TB, baseURL string) *profile.Profile {
	t.Helper()
	p, err := profile.Parse("fake.yaml", []byte(fakeProfileDoc(baseURL)))
	require.NoError(t, err)
	return p
}

// fakeProfileDoc is fakeProfile's document, for tests that add to it.
func fakeProfileDoc(baseURL string) string {
	return `name: fake
base_url: ` + baseURL + `
operation:
  path: /v1/refunds
  body: '{"order_id": "{{.Entity}}", "amount": 4900}'
  altered_body: '{"order_id": "{{.Entity}}", "amount": 5000}'
side_effects: {path: '/v1/refunds?order_id={{.Entity}}', count: count}
expect: {in_flight: 409, mismatch: 422, missing_key: "400", replay_header: Idempotent-Replayed}
slow_operation: {header: X-Test-Delay, value: 400ms}
client_timeout: 2s
`
}

func verdicts(rep *verdict.Report) map[string]verdict.Verdict {
	out := map[string]verdict.Verdict{}
	for _, r := range rep.Results {
		out[r.ScenarioID] = r.Verdict
	}
	return out
}

var quickSet = []string{"replay/*", "before/*", "race/concurrent-pair", "race/burst-50", "race/in-flight-*", "race/duplicate-*", "fingerprint/*", "key/*", "recovery/*", "storage/*"}

func TestRunAgainstACorrectFake(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p := fakeProfile(t, startFake(t, &fakeRefunds{}))
	var progressed int
	rep, err := scenarios.Run(ctx, scenarios.RunConfig{
		Profiles: []*profile.Profile{p}, Only: quickSet, Seed: 7,
		Progress: func(verdict.Result) { progressed++ },
	})
	require.NoError(t, err)
	require.Equal(t, len(rep.Results), progressed)
	require.Equal(t, int64(7), rep.Seed)
	require.Equal(t, []string{"fake"}, rep.Targets)
	v := verdicts(rep)
	for _, r := range rep.Results {
		require.NotContains(t, []verdict.Verdict{verdict.Fail, verdict.Unknown}, r.Verdict, "%s: %s", r.ScenarioID, r.Message)
	}
	require.Equal(t, verdict.Pass, v["replay/after-503"])
	require.Equal(t, verdict.Pass, v["replay/after-hold"])
	require.Equal(t, verdict.Pass, v["race/in-flight-409"])
	require.Equal(t, verdict.Pass, v["race/in-flight-retry-after"])
	require.Equal(t, verdict.NA, v["replay/fidelity-headers"], "no replay_headers declared")
	require.Equal(t, verdict.NA, v["recovery/crash-after-key"], "no crash hook declared")
	require.Equal(t, verdict.NA, v["storage/5xx-not-pinned"])
	require.Equal(t, verdict.Info, v["fingerprint/json-key-order"], "a body hash sees key order: reported, not failed")

	// The client hid no attempt and the proxy saw no extra one: every keyed attempt the
	// history invoked through the proxy is one journal record.
	for _, r := range rep.Results {
		if r.Evidence.Record == nil || r.ScenarioID == "key/header-case" {
			continue // N/A, or a step sent past the proxy on purpose
		}
		keyed := 0
		for _, op := range r.Evidence.Record.History {
			if op.Type == verdict.OpInvoke && op.Key != "" {
				keyed++
			}
		}
		require.Len(t, r.Evidence.Record.Journal, keyed, r.ScenarioID)
	}

	after503 := result(t, rep, "replay/after-503")
	rec := after503.Evidence.Record
	require.NotNil(t, rec)
	require.Equal(t, 1, rec.Ledger["operation"])
	require.Len(t, rec.Journal, 2, "the journal has both attempts")
	require.Equal(t, "after-status", rec.Journal[0].Fault)
	require.Equal(t, 201, rec.Journal[0].UpstreamStatus)
	require.Equal(t, []verdict.OpType{verdict.OpInvoke, verdict.OpInfo, verdict.OpInvoke, verdict.OpOK}, opTypes(rec.History))
	require.Equal(t, 1, after503.Evidence.Categories["recovered"])
}

func TestRunAgainstABrokenFakeFindsDuplicates(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p := fakeProfile(t, startFake(t, &fakeRefunds{broken: true}))
	rep, err := scenarios.Run(ctx, scenarios.RunConfig{Profiles: []*profile.Profile{p}, Only: []string{"replay/after-503", "race/burst-50", "fingerprint/mismatch", "key/missing", "before/503"}})
	require.NoError(t, err)
	v := verdicts(rep)
	require.Equal(t, verdict.Fail, v["replay/after-503"])
	require.Equal(t, verdict.Fail, v["race/burst-50"])
	require.Equal(t, verdict.Fail, v["fingerprint/mismatch"])
	require.Equal(t, verdict.Fail, v["key/missing"])
	require.Equal(t, verdict.Pass, v["before/503"], "the contrast: the first attempt never arrived, so even no idempotency executes once")
	burst := result(t, rep, "race/burst-50")
	// The burst's 50 attempts and the settle retry after them all executed.
	require.Equal(t, 50, burst.Evidence.Categories["duplicated"])
	require.Equal(t, 51, burst.Evidence.Record.Ledger["operation"])
	require.Len(t, burst.Evidence.Record.Journal, 51, "every attempt of the burst and the settle retry are in the journal")
}

func TestCheckJoinsFindings(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	good := fakeProfile(t, startFake(t, &fakeRefunds{}))
	require.NoError(t, scenarios.Check(ctx, good, scenarios.Only("replay/after-*", "fingerprint/mismatch")))

	bad := fakeProfile(t, startFake(t, &fakeRefunds{broken: true}))
	err := scenarios.Check(ctx, bad, scenarios.Only("replay/after-503", "replay/sequential", "key/missing"))
	require.Error(t, err)
	msg := err.Error()
	require.Len(t, strings.Split(msg, "\n"), 3)
	require.Contains(t, msg, "replay/after-503 [fake] FAIL: every repeat executed again (the key was not honoured for it: ignored, or scoped narrower than the retry, per session or per connection); 2 side effects for one key, want 1")
	require.Contains(t, msg, "replay/sequential [fake] FAIL")
	require.Contains(t, msg, "key/missing [fake] FAIL")
}

func TestStrictTurnsNonStrictIntoFail(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	f := &fakeRefunds{}
	p := fakeProfile(t, startFake(t, f))
	p.Expect.ReplayHeader = "X-Not-Sent" // the fake marks replays with another header
	rep, err := scenarios.Run(ctx, scenarios.RunConfig{Profiles: []*profile.Profile{p}, Only: []string{"replay/marker"}})
	require.NoError(t, err)
	require.Equal(t, verdict.NonStrict, rep.Results[0].Verdict)
	require.NoError(t, scenarios.Findings(rep))

	rep, err = scenarios.Run(ctx, scenarios.RunConfig{Profiles: []*profile.Profile{p}, Only: []string{"replay/marker"}, Strict: true})
	require.NoError(t, err)
	require.Equal(t, verdict.Fail, rep.Results[0].Verdict)
	require.ErrorContains(t, scenarios.Findings(rep), "replay/marker [fake] FAIL: strict: the replay does not carry X-Not-Sent")
}

// A JSON-RPC tool call carries the key inside the body (key_field); the runner puts it
// there, the proxy reads it there, and the scenarios work the same.
func TestRunWithKeyInJSONRPCBody(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	f := &fakeRefunds{keyField: func(body map[string]any) (string, bool) {
		params, _ := body["params"].(map[string]any)
		args, _ := params["arguments"].(map[string]any)
		k, ok := args["idempotency_key"].(string)
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
	rep, err := scenarios.Run(ctx, scenarios.RunConfig{Profiles: []*profile.Profile{p}, Only: []string{"replay/after-reset", "fingerprint/mismatch", "key/missing", "key/header-case"}})
	require.NoError(t, err)
	v := verdicts(rep)
	require.Equal(t, verdict.Pass, v["replay/after-reset"], result(t, rep, "replay/after-reset").Message)
	require.Equal(t, verdict.Pass, v["fingerprint/mismatch"])
	require.Equal(t, verdict.Pass, v["key/missing"])
	require.Equal(t, verdict.NA, v["key/header-case"], "no key header to change the case of")
	rec := result(t, rep, "replay/after-reset").Evidence.Record
	require.Len(t, rec.Journal, 2)
	require.True(t, rec.Journal[0].HasKey, "the proxy found the key in the body")
}

func TestRunRejectsBadConfig(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, err := scenarios.Run(ctx, scenarios.RunConfig{})
	require.EqualError(t, err, "run: no profile given")
	p := fakeProfile(t, "http://127.0.0.1:1")
	_, err = scenarios.Run(ctx, scenarios.RunConfig{Profiles: []*profile.Profile{p}, Only: []string{"nope/*"}})
	require.ErrorContains(t, err, `select "nope/*": no scenario matches`)
	p.Expect.Mismatch = 200
	_, err = scenarios.Run(ctx, scenarios.RunConfig{Profiles: []*profile.Profile{p}})
	require.ErrorContains(t, err, "run: profile fake: expect.mismatch: must be a 4xx status")
}

// An unreachable ledger makes the verdict UNKNOWN, never a pass (past the preflight,
// which would stop the run first: a target can break during a run).
func TestUnreachableTargetIsUnknown(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p := fakeProfile(t, "http://127.0.0.1:1")
	rep, err := scenarios.Run(ctx, scenarios.RunConfig{Profiles: []*profile.Profile{p}, Only: []string{"replay/sequential"}, NoPreflight: true})
	require.NoError(t, err)
	require.Equal(t, verdict.Unknown, rep.Results[0].Verdict, rep.Results[0].Message)
}

func result(t *testing.T, rep *verdict.Report, id string) verdict.Result {
	t.Helper()
	for _, r := range rep.Results {
		if r.ScenarioID == id {
			return r
		}
	}
	t.Fatalf("no result for %s", id)
	return verdict.Result{}
}

func opTypes(h []verdict.Op) []verdict.OpType {
	out := make([]verdict.OpType, len(h))
	for i, op := range h {
		out[i] = op.Type
	}
	return out
}

// A profile with a proxy: block drives an already running proxy through its admin API.
func TestRunThroughARemoteProxy(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	base := startFake(t, &fakeRefunds{})
	srv, err := faultproxy.Start(ctx, faultproxy.Config{Upstream: base, AdminToken: "t0ken"})
	t.Cleanup(func() { _ = srv.Close() })
	require.NoError(t, err)
	p := fakeProfile(t, base)
	p.Proxy = &profile.ProxyRef{URL: srv.URL(), Admin: srv.AdminURL(), AdminToken: "t0ken"}
	rep, err := scenarios.Run(ctx, scenarios.RunConfig{Profiles: []*profile.Profile{p}, Only: []string{"replay/after-close"}})
	require.NoError(t, err)
	r := rep.Results[0]
	require.Equal(t, verdict.Pass, r.Verdict, r.Message)
	require.Len(t, r.Evidence.Record.Journal, 2)
	require.Equal(t, "after-close", r.Evidence.Record.Journal[0].Fault)
	rules := srv.Proxy().Rules()
	require.Empty(t, rules, "the scenario's rules are removed afterwards")
}

// The scenario timeout bounds the work; declared waits come on top of it.
func TestScenarioTimeoutAddsDeclaredWaits(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p := fakeProfile(t, startFake(t, &fakeRefunds{}))
	p.Retention = profile.Duration(time.Second)
	rep, err := scenarios.Run(ctx, scenarios.RunConfig{Profiles: []*profile.Profile{p}, Only: []string{"expiry/inside-window"}, ScenarioTimeout: 300 * time.Millisecond})
	require.NoError(t, err)
	require.Equal(t, verdict.Pass, rep.Results[0].Verdict, rep.Results[0].Message)
}

// A target that never answers within the scenario timeout is UNKNOWN, not a verdict.
func TestScenarioTimeoutIsUnknown(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var mu sync.Mutex
	var conns []net.Conn
	closed := false
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		closed = true
		for _, c := range conns {
			c.Close()
		}
	})
	go func() {
		for {
			c, err := ln.Accept() // accept and never answer
			if err != nil {
				return
			}
			mu.Lock()
			if closed {
				c.Close()
			} else {
				conns = append(conns, c)
			}
			mu.Unlock()
		}
	}()
	p := fakeProfile(t, "http://"+ln.Addr().String())
	rep, err := scenarios.Run(ctx, scenarios.RunConfig{Profiles: []*profile.Profile{p}, Only: []string{"replay/sequential"}, ScenarioTimeout: 200 * time.Millisecond, NoPreflight: true})
	require.NoError(t, err)
	r := rep.Results[0]
	require.Equal(t, verdict.Unknown, r.Verdict)
	require.Contains(t, r.Message, "could not run")
}
