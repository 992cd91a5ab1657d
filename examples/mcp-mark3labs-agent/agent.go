// Command mcp-mark3labs-agent is the tool-calling side of an agent harness on
// mark3labs/mcp-go's client: it performs N `refund` tool calls against an MCP server —
// over stdio (it starts the server command, and starts it again when it died) or
// Streamable HTTP — and retries each one the way an agent's tool runner should:
//
//   - one idempotency key per tool call, minted before its first attempt, re-sent
//     unchanged on every retry (in the request's _meta), and kept in a state folder
//     (IDEMPROOF_STATE_DIR) so a restarted agent resumes the call under it;
//   - retried when its answer was lost (a timeout, a broken transport, a dead server),
//     on an internal error, and on an in-progress refusal (after a second); any other
//     refusal is final;
//   - when the attempts run out the outcome is "unknown", never "failed".
//
// mark3labs' client keeps the message of a JSON-RPC error whose code is the server's own
// (-32010 in progress, -32011 reused key), not the code: the loop tells an in-progress
// refusal by its message.
//
// The bad loops, one flag each: -key-per-attempt (a new key on every retry),
// -new-key-on-reconnect (the key lived with the broken session: after the server died,
// the call goes again under a new one), -other-arguments (the retry changes the
// arguments under the key), -failed-on-loss (a lost answer reported "failed", never
// retried). Under `idemproof client-check` it reads IDEMPROOF_MCP_COMMAND (a JSON argv)
// or IDEMPROOF_MCP_ENDPOINT, IDEMPROOF_MCP_TOOL, IDEMPROOF_STATE_DIR, and writes
// IDEMPROOF_OUTCOME_FILE.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/idemproof/idemproof/clientcheck/outcome"
	"github.com/idemproof/idemproof/clientcheck/pending"
)

// MetaKey is the _meta field the key travels in.
const MetaKey = "idempotency_key"

// Config is one run of the agent.
type Config struct {
	Endpoint       string   // the Streamable HTTP endpoint, or:
	Command        []string // the stdio server's command
	Tool           string   // the tool to call (default refund)
	Refunds        int      // how many refund tool calls
	OrderPrefix    string   // order ids are OrderPrefix1, OrderPrefix2, …
	Attempts       int      // attempts per tool call
	AttemptTimeout time.Duration
	StateDir       string    // pending keys and settled outcomes, across restarts ("": none)
	Log            io.Writer // one line per tool call; nil: none

	KeyPerAttempt, NewKeyOnReconnect, OtherArguments, FailedOnLoss bool // the bugs
}

// Run performs the tool calls one after the other.
func Run(ctx context.Context, cfg Config) ([]outcome.Line, error) {
	if cfg.Endpoint == "" && len(cfg.Command) == 0 {
		return nil, errors.New("no MCP server: set IDEMPROOF_MCP_COMMAND or IDEMPROOF_MCP_ENDPOINT (run me under idemproof client-check), or -endpoint")
	}
	if cfg.Tool == "" {
		cfg.Tool = "refund"
	}
	a := &agent{cfg: cfg}
	defer a.disconnect()
	var out []outcome.Line
	for i := 1; i <= cfg.Refunds && ctx.Err() == nil; i++ {
		o := a.refund(ctx, fmt.Sprintf("%s%d", cfg.OrderPrefix, i))
		if cfg.Log != nil {
			fmt.Fprintf(cfg.Log, "%s: %s (%s)\n", o.Operation, o.Outcome, o.Note)
		}
		out = append(out, o)
	}
	return out, ctx.Err()
}

type agent struct {
	cfg     Config
	session *client.Client // nil: connect before the next attempt
}

func (a *agent) refund(ctx context.Context, orderID string) outcome.Line {
	if o, ok := a.done(orderID); ok {
		return o // settled by an earlier run: a harness resumes, it does not redo
	}
	key, err := a.pending(orderID)
	if err != nil {
		return outcome.Line{Operation: orderID, Outcome: "unknown", Note: "state: " + err.Error()}
	}
	note := ""
	for attempt := 1; attempt <= a.cfg.Attempts; attempt++ {
		switch {
		case a.cfg.KeyPerAttempt && attempt > 1:
			key = newKey()
		case a.cfg.NewKeyOnReconnect && a.session == nil && attempt > 1:
			key = newKey()
		}
		amount := 4900
		if a.cfg.OtherArguments && attempt > 1 {
			amount = 5000
		}
		err := a.call(ctx, orderID, key, amount)
		if ctx.Err() != nil {
			return outcome.Line{Operation: orderID, Outcome: "unknown", Key: key, Note: "interrupted"}
		}
		note = fmt.Sprintf("attempt %d: %v", attempt, orNil(err))
		wait, final, result := judge(err)
		if !final && a.cfg.FailedOnLoss {
			final, result = true, "failed"
		}
		if final {
			o := outcome.Line{Operation: orderID, Outcome: result, Key: key, Note: note}
			a.settled(o)
			return o
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
		}
	}
	return outcome.Line{Operation: orderID, Outcome: "unknown", Key: key, Note: note + "; attempts exhausted"}
}

// call is one attempt: a session (a new one after a broken attempt: over stdio, the
// server started again), one tools/call.
func (a *agent) call(ctx context.Context, orderID, key string, amount int) error {
	if a.session == nil {
		if err := a.connect(ctx); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, a.cfg.AttemptTimeout)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = a.cfg.Tool
	req.Params.Arguments = map[string]any{"order_id": orderID, "amount": amount}
	req.Params.Meta = &mcp.Meta{AdditionalFields: map[string]any{MetaKey: key}}
	res, err := a.session.CallTool(ctx, req)
	if err != nil {
		var te *transport.Error
		if errors.As(err, &te) || errors.Is(err, context.DeadlineExceeded) {
			a.disconnect() // the transport failed: the next attempt starts a new session
		}
		return err
	}
	if res.IsError {
		return errToolRefused
	}
	return nil
}

func (a *agent) connect(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, a.cfg.AttemptTimeout+10*time.Second)
	defer cancel()
	var c *client.Client
	var err error
	if len(a.cfg.Command) > 0 {
		c, err = client.NewStdioMCPClient(a.cfg.Command[0], nil, a.cfg.Command[1:]...)
	} else {
		c, err = client.NewStreamableHttpClient(a.cfg.Endpoint)
		if err == nil {
			err = c.Start(ctx)
		}
	}
	if err != nil {
		return &transport.Error{Err: err}
	}
	init := mcp.InitializeRequest{}
	// The revision the servers of these examples (the go-sdk's) speak; the client's latest
	// (2026-07-28) is refused by them.
	init.Params.ProtocolVersion = "2025-11-25"
	init.Params.ClientInfo = mcp.Implementation{Name: "mcp-mark3labs-agent", Version: "1.0.0"}
	if _, err := c.Initialize(ctx, init); err != nil {
		c.Close()
		return &transport.Error{Err: err}
	}
	a.session = c
	return nil
}

func (a *agent) disconnect() {
	if a.session != nil {
		a.session.Close()
		a.session = nil
	}
}

var errToolRefused = errors.New("the tool refused (isError)")

// judge is the retry policy: the wait before the next attempt, or the final outcome.
func judge(err error) (time.Duration, bool, string) {
	var te *transport.Error
	switch {
	case err == nil:
		return 0, true, "ok"
	case errors.Is(err, errToolRefused):
		return 0, true, "failed"
	case errors.As(err, &te), errors.Is(err, context.DeadlineExceeded), errors.Is(err, mcp.ErrInternalError):
		return 100 * time.Millisecond, false, "" // it may have committed: same key again
	case strings.Contains(err.Error(), "in progress"):
		return time.Second, false, "" // -32010, known by its message
	}
	return 0, true, "failed" // a reused key, invalid arguments: never retried
}

func orNil(err error) string {
	if err == nil {
		return "result"
	}
	return err.Error()
}

// state is the agent's pending tool calls across its restarts (clientcheck/pending).
func (a *agent) state() pending.Dir { return pending.Open(a.cfg.StateDir) }

func (a *agent) pending(orderID string) (string, error) { return a.state().Key(orderID, newKey) }

func (a *agent) settled(o outcome.Line) {
	// A record that could not be kept redoes the call under its kept key: a replay.
	_ = a.state().Settle(o)
}

func (a *agent) done(orderID string) (outcome.Line, bool) { return a.state().Settled(orderID) }

func newKey() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
