package scan_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/sjson"

	"github.com/idemproof/idemproof/examples/mcp-toolbox/toolbox"
	"github.com/idemproof/idemproof/scan"
	"github.com/idemproof/idemproof/verdict"
)

// tool is one tool of a fixture server: a raw schema and a handler.
type tool struct {
	name, schema string
	annotations  *mcp.ToolAnnotations
	handler      mcp.ToolHandler
}

// counter mints an id per execution.
type counter struct{ n atomic.Int64 }

func (c *counter) creates(prefix string) mcp.ToolHandler {
	return func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		v := map[string]any{"id": fmt.Sprintf("%s_%d", prefix, c.n.Add(1))}
		return &mcp.CallToolResult{StructuredContent: v}, nil
	}
}

// serve starts an MCP server with the tools; capabilities, when set, replaces the
// initialize answer's (the SDK's types cannot say tools.idempotency). It returns the
// endpoint and every tools/call request body the server received.
func serve(t *testing.T, capabilities string, tools ...tool) (string, func() [][]byte) {
	return serveWith(t, capabilities, nil, tools...)
}

// serveWith is serve with onDelete called with the session id a client ends.
func serveWith(t *testing.T, capabilities string, onDelete func(session string), tools ...tool) (string, func() [][]byte) {
	t.Helper()
	server := mcp.NewServer(&mcp.Implementation{Name: "fixture", Version: "1"}, nil)
	for _, tl := range tools {
		server.AddTool(&mcp.Tool{Name: tl.name, InputSchema: json.RawMessage(tl.schema), Annotations: tl.annotations}, tl.handler)
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{JSONResponse: true})
	var mu sync.Mutex
	var calls [][]byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete && onDelete != nil {
			onDelete(r.Header.Get("Mcp-Session-Id"))
		}
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte(`"tools/call"`)) {
			mu.Lock()
			calls = append(calls, body)
			mu.Unlock()
		}
		if capabilities != "" && bytes.Contains(body, []byte(`"initialize"`)) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			out, _ := sjson.SetRawBytes(rec.Body.Bytes(), "result.capabilities", []byte(capabilities))
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.Header().Del("Content-Length")
			w.WriteHeader(rec.Code)
			w.Write(out)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp", func() [][]byte {
		mu.Lock()
		defer mu.Unlock()
		return append([][]byte(nil), calls...)
	}
}

func scanAll(t *testing.T, cfg *scan.Config) (*scan.Target, *scan.Report) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	target, err := scan.Enumerate(ctx, cfg)
	require.NoError(t, err)
	rep, err := scan.Run(ctx, cfg, target)
	require.NoError(t, err)
	return target, rep
}

func row(t *testing.T, rep *scan.Report, name string) scan.Row {
	t.Helper()
	for _, r := range rep.Rows {
		if r.Operation.Name == name {
			return r
		}
	}
	t.Fatalf("no row %s", name)
	return scan.Row{}
}

func verdicts(r scan.Row) []verdict.Verdict {
	var out []verdict.Verdict
	for _, c := range r.Cells {
		out = append(out, c.Verdict)
	}
	return out
}

// TestEnumerateCallsNothing: listing and planning is initialize and tools/list; no tool
// of the server is called.
func TestEnumerateCallsNothing(t *testing.T) {
	t.Parallel()
	box := toolbox.New(0)
	srv := httptest.NewServer(box.Handler())
	t.Cleanup(srv.Close)
	target, err := scan.Enumerate(context.Background(), &scan.Config{MCP: srv.URL + "/mcp"})
	require.NoError(t, err)
	require.Len(t, target.Operations, 7)
	require.Equal(t, "mcp-toolbox 1.0.0", target.Server)
	require.Zero(t, box.Calls(), "the server saw no tools/call")
}

// TestSafetyRules: what is probed, and what needs a flag.
func TestSafetyRules(t *testing.T) {
	t.Parallel()
	box := toolbox.New(0)
	srv := httptest.NewServer(box.Handler())
	t.Cleanup(srv.Close)
	plan := func(cfg scan.Config) map[string]string {
		cfg.MCP = srv.URL + "/mcp"
		target, err := scan.Enumerate(context.Background(), &cfg)
		require.NoError(t, err)
		out := map[string]string{}
		for _, op := range target.Operations {
			out[op.Name] = op.Skip
		}
		return out
	}
	def := plan(scan.Config{})
	require.Contains(t, def["delete_account"], "destructive (destructiveHint: true)")
	require.Contains(t, def["list_refunds"], "read-only (readOnlyHint: true): listed; probed with --include-readonly")
	require.Empty(t, def["refund"])

	got := plan(scan.Config{AllowDestructive: true, IncludeReadOnly: true, Exclude: []string{"send_*", "refund"}, Include: []string{"refund"}})
	require.Empty(t, got["delete_account"])
	require.Empty(t, got["list_refunds"])
	require.Contains(t, got["send_email"], "excluded (--exclude send_*)")
	require.Empty(t, got["refund"], "--include wins over --exclude")

	got = plan(scan.Config{Only: []string{"add_*"}, Include: []string{"delete_account"}})
	require.Empty(t, got["add_note"])
	require.Equal(t, "not selected (--only)", got["refund"])
	require.Equal(t, "not selected (--only)", got["delete_account"], "--include overrides the safety rules, not --only")

	_, err := scan.Enumerate(context.Background(), &scan.Config{MCP: srv.URL + "/mcp", Exclude: []string{"[a-"}})
	require.ErrorContains(t, err, `--exclude "[a-": not a glob`)

	// A destructive tool named by --include is called.
	_, rep := scanAll(t, &scan.Config{MCP: srv.URL + "/mcp", Only: []string{"delete_account"}, Include: []string{"delete_account"}})
	require.True(t, row(t, rep, "delete_account").Operation.Probed())
	require.Positive(t, box.Executions("delete_account"))
	require.Zero(t, box.Executions("refund"), "nothing else")
}

// TestUnreachableServer: a clear error, nothing else to do (the command exits 2).
func TestUnreachableServer(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close()
	_, err = scan.Enumerate(context.Background(), &scan.Config{MCP: "http://" + addr + "/mcp"})
	require.ErrorContains(t, err, "cannot scan http://"+addr+"/mcp: initialize")
	require.ErrorContains(t, err, "connection refused")

	_, err = scan.Enumerate(context.Background(), &scan.Config{MCP: "localhost:8080"})
	require.ErrorContains(t, err, `--mcp "localhost:8080": want the server's Streamable HTTP endpoint, an http(s) URL`)
	_, err = scan.Enumerate(context.Background(), &scan.Config{OpenAPI: "testdata/missing.yaml", BaseURL: "http://127.0.0.1:1"})
	require.ErrorContains(t, err, "--openapi testdata/missing.yaml")
}

// TestHangingToolDoesNotStopTheRest: a tool that never answers is UNKNOWN, saying so,
// after one call; the other tools are judged.
func TestHangingToolDoesNotStopTheRest(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	var once sync.Once
	var hangs atomic.Int64
	var hangSession atomic.Value
	var c counter
	// The scan ends the tool's session once its probes stopped: the tool hangs until then
	// (a server's DELETE waits for the session's calls).
	ended := func(session string) {
		if s, _ := hangSession.Load().(string); s != "" && s == session {
			once.Do(func() { close(release) })
		}
	}
	endpoint, _ := serveWith(t, "", ended,
		tool{name: "hang", schema: `{"type":"object"}`, handler: func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			hangs.Add(1)
			hangSession.Store(req.Session.ID())
			select {
			case <-release:
			case <-ctx.Done():
			case <-time.After(30 * time.Second):
			}
			return &mcp.CallToolResult{}, nil
		}},
		tool{name: "create", schema: `{"type":"object"}`, handler: c.creates("c")},
	)
	_, rep := scanAll(t, &scan.Config{MCP: endpoint, CallTimeout: 300 * time.Millisecond})
	hang := row(t, rep, "hang")
	require.Equal(t, []verdict.Verdict{verdict.NA, verdict.Unknown, verdict.Unknown, verdict.Unknown, verdict.Unknown}, verdicts(hang))
	require.Equal(t, "not probed further: the call was not answered (timed-out; --call-timeout 300ms)", hang.Cell(scan.CheckReplay).Evidence)
	require.EqualValues(t, 1, hangs.Load(), "one call that hangs is enough to stop")
	require.Equal(t, verdict.Fail, row(t, rep, "create").Cell(scan.CheckReplay).Verdict, "the rest goes on")
}

// TestUnreadableSchemaOthersGoOn: a tool whose schema cannot be read is not probed,
// named with the field; the others are.
func TestUnreadableSchemaOthersGoOn(t *testing.T) {
	t.Parallel()
	var c counter
	endpoint, calls := serve(t, "",
		tool{name: "broken", schema: `{"type":"object","properties":{"amount":{"type":5}}}`, handler: c.creates("b")},
		tool{name: "create", schema: `{"type":"object"}`, handler: c.creates("c")},
	)
	target, rep := scanAll(t, &scan.Config{MCP: endpoint})
	require.Contains(t, target.Operations[0].Problem, "its input schema cannot be read: inputSchema.properties.amount:")
	broken := row(t, rep, "broken")
	require.Equal(t, verdict.Unknown, broken.Cell(scan.CheckReplay).Verdict)
	require.Contains(t, broken.Cell(scan.CheckReplay).Evidence, "not probed: its input schema cannot be read: inputSchema.properties.amount")
	for _, body := range calls() {
		require.NotContains(t, string(body), `"broken"`, "never called")
	}
	require.Equal(t, verdict.Fail, row(t, rep, "create").Cell(scan.CheckReplay).Verdict)
}

// TestArgsTypos: an --args entry in error spoils its operation only, with a message
// that names the operation, the field and what was meant.
func TestArgsTypos(t *testing.T) {
	t.Parallel()
	box := toolbox.New(0)
	srv := httptest.NewServer(box.Handler())
	t.Cleanup(srv.Close)
	args, err := scan.ParseArgs("args.yaml", []byte(`operations:
  refnd:
    arguments: {order_id: a, amount: 1}
  refund:
    arguments: {ordr_id: a, amount: 1}
  create_invoice:
    argumets: {order_id: a, amount: 1}
  send_email:
    arguments: {to: x@example.com, subject: "{{.Entitty}}"}
  add_note:
    arguments: {account_id: a}
  set_status:
    change: {status: paused}
`))
	require.NoError(t, err)
	target, err := scan.Enumerate(context.Background(), &scan.Config{MCP: srv.URL + "/mcp", Args: args})
	require.NoError(t, err)
	problems := map[string]string{}
	for _, op := range target.Operations {
		problems[op.Name] = op.Problem
	}
	require.Equal(t, `--args args.yaml: line 4: operations.refund.arguments.ordr_id: refund takes no argument ordr_id (its arguments: amount and order_id); did you mean "order_id"?`, problems["refund"])
	require.Equal(t, "--args args.yaml: line 6: operations.create_invoice: line 7: field argumets is not one of arguments, path, query, headers, change, ledger, skip", problems["create_invoice"])
	require.Contains(t, problems["send_email"], "--args args.yaml: line 8: operations.send_email: arguments: template:")
	require.Contains(t, problems["send_email"], "(only {{.Entity}} is available)")
	require.Equal(t, "--args args.yaml: line 10: operations.add_note.arguments: lacks text, which add_note requires", problems["add_note"])
	require.Empty(t, problems["set_status"], "a change of the schema's arguments")
	require.Contains(t, target.Notes, `--args args.yaml: line 2: operations.refnd: no tool of the server is named refnd; did you mean "refund"?; the entry is ignored`)
	for _, op := range target.Operations {
		if op.Name == "set_status" {
			require.Equal(t, `status "active" → "paused"`, op.Request.Change.What)
		}
	}
	require.Zero(t, box.Calls())

	_, err = scan.ParseArgs("a.yaml", []byte("operation:\n  refund: {}\n"))
	require.EqualError(t, err, `--args a.yaml: line 1: unknown field "operation": the file has headers: and operations:`)
	_, err = scan.ParseArgs("a.yaml", []byte("operations: [refund]\n"))
	require.ErrorContains(t, err, "line 1: operations: want a mapping")
	a, err := scan.ParseArgs("a.yaml", []byte("operations:\n  refund:\n    ledger: {tool: list_refunds}\n"))
	require.NoError(t, err)
	require.EqualError(t, a.Entries[0].Err, "ledger.count: required: a gjson path to the count in the ledger's answer, e.g. result.structuredContent.count or data.#")
	a, err = scan.ParseArgs("a.yaml", []byte("operations:\n  refund:\n    headers: {Authorization: \"Bearer ${SCAN_TEST_NOT_SET_ANYWHERE}\"}\n"))
	require.NoError(t, err)
	require.ErrorContains(t, a.Entries[0].Err, "line 3: environment variable SCAN_TEST_NOT_SET_ANYWHERE is not set")
}

// TestSEP3182: a server that advertises tools.idempotency takes params.idempotencyKey for
// every tool that names no key of its own; the probes put the key there.
func TestSEP3182(t *testing.T) {
	t.Parallel()
	var c counter
	endpoint, calls := serve(t, `{"tools":{"idempotency":{}}}`,
		tool{name: "create", schema: `{"type":"object"}`, handler: c.creates("c")},
		tool{name: "own", schema: `{"type":"object","properties":{"request_token":{"type":"string","description":"makes the call idempotent"}}}`, handler: c.creates("o")},
	)
	target, rep := scanAll(t, &scan.Config{MCP: endpoint})
	require.True(t, target.Idempotency)
	require.Equal(t, "params.idempotencyKey (the server advertises tools.idempotency (SEP-3182))", row(t, rep, "create").Cell(scan.CheckKey).Evidence)
	require.Equal(t, "argument request_token (its description: \"makes the call idempotent\")", row(t, rep, "own").Cell(scan.CheckKey).Evidence)
	keyed := 0
	for _, body := range calls() {
		if strings.Contains(string(body), `"name":"create"`) {
			require.Contains(t, string(body), `"idempotencyKey":"`, "%s", body)
			keyed++
		}
	}
	require.Positive(t, keyed)
	// The fixture's SDK drops the field it does not know, so every repeat executes: the
	// scan sees the second execution.
	require.Equal(t, verdict.Fail, row(t, rep, "create").Cell(scan.CheckReplay).Verdict)
}

// TestInterrupted: a scan whose context is cancelled says so; what did not run is
// UNKNOWN, never a pass.
func TestInterrupted(t *testing.T) {
	t.Parallel()
	box := toolbox.New(0)
	srv := httptest.NewServer(box.Handler())
	t.Cleanup(srv.Close)
	cfg := &scan.Config{MCP: srv.URL + "/mcp"}
	target, err := scan.Enumerate(context.Background(), cfg)
	require.NoError(t, err)
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(fmt.Errorf("interrupt signal received"))
	rep, err := scan.Run(ctx, cfg, target)
	require.NoError(t, err)
	require.Equal(t, "interrupt signal received", rep.Interrupted)
	r := row(t, rep, "refund")
	require.Equal(t, verdict.Unknown, r.Cell(scan.CheckReplay).Verdict)
	require.Empty(t, rep.Headline.Safe)
}
