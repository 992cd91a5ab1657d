// Command mcp-mark3labs-refunds is an MCP tool server on github.com/mark3labs/mcp-go
// (its Streamable HTTP server at /mcp) whose `refund` tool takes an idempotency key as a
// tool argument, `idempotency_key`, and deduplicates it NAIVELY, the way a hurried team
// would:
//
//	if res, ok := cache[key]; ok { return res }     // a repeat after the work: the old result
//	res := doRefund(args)                           // the work (300–500 ms)
//	if prior, ok := cache[key]; ok { return prior } // looked up again AFTER the work:
//	cache[key] = res                                //   "whoever finished first answers"
//
// Nothing marks the key before the work, so concurrent repeats all execute — and all get
// the same answer, so only the ledger shows the duplicate. The cache knows nothing of the
// arguments, so another payload under the key gets the original's result; it caches
// whatever the tool answered, a refused invalid request included. A sequential retry
// does replay, which is why such code passes a happy-path test. README.md names the
// scenarios these defects break.
//
// Its state is in memory: over stdio (-stdio), a server process that dies takes every
// key with it, and the restarted one refunds a retry again — whatever the team's
// stdio-profile.yaml promises (expect.durable_keys).
//
// Ledgers: the `list_refunds` tool (structuredContent.count) and GET /v1/refunds?order_id=.
// Test hooks on the tools/call HTTP request: X-Test-Delay (extra work time, e.g. 400ms),
// X-Test-Fail (the tool fails with JSON-RPC -32603; nothing cached); over stdio the same
// in _meta (test_delay, test_fail).
//
//	go run . -addr 127.0.0.1:8092            # then idemproof check --profile profile.yaml
//	go run . -stdio                          # then idemproof check --profile stdio-profile.yaml
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

const (
	declineAbove   = 1_000_000
	maxTestDelay   = 10 * time.Second
	defaultWorkMin = 300 * time.Millisecond
	defaultWorkMax = 500 * time.Millisecond
)

// Refund is one executed refund: the tool's structured result and a ledger row.
type Refund struct {
	RefundID string `json:"refund_id"`
	OrderID  string `json:"order_id"`
	Amount   int    `json:"amount"`
	Status   string `json:"status"`
}

// Ledger lists the refunds of one order.
type Ledger struct {
	OrderID string   `json:"order_id"`
	Count   int      `json:"count"`
	Refunds []Refund `json:"refunds"`
}

// Config sets how long a cached result lives and how long one refund's work takes.
type Config struct {
	Retention        time.Duration
	WorkMin, WorkMax time.Duration
	// beforeWork, when set, runs before the work (tests line calls up with it).
	beforeWork func()
}

// App is the refund server: the result cache and the ledger.
type App struct {
	cfg Config

	mu      sync.Mutex
	cache   map[string]cachedResult
	refunds map[string][]Refund
	next    int
}

// answer is what the tool said: a refund, or an error text. The SDK decorates the
// result it sends, so each answer is built afresh from it.
type answer struct {
	refund  Refund
	errText string
}

func (a answer) result() *mcp.CallToolResult {
	if a.errText != "" {
		return mcp.NewToolResultError(a.errText)
	}
	return mcp.NewToolResultStructuredOnly(a.refund)
}

type cachedResult struct {
	answer answer
	stored time.Time
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
	return &App{cfg: cfg, cache: map[string]cachedResult{}, refunds: map[string][]Refund{}}
}

// MCPServer is the MCP server with the refund and list_refunds tools, for any transport
// (server.ServeStdio serves it over stdio).
func (a *App) MCPServer() *server.MCPServer {
	s := server.NewMCPServer("mcp-mark3labs-refunds", "1.0.0", server.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("refund",
		mcp.WithDescription("Refund an order. Pass an idempotency_key so that a retry does not refund twice."),
		mcp.WithString("order_id", mcp.Required(), mcp.Description("the order to refund")),
		mcp.WithNumber("amount", mcp.Required(), mcp.Description("the amount in cents")),
		mcp.WithString("idempotency_key", mcp.Description("a unique key per refund")),
	), a.refund)
	s.AddTool(mcp.NewTool("list_refunds",
		mcp.WithDescription("The refunds of an order."),
		mcp.WithString("order_id", mcp.Required()),
	), a.listRefunds)
	return s
}

// Handler serves the MCP endpoint at /mcp, the HTTP ledger at GET /v1/refunds and
// GET /healthz.
func (a *App) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/mcp", server.NewStreamableHTTPServer(a.MCPServer()))
	mux.HandleFunc("GET /v1/refunds", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(a.ledger(r.URL.Query().Get("order_id")))
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	return mux
}

func (a *App) refund(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	key := req.GetString("idempotency_key", "")
	if key != "" {
		if prior, ok := a.cached(key); ok {
			return prior.result(), nil
		}
	}
	if testHooks(req).Get("X-Test-Fail") != "" {
		return nil, errors.New("injected failure (X-Test-Fail): nothing was refunded")
	}
	ans := a.work(req)
	if key != "" {
		if prior, ok := a.remember(key, ans); ok {
			return prior.result(), nil
		}
	}
	return ans.result(), nil
}

// work validates and performs the refund; its answer is whatever the tool says.
func (a *App) work(req mcp.CallToolRequest) answer {
	orderID := req.GetString("order_id", "")
	amount := req.GetFloat("amount", 0)
	if orderID == "" || amount <= 0 || amount != float64(int(amount)) {
		return answer{errText: "invalid refund: order_id is required and amount must be a positive whole number of cents"}
	}
	if a.cfg.beforeWork != nil {
		a.cfg.beforeWork()
	}
	time.Sleep(a.workTime(testHooks(req)))
	if amount > declineAbove {
		return answer{errText: fmt.Sprintf("refund declined: %d exceeds the order total", int(amount))}
	}
	return answer{refund: a.record(orderID, int(amount))}
}

// testHooks are the hooks of a tool call: its HTTP request's headers, or over stdio the
// same names in _meta (test_delay, test_fail).
func testHooks(req mcp.CallToolRequest) http.Header {
	h := http.Header{}
	if req.Header != nil {
		h = req.Header.Clone()
	}
	if m := req.Params.Meta; m != nil {
		for meta, name := range map[string]string{"test_delay": "X-Test-Delay", "test_fail": "X-Test-Fail"} {
			if v, ok := m.AdditionalFields[meta]; ok {
				h.Set(name, fmt.Sprint(v))
			}
		}
	}
	return h
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

func (a *App) cached(key string) (answer, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	c, ok := a.cache[key]
	if !ok || time.Since(c.stored) >= a.cfg.Retention {
		return answer{}, false
	}
	return c.answer, true
}

// remember caches ans under key unless a fresh answer is already there, which it
// returns instead.
func (a *App) remember(key string, ans answer) (answer, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if c, ok := a.cache[key]; ok && time.Since(c.stored) < a.cfg.Retention {
		return c.answer, true
	}
	a.cache[key] = cachedResult{answer: ans, stored: time.Now()}
	return answer{}, false
}

func (a *App) record(orderID string, amount int) Refund {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.next++
	r := Refund{RefundID: fmt.Sprintf("re_%06d", a.next), OrderID: orderID, Amount: amount, Status: "succeeded"}
	a.refunds[orderID] = append(a.refunds[orderID], r)
	return r
}

func (a *App) ledger(orderID string) Ledger {
	a.mu.Lock()
	defer a.mu.Unlock()
	rs := append([]Refund{}, a.refunds[orderID]...)
	return Ledger{OrderID: orderID, Count: len(rs), Refunds: rs}
}

func (a *App) listRefunds(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return mcp.NewToolResultStructuredOnly(a.ledger(req.GetString("order_id", ""))), nil
}
