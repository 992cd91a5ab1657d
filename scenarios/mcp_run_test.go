package scenarios_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/report"
	"github.com/idemproof/idemproof/scenarios"
	"github.com/idemproof/idemproof/verdict"
)

// mcpRefunds is a tiny MCP refund server on the official go-sdk, in process: the key in
// params._meta.idempotency_key, recorded before the work, scoped by Authorization;
// in-flight (-32010), mismatch (-32011) and missing key (-32012) as JSON-RPC errors; the
// stored result replayed; a list_refunds ledger tool. ignoreKey makes it read the key
// where its SDK never puts it (it drops an unknown params field): every call executes.
type mcpRefunds struct {
	ignoreKey bool
	metaKey   string // the _meta name of the key ("" idempotency_key)
	// pollWork makes the tool close its answer's stream first (SEP-1699, with an event
	// store) and work this long before it commits: a server to be polled.
	pollWork time.Duration
	// refuseGET answers every GET 405, so a polled stream cannot be resumed.
	refuseGET bool

	mu     sync.Mutex
	keys   map[string]*mcpEntry
	ledger map[string]int
	seq    int
}

type mcpEntry struct {
	args   string
	done   bool
	result *sdk.CallToolResult
}

func startMCP(t *testing.T, s *mcpRefunds) string {
	t.Helper()
	s.keys, s.ledger = map[string]*mcpEntry{}, map[string]int{}
	srv := sdk.NewServer(&sdk.Implementation{Name: "refunds", Version: "1"}, nil)
	type refundIn struct {
		OrderID string `json:"order_id"`
		Amount  int    `json:"amount"`
	}
	sdk.AddTool(srv, &sdk.Tool{Name: "refund"}, func(ctx context.Context, req *sdk.CallToolRequest, in refundIn) (*sdk.CallToolResult, any, error) {
		name := s.metaKey
		if name == "" {
			name = "idempotency_key"
		}
		key, _ := req.Params.Meta[name].(string)
		if s.ignoreKey {
			key = "" // an SDK that drops params.idempotencyKey leaves the server nothing to read
		}
		var e *mcpEntry
		if !s.ignoreKey {
			if key == "" {
				return nil, nil, &jsonrpc.Error{Code: -32012, Message: "idempotency key required"}
			}
			scope := req.Extra.Header.Get("Authorization") + " " + key
			s.mu.Lock()
			old, seen := s.keys[scope]
			switch {
			case seen && old.args != string(req.Params.Arguments):
				s.mu.Unlock()
				return nil, nil, &jsonrpc.Error{Code: -32011, Message: "key reused with other arguments"}
			case seen && !old.done:
				s.mu.Unlock()
				return nil, nil, &jsonrpc.Error{Code: -32010, Message: "in progress, retry later"}
			case seen:
				s.mu.Unlock()
				return old.result, nil, nil
			}
			e = &mcpEntry{args: string(req.Params.Arguments)}
			s.keys[scope] = e
			s.mu.Unlock()
		}
		if d, err := time.ParseDuration(req.Extra.Header.Get("X-Test-Delay")); err == nil {
			time.Sleep(d) // the slow hook: hold the work in flight, as the profile declares
		}
		if s.pollWork > 0 {
			req.Extra.CloseSSEStream(sdk.CloseSSEStreamArgs{RetryAfter: 20 * time.Millisecond})
			time.Sleep(s.pollWork)
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		s.ledger[in.OrderID]++
		s.seq++
		res := &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("refund rf_%d for %s", s.seq, in.OrderID)}}}
		if e != nil {
			e.done, e.result = true, res
		}
		return res, nil, nil
	})
	type listIn struct {
		OrderID string `json:"order_id"`
	}
	type listOut struct {
		Count int `json:"count"`
	}
	sdk.AddTool(srv, &sdk.Tool{Name: "list_refunds"}, func(ctx context.Context, req *sdk.CallToolRequest, in listIn) (*sdk.CallToolResult, listOut, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		return nil, listOut{Count: s.ledger[in.OrderID]}, nil
	})
	var opts *sdk.StreamableHTTPOptions
	if s.pollWork > 0 {
		opts = &sdk.StreamableHTTPOptions{EventStore: sdk.NewMemoryEventStore(nil)}
	}
	var h http.Handler = sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, opts)
	if s.refuseGET {
		inner := h
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet {
				http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
				return
			}
			inner.ServeHTTP(w, r)
		})
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.URL
}

func mcpRunProfile(t *testing.T, base, keyField string) *profile.Profile {
	t.Helper()
	p, err := profile.Parse("mcp-sdk.yaml", []byte(`name: mcp-sdk
transport: mcp
base_url: `+base+`
key_field: `+keyField+`
operation:
  tool: refund
  headers: {Authorization: "Bearer a"}
  body: '{"order_id": "{{.Entity}}", "amount": 4900}'
  altered_body: '{"order_id": "{{.Entity}}", "amount": 5000}'
side_effects:
  tool: list_refunds
  arguments: '{"order_id": "{{.Entity}}"}'
  count: result.structuredContent.count
outcomes:
  in_flight: {json: {path: error.code, equals: -32010}}
  mismatch: {json: {path: error.code, equals: -32011}}
  missing_key: {json: {path: error.code, equals: -32012}}
slow_operation: {header: X-Test-Delay, value: 300ms}
client_timeout: 5s   # generous: a loaded machine must not turn an answer into a timeout
`))
	require.NoError(t, err)
	return p
}

// The catalogue over MCP, unchanged: everything the in-test server's profile can run.
var mcpSet = []string{"replay/*", "before/*", "race/*", "fingerprint/*", "key/*", "errors/*"}

func TestCatalogueOverMCPAgainstTheSDKServer(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	p := mcpRunProfile(t, startMCP(t, &mcpRefunds{}), "params._meta.idempotency_key")
	rep, err := scenarios.Run(ctx, scenarios.RunConfig{Profiles: []*profile.Profile{p}, Only: mcpSet, Seed: 3})
	require.NoError(t, err)
	// The in-test server replays and refuses correctly; it fingerprints the arguments as
	// written, validates no key shape and sends no Retry-After.
	other := map[string]verdict.Verdict{
		"fingerprint/json-key-order": verdict.Info, "fingerprint/json-whitespace": verdict.Info,
		"fingerprint/number-spelling": verdict.Info, "fingerprint/unrelated-header": verdict.Info,
		"key/control-chars": verdict.NonStrict, "key/over-length": verdict.NonStrict, "race/in-flight-retry-after": verdict.NA,
		"fingerprint/query-string": verdict.NA, "race/keepalive-many-keys": verdict.NA,
		"key/header-case": verdict.NA, "key/sf-string": verdict.NA, "key/empty-quoted": verdict.NA, "key/get-ignored": verdict.NA,
		"replay/marker": verdict.NA, "replay/fidelity-headers": verdict.NA, "errors/problem-json": verdict.NA,
		"race/in-flight-original-fails": verdict.NA, // the SDK server has no fail hook
		"replay/after-restart":          verdict.NA, // a server idemproof starts: transport mcp-stdio
	}
	require.GreaterOrEqual(t, len(rep.Results), 40)
	for _, r := range rep.Results {
		want, ok := other[r.ScenarioID]
		if !ok {
			requirePassOrUnrefusedBurst(t, r.ScenarioID, r)
			continue
		}
		require.Equal(t, want, r.Verdict, "%s: %s", r.ScenarioID, r.Message)
	}
	require.Contains(t, result(t, rep, "fingerprint/query-string").Message, "transport mcp sends tools/call to one endpoint")
	require.Contains(t, result(t, rep, "race/keepalive-many-keys").Message, "transport mcp sends each attempt inside its sessions")
	require.Contains(t, result(t, rep, "errors/problem-json").Message, "a refusal is a JSON-RPC error object")
	require.Contains(t, result(t, rep, "race/in-flight-409").Message, "got 200", "the in-flight refusal is the JSON-RPC error inside a 200")
	rec := result(t, rep, "replay/after-503").Evidence.Record
	require.Equal(t, 1, rec.Ledger[verdict.LedgerOperation], "the ledger read by tool call")
	require.Len(t, rec.Journal, 2, "initialize and notifications carry no key: only the two tools/call attempts are journaled")
	require.True(t, rec.Journal[0].HasKey, "the proxy found the key in params._meta")
	var answers []verdict.Op
	for _, op := range rec.History {
		if op.Type != verdict.OpInvoke {
			answers = append(answers, op)
		}
	}
	require.Len(t, answers, 2)
	require.Equal(t, "tools/call", answers[1].RPCMethod)
	require.NotEmpty(t, answers[1].RPCID)
	require.Equal(t, "success", string(answers[1].Class))
	require.True(t, strings.HasPrefix(string(answers[1].Body), `{"result":{"content":[{"type":"text","text":"refund rf_`), string(answers[1].Body))
	body, _, ok := journaledCommit(rec)
	require.True(t, ok, "the proxy buffered what the upstream committed")
	require.Equal(t, string(answers[1].Body), string(body), "the committed event stream and the replay compare as the same response")

	// The retry in a new session sends the same tool call under another JSON-RPC id: its
	// timeline shows the two sessions and one payload.
	session := report.ResultTimeline(result(t, rep, "replay/new-session"))
	require.Contains(t, session, "sessions: S1=")
	require.Contains(t, session, "session S2")
	// A payload label is a word of its own ("P2"); a session id may hold the letters.
	require.NotRegexp(t, `\bP2\b`, session, "the same arguments re-sent: one payload\n%s", session)

	for id, want := range map[string]string{"race/in-flight-not-fabricated": "in_flight", "race/in-flight-other-payload": "mismatch"} {
		var got []string
		for _, op := range result(t, rep, id).Evidence.Record.History {
			if op.Step == "repeat" && op.Type != verdict.OpInvoke {
				require.Equal(t, 200, op.Status)
				require.Equal(t, verdict.OpFail, op.Type, "a JSON-RPC error inside a 200 is a refusal")
				got = append(got, string(op.Class))
			}
		}
		require.Equal(t, []string{want}, got, id)
	}
}

func journaledCommit(rec *verdict.Record) ([]byte, int, bool) {
	for _, j := range rec.Journal {
		if j.ReachedUpstream && len(j.UpstreamBody) > 0 {
			return j.UpstreamBody, j.UpstreamStatus, true
		}
	}
	return nil, 0, false
}

func TestCatalogueOverMCPSaysTheKeyWasIgnored(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	// SEP-3182's placement, on a server whose SDK does not know the field.
	p := mcpRunProfile(t, startMCP(t, &mcpRefunds{ignoreKey: true}), "params.idempotencyKey")
	rep, err := scenarios.Run(ctx, scenarios.RunConfig{Profiles: []*profile.Profile{p}, Only: []string{"replay/after-503", "replay/sequential", "before/503"}})
	require.NoError(t, err)
	for _, id := range []string{"replay/after-503", "replay/sequential"} {
		r := result(t, rep, id)
		require.Equal(t, verdict.Fail, r.Verdict, id)
		require.Contains(t, r.Message, "every repeat executed again (the key was not honoured for it", id)
	}
	require.Equal(t, verdict.Pass, result(t, rep, "before/503").Verdict, "the request that never arrived executes once even without a key")
}

// MCP's _meta names are namespaced with dots; key_field writes such a name's dots as \.
// and the harness puts the key there, and the proxy reads it there.
func TestMCPKeyUnderANamespacedMetaName(t *testing.T) {
	t.Parallel()
	p := mcpRunProfile(t, startMCP(t, &mcpRefunds{metaKey: "io.modelcontextprotocol/idempotency-key"}),
		`params._meta.io\.modelcontextprotocol/idempotency-key`)
	for id, r := range runOn(t, p, "replay/sequential", "replay/after-503", "key/missing") {
		requirePassOrUnrefusedBurst(t, id, r)
	}
}

func TestMCPCapabilityRequiredIsCheckedByThePreflight(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	p := mcpRunProfile(t, startMCP(t, &mcpRefunds{}), "params.idempotencyKey")
	p.MCP = &profile.MCPOptions{RequireIdempotencyCapability: true}
	_, err := scenarios.Run(ctx, scenarios.RunConfig{Profiles: []*profile.Profile{p}, Only: []string{"replay/sequential"}})
	var pe *scenarios.PreflightError
	require.ErrorAs(t, err, &pe, "the target is not what the profile says: nothing runs")
	require.Contains(t, pe.Error(), "does not advertise capabilities.tools.idempotency")
	require.Contains(t, pe.Error(), "mcp.require_idempotency_capability", "the field to fix")
	require.Contains(t, pe.Error(), "the server must advertise it in its initialize answer")
	require.NotContains(t, pe.Error(), "fix base_url", "the target is reachable: the address is not what to fix")
}

// A ledger read by a tool call with a mistyped count path names the tool, the JSON-RPC
// response it got, and the field to fix; never an HTTP GET or the session's empty answer.
func TestMCPPreflightNamesALedgerToolCountTypo(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	p := mcpRunProfile(t, startMCP(t, &mcpRefunds{}), "params.idempotencyKey")
	require.NotEmpty(t, p.SideEffects.Tool)
	p.SideEffects.Count = "result.structuredContent.cuont"
	err := scenarios.Preflight(ctx, p)
	var pe *scenarios.PreflightError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, "side_effects.count", pe.Field)
	require.Contains(t, pe.Error(), "the ledger tools/call "+p.SideEffects.Tool+" at ")
	require.Contains(t, pe.Error(), `nothing at that path in the ledger response {"`)
	require.NotContains(t, pe.Error(), "GET ")
	require.NotContains(t, pe.Error(), "empty body")

	plain := httptest.NewServer(http.NotFoundHandler()) // an HTTP API, not an MCP server
	t.Cleanup(plain.Close)
	p.SideEffects.Count = "result.structuredContent.count"
	p.BaseURL = plain.URL
	err = scenarios.Preflight(ctx, p)
	require.ErrorAs(t, err, &pe)
	require.Equal(t, "base_url", pe.Field, "an endpoint that is not MCP: %v", err)
	require.Contains(t, pe.Error(), "answered 404 (text/plain; charset=utf-8) 404 page not found")
	require.Contains(t, pe.Error(), "check that base_url and operation.path name the MCP endpoint")
}

// A server polled by its clients (SEP-1699): its answers come on a resumed stream, so the
// plain replay PASSes. Where a fault hid a stream that held only the priming event while
// the tool still worked, the journal record says so, and the retry waits until the
// ledger shows the work done (as a client that polled would), so it meets a committed
// key: the replay scenarios PASS on proof instead of an in-flight UNKNOWN. The same
// server that ignores the key still FAILs them.
func TestMCPServerThatPolls(t *testing.T) {
	t.Parallel()
	only := []string{"replay/sequential", "replay/after-503", "replay/after-reset", "replay/lost-twice"}
	run := func(srv *mcpRefunds) map[string]verdict.Result {
		p := mcpRunProfile(t, startMCP(t, srv), "params._meta.idempotency_key")
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
		defer cancel()
		rep, err := scenarios.Run(ctx, scenarios.RunConfig{Profiles: []*profile.Profile{p}, Only: only, Seed: 5})
		require.NoError(t, err)
		got := map[string]verdict.Result{}
		for _, r := range rep.Results {
			got[r.ScenarioID] = r
		}
		return got
	}
	got := run(&mcpRefunds{pollWork: 300 * time.Millisecond})
	for _, id := range only {
		require.Equal(t, verdict.Pass, got[id].Verdict, "%s: %s", id, got[id].Message)
	}
	after := got["replay/after-503"]
	noted := false
	for _, j := range after.Evidence.Record.Journal {
		noted = noted || (j.Fault != "" && strings.Contains(j.Note, scenarios.NoteAnswerWithoutResponse))
	}
	require.True(t, noted, "the faulted record says its answer held no response yet")
	require.Equal(t, 1, after.Evidence.Record.Ledger[verdict.LedgerOperation])

	broken := run(&mcpRefunds{pollWork: 300 * time.Millisecond, ignoreKey: true})
	for _, id := range only {
		require.Equal(t, verdict.Fail, broken[id].Verdict, "%s: %s", id, broken[id].Message)
	}
}

// A server that closes its answer's stream to be polled but refuses the GET that resumes
// it cannot be checked, and no profile field would change that: the preflight says what
// the server must do instead of "fix base_url".
func TestMCPPreflightNamesAResumptionTheServerRefuses(t *testing.T) {
	t.Parallel()
	srv := &mcpRefunds{pollWork: 50 * time.Millisecond, refuseGET: true}
	p := mcpRunProfile(t, startMCP(t, srv), "params._meta.idempotency_key")
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	err := scenarios.Preflight(ctx, p)
	var pe *scenarios.PreflightError
	require.ErrorAs(t, err, &pe)
	require.Empty(t, pe.Field, "no profile field to fix: %v", err)
	require.Contains(t, pe.Error(), "answered 200 with an event stream that ended before the tool's response")
	require.Contains(t, pe.Error(), "was answered 405")
	require.Contains(t, pe.Error(), "answer the GET with Last-Event-ID")
	require.NotContains(t, pe.Error(), "fix base_url")
	t.Log(pe.Error())
}
