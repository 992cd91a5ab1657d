// Package toolbox is the mcp-toolbox server: an MCP tool server on the official Go SDK
// with seven tools that each behave differently under a retry, so that one
// `idemproof scan` shows every kind of verdict (README.md):
//
//	refund          keyed (_meta.idempotency_key, as its description says) and correct: the
//	                key is recorded with a fingerprint of the arguments before the work; a
//	                repeat replays the stored result, one in flight is refused (-32010),
//	                other arguments under the key are refused (-32011)
//	create_invoice  keyed (its idempotency_key argument) without a fingerprint: a repeat
//	                replays the stored result, and so does the key with other arguments
//	send_email      takes no key: every call sends another email
//	add_note        annotated idempotentHint: true, takes no key, and every call adds a note
//	set_status      annotated idempotentHint: true, takes no key, and is idempotent: it sets
//	                a status; its answer carries nothing minted per call
//	list_refunds    readOnlyHint: true: the refunds of an order (refund's ledger)
//	delete_account  destructiveHint: true
//
// Every tool that executes counts it (Executions), and the server counts every
// tools/call it receives (Calls), so tests can hold a scan to what it did.
package toolbox

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// JSON-RPC error codes of the keyed tools' refusals.
const (
	CodeInFlight   = -32010
	CodeMismatch   = -32011
	CodeMissingKey = -32012
)

// Server is the toolbox: its tools' state and counters.
type Server struct {
	work time.Duration

	mu       sync.Mutex
	keys     map[string]*entry // "tool key" → record
	refunds  map[string]int    // order id → refunds made
	statuses map[string]string
	execs    map[string]int
	next     int

	calls atomic.Int64
}

type entry struct {
	fingerprint string
	done        bool
	result      json.RawMessage
}

// New returns the toolbox; work is how long each tool's work takes (refund and
// create_invoice hold their key in flight that long).
func New(work time.Duration) *Server {
	return &Server{work: work, keys: map[string]*entry{}, refunds: map[string]int{}, statuses: map[string]string{}, execs: map[string]int{}}
}

// Executions is how many times a tool did its work.
func (s *Server) Executions(tool string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.execs[tool]
}

// Calls is how many tools/call requests the server received.
func (s *Server) Calls() int { return int(s.calls.Load()) }

func schema(s string) json.RawMessage { return json.RawMessage(s) }

func boolPtr(b bool) *bool { return &b }

// Handler serves the MCP endpoint at /mcp with the seven tools.
func (s *Server) Handler() http.Handler { return s.HandlerOf(7) }

// HandlerOf serves n tools: the seven, then the seven again with _2 after their names,
// _3, … — a wide server for a scan's benchmark.
func (s *Server) HandlerOf(n int) http.Handler {
	server := s.server(n)
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{SessionTimeout: 5 * time.Minute})
	mux := http.NewServeMux()
	mux.Handle("/mcp", s.counting(handler))
	return mux
}

// ServeStdio serves the seven tools to one client over in and out (newline-delimited
// JSON-RPC, MCP's stdio transport) until in ends or ctx is done.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	server := s.server(7)
	server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/call" {
				s.calls.Add(1)
			}
			return next(ctx, method, req)
		}
	})
	err := server.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(in), Writer: nopCloser{out}})
	if errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// server is the SDK server with n tools.
func (s *Server) server(n int) *mcp.Server {
	server := mcp.NewServer(&mcp.Implementation{Name: "mcp-toolbox", Version: "1.0.0"}, nil)
	for i := 0; i < n; i++ {
		suffix := ""
		if round := i/7 + 1; round > 1 {
			suffix = fmt.Sprintf("_%d", round)
		}
		t := s.tools(suffix)[i%7]
		server.AddTool(t.tool, t.handler)
	}
	return server
}

// tool is one tool and its handler.
type tool struct {
	tool    *mcp.Tool
	handler mcp.ToolHandler
}

// tools are the seven tools, their names ending with suffix.
func (s *Server) tools(suffix string) []tool {
	return []tool{
		{tool: &mcp.Tool{
			Name:        "refund" + suffix,
			Description: "Refund an order. Send an idempotency key in _meta.idempotency_key: a retry with the same key never refunds twice.",
			InputSchema: schema(`{"type":"object","required":["order_id","amount"],"properties":{
				"order_id":{"type":"string","description":"the order to refund","examples":["ord_1001"]},
				"amount":{"type":"integer","minimum":1,"description":"in cents","examples":[4900]}}}`),
			Annotations: &mcp.ToolAnnotations{DestructiveHint: boolPtr(false)},
		}, handler: s.keyed("refund"+suffix, true, true, func(args map[string]any) any {
			order, _ := args["order_id"].(string)
			s.refunds[order]++
			return map[string]any{"refund_id": s.id("re"), "order_id": order, "amount": args["amount"]}
		})},
		{tool: &mcp.Tool{
			Name:        "create_invoice" + suffix,
			Description: "Invoice an order.",
			InputSchema: schema(`{"type":"object","required":["order_id","amount","idempotency_key"],"properties":{
				"order_id":{"type":"string","examples":["ord_1001"]},
				"amount":{"type":"integer","minimum":1,"examples":[4900]},
				"idempotency_key":{"type":"string","description":"one per invoice, the same on a retry"}}}`),
			Annotations: &mcp.ToolAnnotations{DestructiveHint: boolPtr(false)},
		}, handler: s.keyed("create_invoice"+suffix, false, false, func(args map[string]any) any {
			return map[string]any{"invoice_id": s.id("in"), "order_id": args["order_id"], "amount": args["amount"]}
		})},
		{tool: &mcp.Tool{
			Name:        "send_email" + suffix,
			Description: "Send an email to a customer.",
			InputSchema: schema(`{"type":"object","required":["to","subject"],"properties":{
				"to":{"type":"string","format":"email"},
				"subject":{"type":"string","examples":["Your refund"]}}}`),
			Annotations: &mcp.ToolAnnotations{DestructiveHint: boolPtr(false)},
		}, handler: s.plain("send_email"+suffix, func(args map[string]any) any {
			return map[string]any{"message_id": s.id("msg"), "to": args["to"]}
		})},
		{tool: &mcp.Tool{
			Name:        "add_note" + suffix,
			Description: "Add a note to an account.",
			InputSchema: schema(`{"type":"object","required":["account_id","text"],"properties":{
				"account_id":{"type":"string","examples":["acct_1"]},
				"text":{"type":"string","examples":["called the customer"]}}}`),
			Annotations: &mcp.ToolAnnotations{IdempotentHint: true, DestructiveHint: boolPtr(false)},
		}, handler: s.plain("add_note"+suffix, func(args map[string]any) any {
			return map[string]any{"note_id": s.id("note"), "account_id": args["account_id"], "text": args["text"]}
		})},
		{tool: &mcp.Tool{
			Name:        "set_status" + suffix,
			Description: "Set an account's status.",
			InputSchema: schema(`{"type":"object","required":["account_id","status"],"properties":{
				"account_id":{"type":"string","examples":["acct_1"]},
				"status":{"type":"string","enum":["active","paused"]}}}`),
			Annotations: &mcp.ToolAnnotations{IdempotentHint: true, DestructiveHint: boolPtr(false)},
		}, handler: s.plain("set_status"+suffix, func(args map[string]any) any {
			account, _ := args["account_id"].(string)
			status, _ := args["status"].(string)
			s.statuses[account] = status
			return map[string]any{"account_id": account, "status": status}
		})},
		{tool: &mcp.Tool{
			Name:        "list_refunds" + suffix,
			Description: "The refunds of an order.",
			InputSchema: schema(`{"type":"object","required":["order_id"],"properties":{"order_id":{"type":"string","examples":["ord_1001"]}}}`),
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
		}, handler: func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			args, err := arguments(req)
			if err != nil {
				return nil, err
			}
			order, _ := args["order_id"].(string)
			s.mu.Lock()
			n := s.refunds[order]
			s.mu.Unlock()
			return result(map[string]any{"order_id": order, "count": n}), nil
		}},
		{tool: &mcp.Tool{
			Name:        "delete_account" + suffix,
			Description: "Close an account and erase its data.",
			InputSchema: schema(`{"type":"object","required":["account_id"],"properties":{"account_id":{"type":"string","examples":["acct_1"]}}}`),
			Annotations: &mcp.ToolAnnotations{DestructiveHint: boolPtr(true)},
		}, handler: s.plain("delete_account"+suffix, func(args map[string]any) any {
			return map[string]any{"deleted": args["account_id"]}
		})},
	}
}

// counting counts the tools/call requests that reach the server.
func (s *Server) counting(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
			if err == nil && bytes.Contains(body, []byte(`"tools/call"`)) {
				s.calls.Add(1)
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		next.ServeHTTP(w, r)
	})
}

// id mints a per-execution id (called with mu held).
func (s *Server) id(prefix string) string {
	s.next++
	return fmt.Sprintf("%s_%06d", prefix, s.next)
}

func arguments(req *mcp.CallToolRequest) (map[string]any, error) {
	args := map[string]any{}
	if len(req.Params.Arguments) > 0 {
		if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "arguments must be a JSON object"}
		}
	}
	return args, nil
}

func result(v any) *mcp.CallToolResult {
	text, _ := json.Marshal(v)
	return &mcp.CallToolResult{StructuredContent: v, Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}}
}

// plain is a tool without a key: every call does the work.
func (s *Server) plain(tool string, work func(map[string]any) any) mcp.ToolHandler {
	return func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args, err := arguments(req)
		if err != nil {
			return nil, err
		}
		time.Sleep(s.work)
		s.mu.Lock()
		defer s.mu.Unlock()
		s.execs[tool]++
		return result(work(args)), nil
	}
}

// keyed is a tool deduplicated by a key: from _meta.idempotency_key (inMeta: refund) or
// its idempotency_key argument (create_invoice). With fingerprint, the key is bound to
// the arguments it came with; without, any arguments under a known key get its stored
// result.
func (s *Server) keyed(tool string, inMeta, fingerprint bool, work func(map[string]any) any) mcp.ToolHandler {
	return func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args, err := arguments(req)
		if err != nil {
			return nil, err
		}
		key, _ := args["idempotency_key"].(string)
		delete(args, "idempotency_key")
		if k, ok := req.Params.Meta["idempotency_key"].(string); ok && inMeta {
			key = k
		}
		if strings.TrimSpace(key) == "" {
			return nil, &jsonrpc.Error{Code: CodeMissingKey, Message: "an idempotency key is required"}
		}
		canon, _ := json.Marshal(args) // map keys sorted: the same arguments, the same bytes
		sum := sha256.Sum256(canon)
		fp := hex.EncodeToString(sum[:])

		s.mu.Lock()
		e, seen := s.keys[tool+" "+key]
		switch {
		case seen && fingerprint && e.fingerprint != fp:
			s.mu.Unlock()
			return nil, &jsonrpc.Error{Code: CodeMismatch, Message: "idempotency key reused with other arguments"}
		case seen && !e.done:
			s.mu.Unlock()
			return nil, &jsonrpc.Error{Code: CodeInFlight, Message: "a request with this key is in progress; retry later", Data: json.RawMessage(`{"retry_after_ms":50}`)}
		case seen:
			stored := e.result
			s.mu.Unlock()
			return storedResult(stored), nil
		}
		e = &entry{fingerprint: fp}
		s.keys[tool+" "+key] = e
		s.mu.Unlock()

		time.Sleep(s.work)
		s.mu.Lock()
		defer s.mu.Unlock()
		s.execs[tool]++
		out, _ := json.Marshal(work(args))
		e.result, e.done = out, true
		return storedResult(out), nil
	}
}

// storedResult answers with a stored result, byte for byte the same every time.
func storedResult(stored json.RawMessage) *mcp.CallToolResult {
	return &mcp.CallToolResult{StructuredContent: stored, Content: []mcp.Content{&mcp.TextContent{Text: string(stored)}}}
}
