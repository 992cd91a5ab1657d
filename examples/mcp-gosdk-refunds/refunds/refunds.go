// Package refunds is the mcp-gosdk-refunds server: an MCP tool server on the official Go SDK
// (github.com/modelcontextprotocol/go-sdk) whose `refund` tool is deduplicated by an
// idempotency key the client sends in the request's `_meta` — correctly:
//
//   - the key is recorded with a fingerprint of the arguments BEFORE the work starts;
//   - a repeat while the original still runs is refused with JSON-RPC error -32010
//     ("in progress", retry later), never answered with a made-up result;
//   - the same key with other arguments is refused with JSON-RPC error -32011;
//   - a repeat after the work replays the stored result, byte for byte;
//   - a key lives for the retention window (-retention, default 3s) after its work
//     completed; after that a repeat executes anew.
//
// Refusals that happen before any work are JSON-RPC errors too: no key -32012, a key that
// is empty, over 255 characters or holds a control character -32013, invalid arguments
// -32602 (none of them stored). A declined refund (an amount over 1,000,000) is a tool
// result with isError, stored and replayed like any result. Each refund takes 300–500 ms.
//
// With Config.StateFile the keys and the ledger live in a file (state.go), so they survive
// a restart of the server and are shared by every server process on the host: what a
// stdio server needs, since its host starts one per session and restarts it when it dies.
//
// Ledgers: the `list_refunds` tool (structuredContent.count) and GET /v1/refunds?order_id=.
// Test hooks on the tools/call HTTP request: X-Test-Delay (extra work time, e.g. 400ms),
// X-Test-Fail (the work fails with JSON-RPC -32603 after the key insert; nothing stored);
// over stdio, which has no headers, the same in _meta: test_delay and test_fail.
// The command in the directory above serves it over Streamable HTTP (go run . -addr
// 127.0.0.1:8091) or stdio (go run . -stdio -state FILE); other example modules start it
// in-process with NewApp.
package refunds

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// JSON-RPC error codes of the server's refusals (the -32000 to -32099 range is the
// implementation's own).
const (
	CodeInFlight   = -32010
	CodeMismatch   = -32011
	CodeMissingKey = -32012
	CodeInvalidKey = -32013
)

// MetaKey is the `_meta` field that carries the idempotency key.
const MetaKey = "idempotency_key"

const (
	maxKeyLength   = 255
	declineAbove   = 1_000_000
	maxTestDelay   = 10 * time.Second
	defaultWorkMin = 300 * time.Millisecond
	defaultWorkMax = 500 * time.Millisecond
)

// RefundArgs are the refund tool's arguments.
type RefundArgs struct {
	OrderID string  `json:"order_id" jsonschema:"the order to refund"`
	Amount  float64 `json:"amount" jsonschema:"the amount in whole cents"`
}

// Refund is one executed refund: the tool's structured result and a ledger row.
type Refund struct {
	RefundID string `json:"refund_id"`
	OrderID  string `json:"order_id"`
	Amount   int    `json:"amount"`
	Status   string `json:"status"`
}

// LedgerArgs select the refunds of one order.
type LedgerArgs struct {
	OrderID string `json:"order_id" jsonschema:"the order whose refunds to list"`
}

// Ledger lists the refunds of one order.
type Ledger struct {
	OrderID string   `json:"order_id"`
	Count   int      `json:"count"`
	Refunds []Refund `json:"refunds"`
}

// Config sets the server's retention window, how long one refund's work takes, and
// where its state lives.
type Config struct {
	Retention        time.Duration
	WorkMin, WorkMax time.Duration
	// StateFile, when set, keeps the keys and the ledger in this file (a lock file
	// beside it), so they survive a restart and are shared by every process; "" keeps
	// them in memory.
	StateFile string
	// Now is the clock of the retention window (nil: time.Now).
	Now func() time.Time
	// beforeWork, when set, runs after the key insert and before the work (tests hold
	// the work with it).
	beforeWork func()
}

// App is the refund server: the deduplicating key store and the ledger.
type App struct {
	cfg   Config
	store *store
}

// NewApp returns the server with cfg's zero fields at their defaults (3s retention,
// 300–500 ms of work).
func NewApp(cfg Config) *App {
	if cfg.Retention == 0 {
		cfg.Retention = 3 * time.Second
	}
	if cfg.WorkMin == 0 && cfg.WorkMax == 0 {
		cfg.WorkMin, cfg.WorkMax = defaultWorkMin, defaultWorkMax
	}
	cfg.WorkMax = max(cfg.WorkMax, cfg.WorkMin)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &App{cfg: cfg, store: newStore(cfg.StateFile)}
}

// Server is the MCP server with the refund and list_refunds tools, for any transport.
func (a *App) Server() *mcp.Server {
	server := mcp.NewServer(&mcp.Implementation{Name: "mcp-gosdk-refunds", Version: "1.0.0"}, nil)
	mcp.AddTool(server, &mcp.Tool{
		Name:        "refund",
		Description: "Refund an order. Send an idempotency key in _meta." + MetaKey + "; a retry with the same key never refunds twice.",
	}, a.refund)
	mcp.AddTool(server, &mcp.Tool{Name: "list_refunds", Description: "The refunds of an order.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, a.listRefunds)
	return server
}

// ServeStdio serves one client over this process's stdin and stdout until stdin ends.
func (a *App) ServeStdio(ctx context.Context) error {
	return a.Server().Run(ctx, &mcp.StdioTransport{})
}

// Handler serves the MCP endpoint at /mcp, the HTTP ledger at GET /v1/refunds and
// GET /healthz.
func (a *App) Handler() http.Handler {
	server := a.Server()
	mux := http.NewServeMux()
	// A session the client abandoned (a harness opens one per scenario) is closed after a
	// while, so the server's memory follows its live sessions.
	opts := &mcp.StreamableHTTPOptions{SessionTimeout: 5 * time.Minute}
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, opts))
	mux.HandleFunc("GET /v1/refunds", func(w http.ResponseWriter, r *http.Request) {
		l, err := a.ledger(r.URL.Query().Get("order_id"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(l)
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	return mux
}

func (a *App) refund(ctx context.Context, req *mcp.CallToolRequest, in RefundArgs) (*mcp.CallToolResult, Refund, error) {
	if in.OrderID == "" || in.Amount <= 0 || in.Amount != math.Trunc(in.Amount) || in.Amount > math.MaxInt32 {
		return nil, Refund{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "order_id is required and amount must be a positive whole number of cents"}
	}
	key, err := idempotencyKey(req.Params.Meta)
	if err != nil {
		return nil, Refund{}, err
	}
	e, state, err := a.begin(key, fingerprint(in))
	if err != nil {
		return nil, Refund{}, stateError(err)
	}
	switch state {
	case stateMismatch:
		return nil, Refund{}, &jsonrpc.Error{Code: CodeMismatch, Message: "idempotency key reused with other arguments"}
	case stateInFlight:
		return nil, Refund{}, &jsonrpc.Error{Code: CodeInFlight, Message: "a request with this idempotency key is in progress; retry later",
			Data: json.RawMessage(`{"retry_after_ms":500}`)}
	case stateReplay:
		return e.replay()
	}

	hooks := testHooks(req)
	if hooks.Get("X-Test-Fail") != "" {
		// Slow work that then fails is held too (X-Test-Delay with X-Test-Fail), so a
		// repeat can meet it in flight: race/in-flight-original-fails is timed from the
		// hold, and was UNKNOWN ("the slow hook did not hold the original") without it.
		time.Sleep(a.workTime(hooks))
		if err := a.abandon(key); err != nil {
			return nil, Refund{}, stateError(err)
		}
		return nil, Refund{}, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "injected failure (X-Test-Fail): nothing was refunded"}
	}
	if a.cfg.beforeWork != nil {
		a.cfg.beforeWork()
	}
	// The work is not cancelled with the request: a refund that started is a refund made,
	// whether or not its client is still there to hear about it.
	time.Sleep(a.workTime(hooks))
	var refund Refund
	declined := ""
	if in.Amount > declineAbove {
		declined = fmt.Sprintf("refund declined: %d exceeds the order total", int(in.Amount))
	} else if refund, err = a.record(in); err != nil {
		return nil, Refund{}, stateError(err)
	}
	if e, err = a.finish(key, refund, declined); err != nil {
		return nil, Refund{}, stateError(err)
	}
	return e.replay()
}

// testHooks are the hooks of a tool call: its HTTP request's headers, or over stdio the
// same names in _meta (test_delay, test_fail).
func testHooks(req *mcp.CallToolRequest) http.Header {
	h := http.Header{}
	if req.Extra != nil && req.Extra.Header != nil {
		h = req.Extra.Header.Clone()
	}
	for meta, name := range map[string]string{"test_delay": "X-Test-Delay", "test_fail": "X-Test-Fail"} {
		if v, ok := req.Params.Meta[meta]; ok {
			h.Set(name, fmt.Sprint(v))
		}
	}
	return h
}

func stateError(err error) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the refunds state is unavailable: " + err.Error()}
}

func (a *App) workTime(h http.Header) time.Duration {
	d := a.cfg.WorkMin
	if span := a.cfg.WorkMax - a.cfg.WorkMin; span > 0 {
		d += rand.N(span)
	}
	if extra, err := time.ParseDuration(h.Get("X-Test-Delay")); err == nil && extra > 0 {
		d += min(extra, maxTestDelay)
	}
	return d
}

func (a *App) record(in RefundArgs) (Refund, error) {
	var r Refund
	err := a.store.update(func(s *state) {
		s.Next++
		// A random part too: ids stay unique across servers that share no state file.
		r = Refund{RefundID: fmt.Sprintf("re_%06d_%04x", s.Next, rand.N(1<<16)), OrderID: in.OrderID, Amount: int(in.Amount), Status: "succeeded"}
		s.Refunds[in.OrderID] = append(s.Refunds[in.OrderID], r)
	})
	return r, err
}

func (a *App) ledger(orderID string) (Ledger, error) {
	var l Ledger
	err := a.store.update(func(s *state) {
		rs := append([]Refund{}, s.Refunds[orderID]...)
		l = Ledger{OrderID: orderID, Count: len(rs), Refunds: rs}
	})
	return l, err
}

func (a *App) listRefunds(_ context.Context, _ *mcp.CallToolRequest, in LedgerArgs) (*mcp.CallToolResult, Ledger, error) {
	l, err := a.ledger(in.OrderID)
	if err != nil {
		return nil, Ledger{}, stateError(err)
	}
	return nil, l, nil
}

// idempotencyKey reads and checks the key in _meta.
func idempotencyKey(meta mcp.Meta) (string, error) {
	raw, ok := meta[MetaKey]
	if !ok {
		return "", &jsonrpc.Error{Code: CodeMissingKey, Message: "an idempotency key is required in _meta." + MetaKey}
	}
	key, ok := raw.(string)
	switch {
	case !ok:
		return "", &jsonrpc.Error{Code: CodeInvalidKey, Message: "the idempotency key must be a string"}
	case key == "":
		return "", &jsonrpc.Error{Code: CodeInvalidKey, Message: "the idempotency key is empty"}
	case len(key) > maxKeyLength:
		return "", &jsonrpc.Error{Code: CodeInvalidKey, Message: fmt.Sprintf("the idempotency key is longer than %d characters", maxKeyLength)}
	case strings.ContainsFunc(key, unicode.IsControl):
		return "", &jsonrpc.Error{Code: CodeInvalidKey, Message: "the idempotency key holds a control character"}
	}
	return key, nil
}

// fingerprint identifies the request by its decoded arguments, so key order, whitespace
// and 4900 against 4900.0 are the same request.
func fingerprint(in RefundArgs) string {
	b, _ := json.Marshal(in)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
