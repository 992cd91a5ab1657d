// Package mcpserver is the reference refund server as an MCP tool server: the fixture a
// harness author points an agent at when they have no server of their own
// (`idemproof serve --mcp`, over Streamable HTTP or stdio). Its `refund` tool is the
// reference's keyed POST /v1/refunds — the same contract done right, the same stores,
// test hooks and switchable flaws (package reference) — spoken as MCP:
//
//	tools/call refund {"order_id","amount","reason"?}  key in _meta.idempotency_key (KeyInMeta),
//	                                                   arguments.idempotency_key (KeyInArgument)
//	                                                   or params.idempotencyKey (KeyInParams, SEP-3182:
//	                                                   initialize then advertises capabilities.tools.idempotency)
//	  committed or replayed  → a result, structuredContent the refund (a replay is byte for byte)
//	  in flight              → JSON-RPC error -32010, data.retry_after_ms
//	  reused, other payload  → -32011        no key → -32012      an invalid key → -32013
//	  invalid arguments      → -32602 (not stored)
//	  declined (amount over 1,000,000) → a result with isError, stored and replayed
//	  the work failed (5xx)  → -32603 (not stored: the retry executes)
//	tools/call list_refunds {"order_id"}  the ledger: structuredContent {order_id, count, refunds}
//	                                      (readOnlyHint), and GET /v1/refunds?order_id= over HTTP
//
// Test hooks (Config.TestHooks): `_meta.test_delay` ("400ms": the work is held after the
// key is recorded) and `_meta.test_fail` ("503": the work fails after it started), over
// either transport; over HTTP the reference's X-Test-Delay and X-Test-Fail headers too.
//
// Why a façade over the HTTP reference rather than a second implementation: the keyed
// refund has one implementation whose every flaw the catalogue catches
// (reference/idempotency); the MCP server only translates. The tool call becomes an
// in-process request to it (no network), its key the Idempotency-Key header, and the
// reference's answer becomes the MCP answer the table above says.
//
// What is not: the memory store lives in the process, so over stdio a killed server
// forgets its keys (run it with a PostgreSQL store for keys that survive a restart).
package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/idemproof/idemproof/reference"
	"github.com/idemproof/idemproof/reference/idempotency"
)

// JSON-RPC error codes of the refusals (the -32000 to -32099 range is the server's own).
const (
	CodeInFlight   = -32010
	CodeMismatch   = -32011
	CodeMissingKey = -32012
	CodeInvalidKey = -32013
)

// Where the refund tool reads its key.
const (
	KeyInMeta     = "meta"     // params._meta.idempotency_key (MCP's place for request metadata)
	KeyInArgument = "argument" // params.arguments.idempotency_key (part of the tool's schema)
	KeyInParams   = "params"   // params.idempotencyKey (SEP-3182 "Request Idempotency", a sibling of arguments)
)

// KeyName is the key's member name in _meta or the arguments.
const KeyName = "idempotency_key"

// Test hooks in _meta.
const (
	MetaTestDelay = "test_delay"
	MetaTestFail  = "test_fail"
)

// Config configures the server.
type Config struct {
	// KeyIn is where the refund tool reads the key: KeyInMeta (default), KeyInArgument or
	// KeyInParams.
	KeyIn string
	// TestHooks switches the test hooks on (and the reference's, over HTTP).
	TestHooks bool
	// Reference are the reference server's options: its store, retention, lock timeout,
	// flaws (reference.WithFlaws), a vendor.
	Reference []reference.Option
}

// Server is the MCP tool server over a reference refund server.
type Server struct {
	cfg Config
	ref *reference.Server
	mcp *sdk.Server
}

// New starts the reference server the tools speak to. Close stops it.
func New(cfg Config) (*Server, error) {
	switch cfg.KeyIn {
	case "":
		cfg.KeyIn = KeyInMeta
	case KeyInMeta, KeyInArgument, KeyInParams:
	default:
		return nil, fmt.Errorf("mcp server: key in %q: want %s, %s or %s", cfg.KeyIn, KeyInMeta, KeyInArgument, KeyInParams)
	}
	opts := append([]reference.Option{reference.WithTestHooks(cfg.TestHooks)}, cfg.Reference...)
	ref, err := reference.New(opts...)
	if err != nil {
		return nil, fmt.Errorf("mcp server: %w", err)
	}
	s := &Server{cfg: cfg, ref: ref}
	s.mcp = sdk.NewServer(&sdk.Implementation{Name: "idemproof-refunds", Version: "1"}, nil)
	where := "_meta." + KeyName
	switch cfg.KeyIn {
	case KeyInArgument:
		where = "the argument " + KeyName
	case KeyInParams:
		where = "params.idempotencyKey (SEP-3182)"
		s.mcp.AddReceivingMiddleware(advertiseIdempotency)
	}
	s.mcp.AddTool(&sdk.Tool{
		Name:        "refund",
		Description: "Refund an order (amount in cents). Send an idempotency key in " + where + ", minted once per refund and re-sent on every retry: a retry never refunds twice.",
		InputSchema: refundSchema(cfg.KeyIn),
		Annotations: &sdk.ToolAnnotations{IdempotentHint: true, DestructiveHint: ptr(false)},
	}, s.refund)
	s.mcp.AddTool(&sdk.Tool{
		Name:        "list_refunds",
		Description: "The refunds of an order: the ledger.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"order_id":{"type":"string"}},"required":["order_id"]}`),
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true},
	}, s.listRefunds)
	return s, nil
}

func ptr[T any](v T) *T { return &v }

func refundSchema(keyIn string) json.RawMessage {
	props := `"order_id":{"type":"string"},"amount":{"type":"integer","minimum":1},"reason":{"type":"string"}`
	if keyIn == KeyInArgument {
		props += `,"` + KeyName + `":{"type":"string","maxLength":255}`
	}
	return json.RawMessage(`{"type":"object","properties":{` + props + `},"required":["order_id","amount"]}`)
}

// Close stops the reference server (and its memory store).
func (s *Server) Close() error { return s.ref.Close() }

// MCP is the go-sdk server, to serve over any transport. With KeyInParams it reads no key
// there: the SDK drops params.idempotencyKey before the tool sees it, and only Handler and
// ServeStdio lift it where the tool reads it.
func (s *Server) MCP() *sdk.Server { return s.mcp }

// Handler serves Streamable HTTP at /mcp, the ledger at GET /v1/refunds?order_id= and
// GET /healthz.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	var endpoint http.Handler = sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.mcp },
		&sdk.StreamableHTTPOptions{SessionTimeout: 5 * time.Minute})
	if s.cfg.KeyIn == KeyInParams {
		endpoint = liftKeyOverHTTP(endpoint)
	}
	mux.Handle("/mcp", endpoint)
	mux.Handle("GET /v1/refunds", s.ref)
	mux.Handle("GET /healthz", s.ref)
	return mux
}

// ServeStdio serves one client over stdin and stdout until stdin ends or ctx is done.
func (s *Server) ServeStdio(ctx context.Context, stdin io.Reader, stdout io.Writer) error {
	var t sdk.Transport = &sdk.IOTransport{Reader: io.NopCloser(stdin), Writer: nopCloser{stdout}}
	if s.cfg.KeyIn == KeyInParams {
		t = liftingTransport{t}
	}
	err := s.mcp.Run(ctx, t)
	if errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

func (s *Server) refund(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	args := req.Params.Arguments
	if len(args) == 0 || !gjson.ValidBytes(args) || !gjson.ParseBytes(args).IsObject() {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "the arguments must be an object: {order_id, amount, reason}"}
	}
	header := http.Header{"Content-Type": {"application/json"}}
	var key gjson.Result
	switch s.cfg.KeyIn {
	case KeyInArgument:
		key = gjson.GetBytes(args, KeyName)
		// The key is no part of the refund: the reference fingerprints what is left.
		if stripped, err := sjson.DeleteBytes(args, KeyName); err == nil {
			args = stripped
		}
	case KeyInParams:
		key = metaValue(req.Params.Meta, liftedKey)
	default:
		key = metaValue(req.Params.Meta, KeyName)
	}
	switch {
	case !key.Exists():
	case key.Type != gjson.String:
		return nil, &jsonrpc.Error{Code: CodeInvalidKey, Message: "the idempotency key must be a string"}
	default:
		header[idempotency.HeaderKey] = []string{key.Str}
	}
	if s.cfg.TestHooks {
		s.hooks(req, header)
	}
	status, h, body := s.call(ctx, http.MethodPost, "/v1/refunds", header, args)
	return answer(status, h, body)
}

// metaValue is the _meta member name as JSON; it does not exist when the member does not.
func metaValue(meta sdk.Meta, name string) gjson.Result {
	v, ok := meta[name]
	if !ok {
		return gjson.Result{}
	}
	raw, _ := json.Marshal(v)
	return gjson.ParseBytes(raw)
}

// hooks carries the test hooks of _meta (and, over HTTP, the request's own) to the
// reference.
func (s *Server) hooks(req *sdk.CallToolRequest, header http.Header) {
	if req.Extra != nil {
		for _, name := range []string{reference.HeaderTestDelay, reference.HeaderTestFail} {
			if v := req.Extra.Header.Get(name); v != "" {
				header.Set(name, v)
			}
		}
	}
	for meta, name := range map[string]string{MetaTestDelay: reference.HeaderTestDelay, MetaTestFail: reference.HeaderTestFail} {
		if v, ok := req.Params.Meta[meta]; ok {
			header.Set(name, fmt.Sprint(v))
		}
	}
}

// call makes an in-process request to the reference server. The work is not cancelled
// with the tool call: a refund that started is a refund made, whether or not its client
// is still there to hear about it.
func (s *Server) call(ctx context.Context, method, target string, header http.Header, body []byte) (int, http.Header, []byte) {
	r := httptest.NewRequestWithContext(context.WithoutCancel(ctx), method, target, bytes.NewReader(body))
	r.Header = header
	w := httptest.NewRecorder()
	s.ref.ServeHTTP(w, r)
	return w.Code, w.Header(), w.Body.Bytes()
}

// answer turns the reference's answer into the tool's.
func answer(status int, h http.Header, body []byte) (*sdk.CallToolResult, error) {
	problem := gjson.GetBytes(body, "type").String()
	detail := strings.TrimSpace(gjson.GetBytes(body, "title").String() + ": " + gjson.GetBytes(body, "detail").String())
	switch {
	case status >= 200 && status <= 299:
		// The reference replays its stored body byte for byte; the result carries those
		// bytes as they are, so a replay is the original, byte for byte.
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(body)}}, StructuredContent: json.RawMessage(body)}, nil
	case status == http.StatusConflict:
		wait := 1000
		if secs, err := strconv.Atoi(h.Get("Retry-After")); err == nil && secs > 0 {
			wait = secs * 1000
		}
		return nil, &jsonrpc.Error{Code: CodeInFlight, Message: "a request with this idempotency key is in progress; retry later (" + detail + ")",
			Data: json.RawMessage(fmt.Sprintf(`{"retry_after_ms":%d}`, wait))}
	case status == http.StatusUnprocessableEntity:
		return nil, &jsonrpc.Error{Code: CodeMismatch, Message: "idempotency key reused with other arguments (" + detail + ")"}
	case strings.HasSuffix(problem, "/idempotency-key-missing"):
		return nil, &jsonrpc.Error{Code: CodeMissingKey, Message: "an idempotency key is required (" + detail + ")"}
	case strings.HasSuffix(problem, "/idempotency-key-invalid"):
		return nil, &jsonrpc.Error{Code: CodeInvalidKey, Message: "the idempotency key is invalid (" + detail + ")"}
	case status == http.StatusPaymentRequired:
		// A business refusal the work made: stored under the key and replayed.
		return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "refund declined: " + string(body)}}}, nil
	case status >= 400 && status <= 499:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid refund (" + detail + ")"}
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("the refund failed (%d %s); nothing was refunded, retry", status, detail)}
}

func (s *Server) listRefunds(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	order := gjson.GetBytes(req.Params.Arguments, "order_id")
	if order.Type != gjson.String || order.Str == "" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "order_id is required"}
	}
	status, _, body := s.call(ctx, http.MethodGet, "/v1/refunds?order_id="+url.QueryEscape(order.Str), http.Header{}, nil)
	if status != http.StatusOK {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("the ledger could not be read (%d)", status)}
	}
	refunds := gjson.GetBytes(body, "data").Raw
	if refunds == "" {
		refunds = "[]"
	}
	out := fmt.Sprintf(`{"order_id":%q,"count":%d,"refunds":%s}`, order.Str, gjson.GetBytes(body, "count").Int(), refunds)
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: out}}, StructuredContent: json.RawMessage(out)}, nil
}
