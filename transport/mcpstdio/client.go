// Package mcpstdio is MCP over stdio: a server is a process, its stdin and stdout carry
// newline-delimited JSON-RPC, its stderr is its log (MCP specification 2025-11-25,
// "Transports: stdio" and "Lifecycle").
//
//	Start(command) ──spawn──> server process (its own process group)
//	    initialize ──stdin──>   <──stdout── result (or: not found, exited, garbage, silence)
//	    notifications/initialized
//	Call / CallTool / ListTools / SendRaw: one request, its answer line by id
//	Close: stdin closed, SIGTERM, SIGKILL, reaped
//
// Two parts. Client is a library for anything that speaks to a stdio server (the
// catalogue's transport, scanners): start a server by argv, environment and working
// directory, run the lifecycle, list and call tools, send a raw request and read its
// raw answer line. Transport is the catalogue's transport.Transport over it: every
// attempt a tools/call on the target's one connection, through the fault layer
// (faultproxy/stdio) when the runner gives one (Dial).
//
// What is guaranteed: a server that cannot be started, exits before it answered
// initialize, writes a line to stdout that is not a JSON-RPC message, or does not
// answer initialize within Options.StartTimeout is an error of Start (a *StartError
// with the server's stderr tail), and the process is stopped and reaped before Start
// returns — with its whole process group. A request the server never answers returns
// when its context ends. Answers are the raw lines: nothing is retried, decoded into
// other bytes, or skipped but notifications, the server's own requests (answered: ping
// with an empty result, anything else "method not found", since the client declares no
// capability) and lines that are not JSON-RPC (kept, bounded, for the error of the
// request that was waiting when they came).
//
// Why not the go-sdk's client: its CommandTransport signals only the process it started
// (the binary `go run` compiled would outlive it), keeps no stderr, and hands a caller
// decoded results and Go errors; the harness needs the raw line of each answer and must
// see a cut or missing one as such. The SDK's protocol types build and read the messages.
package mcpstdio

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"

	"github.com/idemproof/idemproof/faultproxy/stdio"
	"github.com/idemproof/idemproof/faultproxy/stdio/jsonl"
)

// Defaults.
const (
	DefaultProtocolVersion = "2025-11-25"
	DefaultStartTimeout    = 10 * time.Second
	// DefaultStopGrace is how long a server gets to exit after its stdin closed (and
	// again after SIGTERM) when a Client closes it.
	DefaultStopGrace = 2 * time.Second
)

// Conn is a connection to a server: its lines in both directions. Send carries
// attributes a fault layer's rules match on (a process ignores them); Done is closed
// when the server has exited, Exit says how (with its stderr's tail).
type Conn interface {
	io.ReadWriteCloser
	Send(line []byte, attrs map[string]string) error
	Done() <-chan struct{}
	Exit() string
}

// Options tune a Client.
type Options struct {
	// ProtocolVersion asked for in initialize (default DefaultProtocolVersion).
	ProtocolVersion string
	// StartTimeout bounds the start and the initialize handshake (default
	// DefaultStartTimeout).
	StartTimeout time.Duration
	// Stderr, when set, gets a copy of the server's stderr (Start only).
	Stderr io.Writer
	// StopGrace is the wait before SIGTERM and before SIGKILL at Close (Start only;
	// default DefaultStopGrace).
	StopGrace time.Duration
	// ClientName is the clientInfo name sent in initialize (default "idemproof").
	ClientName string
}

func (o Options) withDefaults() Options {
	if o.ProtocolVersion == "" {
		o.ProtocolVersion = DefaultProtocolVersion
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = DefaultStartTimeout
	}
	if o.StopGrace <= 0 {
		o.StopGrace = DefaultStopGrace
	}
	if o.ClientName == "" {
		o.ClientName = "idemproof"
	}
	return o
}

// StartError is a server that could not be brought to an initialized session.
type StartError struct {
	Command string // the command, as a shell would write it
	What    string // what went wrong: "not found", "exited before it answered initialize: exit status 2", …
	Stderr  string // the tail of its stderr
	Err     error
}

func (e *StartError) Error() string {
	msg := fmt.Sprintf("start the stdio server %s: %s", e.Command, e.What)
	if e.Stderr != "" {
		msg += "\n  its stderr (the last of it):\n    " + strings.ReplaceAll(e.Stderr, "\n", "\n    ")
	} else {
		msg += " (it wrote nothing to its stderr)"
	}
	return msg
}

func (e *StartError) Unwrap() error { return e.Err }

// Client is one initialized MCP session over a stdio connection.
type Client struct {
	conn Conn
	opts Options

	mu      sync.Mutex
	waiters map[string]chan []byte
	garbage []string // recent lines that were not JSON-RPC, at most maxGarbage
	junkN   int      // lines that were not JSON-RPC so far
	onJunk  func()   // called at such a line (during the handshake)
	ids     atomic.Int64

	done    chan struct{} // the server's output ended
	endOnce sync.Once

	// ProtocolVersion is the version the server answered with; Result is its initialize
	// result, Raw as written (it may carry capabilities the SDK's types do not know).
	ProtocolVersion string
	Result          *sdk.InitializeResult
	Raw             json.RawMessage
}

const maxGarbage = 4

// Start starts the server and initializes a session with it. ctx bounds the start (with
// Options.StartTimeout); the server then runs until Close.
func Start(ctx context.Context, cmd stdio.Command, opts Options) (*Client, error) {
	opts = opts.withDefaults()
	proc, err := stdio.Start(cmd, opts.Stderr)
	if err != nil {
		what := err.Error()
		if errors.Is(err, stdio.ErrNotFound) {
			what = fmt.Sprintf("%q was not found (check mcp.command and the PATH; a relative path is taken from mcp.dir)", cmd.Args[0])
		}
		return nil, &StartError{Command: cmd.String(), What: what, Err: err}
	}
	c, err := Connect(ctx, &processConn{p: proc, grace: opts.StopGrace}, opts)
	if err != nil {
		var se *StartError
		if errors.As(err, &se) {
			se.Command = cmd.String()
		}
		return nil, err
	}
	return c, nil
}

// Connect initializes a session over conn (a fault layer's connection). On failure conn
// is closed.
func Connect(ctx context.Context, conn Conn, opts Options) (*Client, error) {
	opts = opts.withDefaults()
	c := &Client{conn: conn, opts: opts, waiters: map[string]chan []byte{}, done: make(chan struct{})}
	ctx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	defer cancel()
	// A line that is not JSON-RPC before the handshake is done ends it at once: the
	// server breaks the transport's one rule, and waiting would only hide why.
	c.onJunk = cancel
	go c.read()
	err := c.initialize(ctx)
	c.mu.Lock()
	c.onJunk = nil
	c.mu.Unlock()
	if err != nil {
		// A server that failed its start and still runs gets no grace to stop in: it is
		// killed. One that ended by itself is only reaped, so its exit status says how.
		if k, ok := conn.(interface{ Kill() }); ok && !errors.Is(err, ErrServerExited) {
			k.Kill()
		}
		conn.Close()
		<-c.done
		return nil, c.startError(ctx, err)
	}
	return c, nil
}

func (c *Client) startError(ctx context.Context, err error) *StartError {
	se := &StartError{Command: "(connection)", Err: err}
	exit := c.conn.Exit()
	c.mu.Lock()
	garbage := append([]string(nil), c.garbage...)
	c.mu.Unlock()
	switch {
	case len(garbage) > 0:
		se.What = fmt.Sprintf("it wrote a line to its stdout that is not a JSON-RPC message: %q. A stdio server must write nothing but MCP messages to stdout (logs go to stderr)", garbage[0])
	case errors.Is(err, ErrServerExited):
		se.What = "it ended before it answered initialize: " + strings.TrimPrefix(firstClause(exit), "the server ")
	case ctx.Err() != nil:
		se.What = fmt.Sprintf("it did not answer initialize within %s (it was stopped: the start timeout, mcp.start_timeout, bounds it)", c.opts.StartTimeout)
	default:
		se.What = err.Error()
	}
	if i := strings.Index(exit, "; its stderr: "); i >= 0 {
		se.Stderr = exit[i+len("; its stderr: "):]
	}
	return se
}

func firstClause(s string) string {
	if i := strings.Index(s, "; its stderr: "); i >= 0 {
		return s[:i]
	}
	return s
}

func (c *Client) initialize(ctx context.Context) error {
	params, err := json.Marshal(&sdk.InitializeParams{
		ProtocolVersion: c.opts.ProtocolVersion,
		ClientInfo:      &sdk.Implementation{Name: c.opts.ClientName, Version: "1"},
		Capabilities:    &sdk.ClientCapabilities{},
	})
	if err != nil {
		return err
	}
	line, err := c.Call(ctx, "initialize", params)
	if err != nil {
		return err
	}
	if e := gjson.GetBytes(line, "error"); e.Exists() {
		return fmt.Errorf("it refused initialize: %s", e.Raw)
	}
	raw := gjson.GetBytes(line, "result")
	if !raw.IsObject() {
		return fmt.Errorf("its initialize answer holds no result: %.200q", line)
	}
	c.Raw = json.RawMessage(raw.Raw)
	c.Result = &sdk.InitializeResult{}
	if err := json.Unmarshal(c.Raw, c.Result); err != nil {
		return fmt.Errorf("read its initialize result: %w", err)
	}
	c.ProtocolVersion = c.Result.ProtocolVersion
	return c.Notify("notifications/initialized", nil)
}

// read dispatches the server's lines until its output ends.
func (c *Client) read() {
	defer c.end()
	r := jsonl.NewReader(c.conn, 0)
	for {
		line, err := r.Next()
		if err != nil && !errors.Is(err, jsonl.ErrLineTooLong) {
			if len(line) > 0 {
				c.junk(line)
			}
			return
		}
		m := jsonl.Parse(line)
		switch {
		case err != nil, m.Kind == jsonl.Invalid:
			c.junk(line)
		case m.Kind == jsonl.Response && m.ID != nil:
			c.mu.Lock()
			ch, ok := c.waiters[string(m.ID)]
			delete(c.waiters, string(m.ID))
			c.mu.Unlock()
			if ok {
				ch <- line
			}
		case m.Kind == jsonl.Request:
			c.answerServer(m)
		}
	}
}

// answerServer answers a request of the server's: a ping with an empty result (MCP:
// the receiver MUST respond promptly), anything else with "method not found", as the
// client declared no capability that would make it serve requests.
func (c *Client) answerServer(m jsonl.Message) {
	body := `{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{}}`
	if m.Method != "ping" {
		body = `{"jsonrpc":"2.0","id":` + string(m.ID) + `,"error":{"code":-32601,"message":"method not found: the client serves no requests"}}`
	}
	_ = c.conn.Send([]byte(body), nil)
}

func (c *Client) junk(line []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.junkN++
	if len(c.garbage) < maxGarbage {
		c.garbage = append(c.garbage, clip(line))
	}
	if c.onJunk != nil {
		c.onJunk()
	}
}

func clip(b []byte) string {
	if len(b) > 120 {
		return strings.ToValidUTF8(string(b[:120]), "") + "…"
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

func (c *Client) end() {
	c.endOnce.Do(func() { close(c.done) })
}

// Done is closed once the server's output has ended (it exited, or was killed).
func (c *Client) Done() <-chan struct{} { return c.done }

// Exit says how the server ended, with its stderr's tail ("" while it runs).
func (c *Client) Exit() string { return c.conn.Exit() }

// junkSince is how many lines that were not JSON-RPC arrived so far, and the first
// kept one after n of them.
func (c *Client) junkSince(n int) (int, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.junkN > n && len(c.garbage) > 0 {
		return c.junkN, c.garbage[len(c.garbage)-1]
	}
	return c.junkN, ""
}

// ErrNoAnswer is a request whose answer did not come before its context ended.
var ErrNoAnswer = errors.New("no answer")

// ErrServerExited is a request whose server ended before it answered.
var ErrServerExited = errors.New("the server exited")

// Call sends a request (params a JSON value, nil for none) under an id of the client's
// and returns the answer line.
func (c *Client) Call(ctx context.Context, method string, params json.RawMessage) ([]byte, error) {
	body := `{"jsonrpc":"2.0","id":0,"method":` + strconv.Quote(method)
	if params != nil {
		body += `,"params":` + string(params)
	}
	line, _, err := c.SendRaw(ctx, []byte(body+"}"), nil)
	return line, err
}

// SendRaw sends a request as it is but for its id, which becomes one of the client's
// (attrs go to a fault layer's rules), and returns the answer line and the request line
// as sent. The error is ErrNoAnswer (the context ended first; a line that was not
// JSON-RPC meanwhile is named) or ErrServerExited.
func (c *Client) SendRaw(ctx context.Context, body []byte, attrs map[string]string) (answer, sent []byte, err error) {
	id := c.ids.Add(1)
	v := gjson.GetBytes(body, "id")
	if !v.Exists() || v.Index <= 0 {
		return nil, nil, errors.New("send: the request has no top-level id to replace")
	}
	sent = make([]byte, 0, len(body)+20)
	sent = append(append(append(sent, body[:v.Index]...), strconv.FormatInt(id, 10)...), body[v.Index+len(v.Raw):]...)
	if bytes.IndexByte(sent, '\n') >= 0 {
		return nil, sent, errors.New("send: a message must not contain a newline")
	}
	ch := make(chan []byte, 1)
	key := strconv.FormatInt(id, 10)
	c.mu.Lock()
	c.waiters[key] = ch
	junkBefore := c.junkN
	c.mu.Unlock()
	forget := func() {
		c.mu.Lock()
		delete(c.waiters, key)
		c.mu.Unlock()
	}
	select {
	case <-c.done:
		forget()
		return nil, sent, fmt.Errorf("%w: %s", ErrServerExited, c.conn.Exit())
	default:
	}
	if err := c.conn.Send(sent, attrs); err != nil {
		forget()
		return nil, sent, fmt.Errorf("%w: %s", ErrServerExited, c.conn.Exit())
	}
	select {
	case line := <-ch:
		return line, sent, nil
	case <-c.done:
		forget()
		select {
		case line := <-ch:
			return line, sent, nil
		default:
		}
		return nil, sent, fmt.Errorf("%w before it answered: %s", ErrServerExited, c.conn.Exit())
	case <-ctx.Done():
		forget()
		if _, junk := c.junkSince(junkBefore); junk != "" {
			return nil, sent, fmt.Errorf("%w: meanwhile the server wrote a line that is not a JSON-RPC message: %q", ErrNoAnswer, junk)
		}
		return nil, sent, fmt.Errorf("%w: %w", ErrNoAnswer, ctx.Err())
	}
}

// Notify sends a notification.
func (c *Client) Notify(method string, params json.RawMessage) error {
	body := `{"jsonrpc":"2.0","method":` + strconv.Quote(method)
	if params != nil {
		body += `,"params":` + string(params)
	}
	return c.conn.Send([]byte(body+"}"), nil)
}

// ListTools lists the server's tools, every page.
func (c *Client) ListTools(ctx context.Context) ([]*sdk.Tool, error) {
	var all []*sdk.Tool
	cursor := ""
	for range 1000 {
		params := json.RawMessage(`{}`)
		if cursor != "" {
			params, _ = json.Marshal(map[string]string{"cursor": cursor})
		}
		line, err := c.Call(ctx, "tools/list", params)
		if err != nil {
			return nil, fmt.Errorf("tools/list: %w", err)
		}
		if e := gjson.GetBytes(line, "error"); e.Exists() {
			return nil, fmt.Errorf("tools/list: the server refused: %s", e.Raw)
		}
		var res sdk.ListToolsResult
		if err := json.Unmarshal([]byte(gjson.GetBytes(line, "result").Raw), &res); err != nil {
			return nil, fmt.Errorf("tools/list: read the result: %w", err)
		}
		all = append(all, res.Tools...)
		if res.NextCursor == "" {
			return all, nil
		}
		cursor = res.NextCursor
	}
	return all, errors.New("tools/list: more than 1000 pages")
}

// CallTool calls a tool with its arguments (a JSON object) and _meta, and returns its
// result and the whole answer line. A JSON-RPC error is an error (*RPCError) with the
// line.
func (c *Client) CallTool(ctx context.Context, name string, args json.RawMessage, meta map[string]any) (*sdk.CallToolResult, []byte, error) {
	p := &sdk.CallToolParams{Name: name, Arguments: args}
	if len(meta) > 0 {
		p.Meta = meta
	}
	params, err := json.Marshal(p)
	if err != nil {
		return nil, nil, err
	}
	line, err := c.Call(ctx, "tools/call", params)
	if err != nil {
		return nil, nil, fmt.Errorf("tools/call %s: %w", name, err)
	}
	if e := gjson.GetBytes(line, "error"); e.Exists() {
		return nil, line, &RPCError{Code: e.Get("code").Int(), Message: e.Get("message").String(), Raw: e.Raw}
	}
	var res sdk.CallToolResult
	if err := json.Unmarshal([]byte(gjson.GetBytes(line, "result").Raw), &res); err != nil {
		return nil, line, fmt.Errorf("tools/call %s: read the result: %w", name, err)
	}
	return &res, line, nil
}

// RPCError is a JSON-RPC error answer.
type RPCError struct {
	Code    int64
	Message string
	Raw     string
}

func (e *RPCError) Error() string { return fmt.Sprintf("JSON-RPC error %d: %s", e.Code, e.Message) }

// Close ends the session: the connection is closed, and a server the client started is
// stopped as MCP asks (stdin closed, then SIGTERM, then SIGKILL) and reaped.
func (c *Client) Close() error {
	err := c.conn.Close()
	<-c.done
	return err
}

// processConn is a started server as a Conn: its stdout and stdin.
type processConn struct {
	p     *stdio.Process
	grace time.Duration
	w     sync.Mutex
}

func (pc *processConn) Read(b []byte) (int, error) { return pc.p.Stdout().Read(b) }

func (pc *processConn) Write(b []byte) (int, error) {
	pc.w.Lock()
	defer pc.w.Unlock()
	return pc.p.Stdin().Write(b)
}

func (pc *processConn) Send(line []byte, _ map[string]string) error {
	_, err := pc.Write(append(bytes.Clone(line), '\n'))
	return err
}

func (pc *processConn) Close() error {
	pc.p.Stop(pc.grace)
	return nil
}

func (pc *processConn) Kill() { pc.p.Kill() }

func (pc *processConn) Done() <-chan struct{} { return pc.p.Done() }

func (pc *processConn) Exit() string {
	if pc.p.Exit() == "" {
		return ""
	}
	how := "the server exited (" + pc.p.Exit() + ")"
	if pc.p.Killed() {
		how = "the server was killed"
	}
	if tail := pc.p.Stderr(); tail != "" {
		how += "; its stderr: " + tail
	}
	return how
}
