// Command mcp-agent-client is the tool-calling side of an agent harness, on the official
// MCP Go SDK's client: it performs N `refund` tool calls against an MCP server and retries
// each one the way an agent's tool runner should —
//
//   - one idempotency key per tool call, minted before its first attempt and re-sent
//     unchanged on every retry (in the request's _meta, or as a tool argument);
//   - retried on a timeout, a lost or 5xx answer (the refund may have committed: the same
//     key!), JSON-RPC -32603, and -32010 "in progress" (after its retry_after_ms), with
//     exponential backoff; any other refusal is final, never retried;
//   - when the attempts run out the outcome is "unknown", never "failed";
//   - the key survives the agent too: with a state folder (IDEMPROOF_STATE_DIR) it is
//     written there before the first attempt and dropped at a final outcome, so an agent
//     restarted mid-call resumes the call under the same key.
//
// It speaks Streamable HTTP (an endpoint), or stdio: it starts the server command itself
// (the SDK's CommandTransport), and starts it again when it died.
//
// The bad loops, one flag each, are the bugs public agent projects have fixed by hand:
//
//	-key-per-attempt      the key is minted inside the retry loop: every retry is a new refund
//	-new-key-on-reconnect the key lives with the session: after a broken one (the stdio
//	                      server died, a reset), the call goes again under a new key
//	-other-arguments      the retry re-sends the call with other arguments under the key
//	-failed-on-loss       a lost answer is reported "failed" and not retried: the refund
//	                      may have committed, and the model is told it did not
//
// All run under `idemproof client-check` (the endpoint from IDEMPROOF_BASE_URL, plus
// IDEMPROOF_MCP_ENDPOINT, or over stdio the server command IDEMPROOF_MCP_COMMAND; the
// key's place from IDEMPROOF_KEY_FIELD; outcomes to IDEMPROOF_OUTCOME_FILE).
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/idemproof/idemproof/clientcheck/outcome"
	"github.com/idemproof/idemproof/clientcheck/pending"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// JSON-RPC error codes the retry policy knows.
const (
	codeInFlight      = -32010 // the original still runs: retry after retry_after_ms
	codeInternalError = -32603 // the server failed: retry, same key

	// The SDK client's own codes for failures below JSON-RPC (its internal jsonrpc2
	// package: ErrRejected, ErrUnknown, ErrClientClosing, ErrServerClosing).
	codeRejectedByTransport = -32005
	codeUnknown             = -32001
	codeClientClosing       = -32003
	codeServerClosing       = -32004
)

// Key placements: a key_field path of the tools/call request (client-check exports the
// profile's as IDEMPROOF_KEY_FIELD).
const (
	metaPrefix      = "params._meta."     // MCP's request metadata
	argumentsPrefix = "params.arguments." // a tool argument
	// DefaultKeyField is where the key travels unless told otherwise.
	DefaultKeyField = metaPrefix + "idempotency_key"
)

// Config is one run of the agent.
type Config struct {
	Endpoint      string   // the MCP Streamable HTTP endpoint, e.g. http://127.0.0.1:8091/mcp
	Command       []string // instead: the stdio server's command, started (again) by the agent
	Refunds       int      // how many refund tool calls (logical operations)
	OrderPrefix   string   // order ids are OrderPrefix1, OrderPrefix2, …
	KeyField      string   // params._meta.NAME or params.arguments.NAME
	Tool          string   // the tool to call, e.g. refund
	KeyPerAttempt bool     // the bug: a fresh key for every attempt
	// The other bugs: a new key after a broken session, other arguments on a retry, a
	// lost answer reported failed.
	NewKeyOnReconnect, OtherArguments, FailedOnLoss bool
	Attempts                                        int           // attempts per tool call
	AttemptTimeout                                  time.Duration // per attempt; keep it under client-check's hold
	HTTPClient                                      *http.Client  // nil: a client that never reuses a broken connection's request
	StateDir                                        string        // where pending calls' keys are kept across restarts ("": nowhere)
	Log                                             io.Writer     // one line per tool call; nil: none
}

// Outcome is the agent's view of one tool call, as client-check's outcome file wants it.
type Outcome struct {
	Operation string `json:"operation"`
	Outcome   string `json:"outcome"` // ok, failed, unknown
	Key       string `json:"key"`
	Note      string `json:"note,omitempty"`
}

// Run performs the tool calls one after the other and returns their outcomes.
func Run(ctx context.Context, cfg Config) ([]Outcome, error) {
	if cfg.Endpoint == "" && len(cfg.Command) == 0 {
		return nil, errors.New("no MCP endpoint: set IDEMPROOF_BASE_URL (run me under idemproof client-check) or -endpoint, or IDEMPROOF_MCP_COMMAND for a stdio server")
	}
	inMeta, name, err := keyPlacement(cfg.KeyField)
	if err != nil {
		return nil, err
	}
	if cfg.Tool == "" {
		cfg.Tool = "refund"
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	}
	a := &agent{cfg: cfg, keyInMeta: inMeta, keyName: name, client: mcp.NewClient(&mcp.Implementation{Name: "mcp-agent-client", Version: "1.0.0"}, nil)}
	defer a.disconnect()
	out := make([]Outcome, 0, cfg.Refunds)
	for i := 1; i <= cfg.Refunds; i++ {
		o := a.refund(ctx, fmt.Sprintf("%s%d", cfg.OrderPrefix, i))
		if cfg.Log != nil {
			fmt.Fprintf(cfg.Log, "%s: %s (%s)\n", o.Operation, o.Outcome, o.Note)
		}
		out = append(out, o)
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
	}
	return out, nil
}

type agent struct {
	cfg       Config
	keyInMeta bool   // the key goes in params._meta, else in the arguments
	keyName   string // its field name there
	client    *mcp.Client
	session   *mcp.ClientSession // nil: connect before the next attempt
}

// refund is one logical tool call with its retry loop.
func (a *agent) refund(ctx context.Context, orderID string) Outcome {
	if o, ok := a.done(orderID); ok {
		return o // settled by an earlier run of the agent: a harness resumes, it does not redo
	}
	key, err := a.pending(orderID) // minted once per tool call, before the first attempt
	if err != nil {
		return Outcome{Operation: orderID, Outcome: "unknown", Note: "state: " + err.Error()}
	}
	var note string
	for attempt := 1; attempt <= a.cfg.Attempts; attempt++ {
		switch {
		case a.cfg.KeyPerAttempt && attempt > 1:
			key = newKey() // the bug: every retry becomes a new refund
		case a.cfg.NewKeyOnReconnect && a.session == nil && attempt > 1:
			key = newKey() // the bug: the key was the broken session's
		}
		amount := 4900
		if a.cfg.OtherArguments && attempt > 1 {
			amount = 5000 // the bug: the retry is another call under the same key
		}
		res, err := a.call(ctx, orderID, key, amount)
		if ctx.Err() != nil {
			// Stopped mid-call: the call stays pending, its key kept for the next run.
			return Outcome{Operation: orderID, Outcome: "unknown", Key: key, Note: "interrupted"}
		}
		wait, final, outcome := a.judge(res, err, attempt)
		note = fmt.Sprintf("attempt %d: %s", attempt, describe(res, err))
		if !final && a.cfg.FailedOnLoss {
			final, outcome = true, "failed" // the bug: a lost answer is not a failure
		}
		if final {
			o := Outcome{Operation: orderID, Outcome: outcome, Key: key, Note: note}
			a.settled(o)
			return o
		}
		if attempt < a.cfg.Attempts {
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				return Outcome{Operation: orderID, Outcome: "unknown", Key: key, Note: note + "; interrupted"}
			}
		}
	}
	// The refund may have committed on any attempt: never "failed".
	return Outcome{Operation: orderID, Outcome: "unknown", Key: key, Note: note + "; attempts exhausted"}
}

// call is one attempt: a session (a new one after a broken attempt: over stdio, the
// server started again), one tools/call.
func (a *agent) call(ctx context.Context, orderID, key string, amount int) (*mcp.CallToolResult, error) {
	if a.session == nil {
		// Starting a stdio server takes its start's time, not the attempt's.
		cctx, cancel := context.WithTimeout(ctx, a.cfg.AttemptTimeout+10*time.Second)
		cs, err := a.client.Connect(cctx, a.transport(), nil)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("connect: %w", err)
		}
		a.session = cs
	}
	ctx, cancel := context.WithTimeout(ctx, a.cfg.AttemptTimeout)
	defer cancel()
	args := map[string]any{"order_id": orderID, "amount": amount}
	params := &mcp.CallToolParams{Name: a.cfg.Tool, Arguments: args}
	if a.keyInMeta {
		params.Meta = mcp.Meta{a.keyName: key}
	} else {
		args[a.keyName] = key
	}
	res, err := a.session.CallTool(ctx, params)
	if err != nil && rpcError(err) == nil {
		a.disconnect() // the transport failed: the next attempt starts a new session
	}
	return res, err
}

// transport is how a session reaches the server: the stdio command, started anew, or
// the Streamable HTTP endpoint.
func (a *agent) transport() mcp.Transport {
	if len(a.cfg.Command) > 0 {
		return &mcp.CommandTransport{Command: exec.Command(a.cfg.Command[0], a.cfg.Command[1:]...), TerminateDuration: time.Second}
	}
	return &mcp.StreamableClientTransport{
		Endpoint:             a.cfg.Endpoint,
		HTTPClient:           a.cfg.HTTPClient,
		DisableStandaloneSSE: true,
		MaxRetries:           -1, // this loop is the one retry policy
	}
}

func (a *agent) disconnect() {
	if a.session != nil {
		a.session.Close()
		a.session = nil
	}
}

// judge is the retry policy: how long to wait before the next attempt, or the final
// outcome.
func (a *agent) judge(res *mcp.CallToolResult, err error, attempt int) (wait time.Duration, final bool, outcome string) {
	backoff := min(50*time.Millisecond<<(attempt-1), time.Second)
	if err == nil {
		if res.IsError {
			return 0, true, "failed" // the tool refused (e.g. declined): a definite answer
		}
		return 0, true, "ok"
	}
	we := rpcError(err)
	switch {
	case we == nil:
		return backoff, false, "" // timeout, reset, 5xx, closed: it may have committed
	case we.Code == codeInFlight:
		var data struct {
			RetryAfterMillis int `json:"retry_after_ms"`
		}
		if json.Unmarshal(we.Data, &data) == nil && data.RetryAfterMillis > 0 {
			return time.Duration(data.RetryAfterMillis) * time.Millisecond, false, ""
		}
		return backoff, false, ""
	case we.Code == codeInternalError:
		return backoff, false, ""
	}
	return 0, true, "failed" // another refusal (a reused key, invalid arguments): never retried
}

// rpcError is the JSON-RPC error the server answered, or nil when the attempt failed
// below JSON-RPC. The SDK's client reports its own transport failures (a 5xx, a reset, a
// closed connection) as JSON-RPC errors too, with codes of its own: those are not answers.
// keyPlacement reads a key_field path: whether it is in _meta, and the field's name.
func keyPlacement(field string) (inMeta bool, name string, err error) {
	for _, p := range []string{metaPrefix, argumentsPrefix} {
		if rest, ok := strings.CutPrefix(field, p); ok && rest != "" && !strings.Contains(rest, ".") {
			return p == metaPrefix, rest, nil
		}
	}
	return false, "", fmt.Errorf("key field %q: want %sNAME or %sNAME (the SDK's client has no other place for it)", field, metaPrefix, argumentsPrefix)
}

func rpcError(err error) *jsonrpc.Error {
	var we *jsonrpc.Error
	if !errors.As(err, &we) {
		return nil
	}
	switch we.Code {
	case codeRejectedByTransport, codeUnknown, codeClientClosing, codeServerClosing:
		return nil
	}
	return we
}

func describe(res *mcp.CallToolResult, err error) string {
	switch {
	case err != nil:
		return err.Error()
	case res.IsError:
		return "tool error"
	}
	return "result"
}

// state is the agent's pending tool calls across its restarts (clientcheck/pending).
func (a *agent) state() pending.Dir { return pending.Open(a.cfg.StateDir) }

func (a *agent) pending(orderID string) (string, error) { return a.state().Key(orderID, newKey) }

func (a *agent) settled(o Outcome) {
	// A record that could not be kept redoes the call under its kept key: a replay.
	_ = a.state().Settle(outcome.Line{Operation: o.Operation, Outcome: o.Outcome, Key: o.Key, Note: o.Note})
}

func (a *agent) done(orderID string) (Outcome, bool) {
	l, ok := a.state().Settled(orderID)
	return Outcome{Operation: l.Operation, Outcome: l.Outcome, Key: l.Key, Note: l.Note}, ok
}

// newKey is a random key: 128 bits, hex.
func newKey() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
