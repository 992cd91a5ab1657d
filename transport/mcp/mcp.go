// Package mcp is the MCP Streamable HTTP transport: each attempt is one JSON-RPC
// tools/call POST inside an MCP session, its answer the JSON-RPC response with the
// request's id, whether the server answers application/json or text/event-stream.
//
//	scenario run ──initialize──> server            (once per session: no key, no faults)
//	             ──notifications/initialized──>
//	attempt      ──tools/call (id N, key)──> faultproxy ──> server
//	             <── JSON, or an event stream: notifications and progress skipped,
//	                 the response with id N taken; cut before it = info
//	             ──GET, Last-Event-ID──> (only when the server closed the stream
//	                 after an event id, to be polled: the rest of the same answer)
//
// Sessions. The lifecycle of the MCP specification (2025-11-25, "Lifecycle" and
// "Transports: Streamable HTTP") is run by the harness itself: initialize, then
// notifications/initialized, then the Mcp-Session-Id the server assigned (when it
// assigned one) and the negotiated MCP-Protocol-Version header on every request, and a
// DELETE of the session when the scenario run ends. Every scenario run opens its own
// sessions — one per principal, shared by that principal's attempts, as one agent's
// retries share its connection to a server — so runs never see each other's sessions.
// With SessionPerAttempt every attempt opens a session of its own (an agent that
// reconnects before it retries).
//
// Where the key travels is the profile's business, not this package's: in a header, or at
// a key_field path of the request this package frames — params.arguments.<field> (a tool
// argument), params._meta.<field> (MCP's place for request metadata), or
// params.idempotencyKey (SEP-3182 "Request Idempotency", with the tools.idempotency
// capability a server advertises in initialize; Session.AdvertisesIdempotency reads it).
//
// The body an Answer carries is the JSON-RPC response without its id ({"result":…} or
// {"error":…}): a replay of a stored result echoes the new request's id, so the id is
// the one part that must differ between the original and its replay. Outcome rules' paths
// (result.isError, error.code) are relative to that response.
//
// Why the official go-sdk's client is not used for attempts: the harness must make every
// attempt as exactly one HTTP request through the fault proxy, see its raw answer (a
// status, a cut stream, a 200 carrying an error) and never have it retried or
// reconnected behind its back; the SDK client (StreamableClientTransport) reconnects
// streams, retries, and turns answers into Go errors. The one reconnection this package
// makes itself is the one the specification asks of every client: a stream the server
// closed cleanly after an event id is resumed with GET and Last-Event-ID (SEP-1699),
// which fetches the rest of the same answer and sends nothing again; a reset, a timeout
// or a stream cut mid-event is the attempt's unseen answer, never resumed. The SDK's
// protocol types (InitializeParams, CallToolParams, CallToolResult, jsonrpc.Request)
// build and read the messages. The ledger — a tool call with no faults in its way —
// does go through the SDK's client.
package mcp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"

	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/transport"
	"github.com/idemproof/idemproof/transport/contentcoding"
	"github.com/idemproof/idemproof/transport/sse"
)

// DefaultProtocolVersion is the protocol version the harness asks for in initialize: the
// latest revision with the initialize handshake and sessions.
const DefaultProtocolVersion = "2025-11-25"

// Header names of the Streamable HTTP transport.
const (
	HeaderSessionID       = "Mcp-Session-Id"
	HeaderProtocolVersion = "MCP-Protocol-Version"
)

// setupTimeout bounds each session set-up request.
const setupTimeout = 10 * time.Second

// Transport speaks MCP Streamable HTTP to one server. The zero value is ready to use.
type Transport struct {
	Tool       string             // the tools/call name when Frame is given none
	Client     *http.Client       // attempts and session set-up; nil: transport.NewAttemptClient(nil)
	Probe      *http.Client       // ledger reads; nil: a client with a 10 s timeout
	Classifier outcome.Classifier // nil: DefaultOutcomes() over outcome.Statuses{}
	// ProtocolVersion asked for in initialize; "" means DefaultProtocolVersion.
	ProtocolVersion string
	// SessionPerAttempt opens a new session for every attempt instead of one per
	// principal and scenario run.
	SessionPerAttempt bool
	// RequireIdempotency refuses a server whose initialize does not advertise
	// capabilities.tools.idempotency (SEP-3182).
	RequireIdempotency bool

	ids atomic.Int64
}

var _ transport.Transport = (*Transport)(nil)

func (t *Transport) client() *http.Client {
	if t.Client == nil {
		t.Client = transport.NewAttemptClient(nil)
	}
	return t.Client
}

func (t *Transport) classifier() outcome.Classifier {
	if t.Classifier == nil {
		return outcome.NewRules(DefaultOutcomes(nil), outcome.Statuses{})
	}
	return t.Classifier
}

func (t *Transport) version() string {
	if t.ProtocolVersion == "" {
		return DefaultProtocolVersion
	}
	return t.ProtocolVersion
}

// DefaultOutcomes are the rules every MCP profile gets for the classes its own rules do
// not cover: a tool result with isError true is a business error (the tool ran and
// refused), any other result a success. A JSON-RPC error the profile does not name is
// then a client error (the success rule did not match it). covered lists the classes the
// profile's own rules cover.
func DefaultOutcomes(covered map[outcome.Class]bool) []outcome.ClassRules {
	isError := outcome.Rule{JSON: []outcome.JSONPredicate{{Path: "result.isError", Equals: true, IsEqual: true}}}
	exists := true
	result := outcome.Rule{JSON: []outcome.JSONPredicate{{Path: "result", Exists: &exists}}}
	var out []outcome.ClassRules
	if !covered[outcome.BusinessError] {
		out = append(out, outcome.ClassRules{Class: outcome.BusinessError, Rules: []outcome.Rule{isError}})
	}
	if !covered[outcome.Success] {
		out = append(out, outcome.ClassRules{Class: outcome.Success, Rules: []outcome.Rule{result}})
	}
	return out
}

// Frame implements transport.Transport: the tool's arguments (a JSON object) become a
// tools/call request, {"jsonrpc":"2.0","id":0,"method":"tools/call","params":{"name":
// TOOL,"arguments":ARGS}}; each attempt gets its own id when it is sent.
func (t *Transport) Frame(tool string, args []byte) ([]byte, error) {
	if tool == "" {
		tool = t.Tool
	}
	if tool == "" {
		return nil, errors.New("frame tools/call: no tool name")
	}
	if r := gjson.ParseBytes(args); !gjson.ValidBytes(args) || !r.IsObject() {
		return nil, fmt.Errorf("tool arguments must be a JSON object, got %.60q", args)
	}
	params, err := json.Marshal(&sdk.CallToolParams{Name: tool, Arguments: json.RawMessage(args)})
	if err != nil {
		return nil, fmt.Errorf("frame tools/call: %w", err)
	}
	return encodeRequest(float64(0), "tools/call", params)
}

// WithID is a framed request with its top-level id replaced by id, every other byte as
// the runner shaped it (key order, whitespace): each attempt of a step is the same
// request under an id of its own. Other transports of JSON-RPC (stdio) frame with it too.
func WithID(body []byte, id int64) ([]byte, error) { return withID(body, id) }

// ResponseBody is {"result":…} or {"error":…} of a JSON-RPC response, as written: the
// comparable form of an answer (without the id, which echoes each request's own).
func ResponseBody(msg []byte) []byte { return responseBody(msg) }

func encodeRequest(id any, method string, params json.RawMessage) ([]byte, error) {
	req := &jsonrpc.Request{Method: method, Params: params}
	if id != nil {
		rid, err := jsonrpc.MakeID(id)
		if err != nil {
			return nil, err
		}
		req.ID = rid
	}
	return jsonrpc.EncodeMessage(req)
}

// withID returns the framed request with its id replaced, leaving every other byte as
// the runner shaped it (key order, whitespace).
func withID(body []byte, id int64) ([]byte, error) {
	v := gjson.GetBytes(body, "id")
	if !v.Exists() || v.Index <= 0 {
		return nil, errors.New("the framed request has no top-level id")
	}
	out := make([]byte, 0, len(body)+20)
	out = append(out, body[:v.Index]...)
	out = strconv.AppendInt(out, id, 10)
	return append(out, body[v.Index+len(v.Raw):]...), nil
}

// Comparable implements transport.Transport: the JSON-RPC response (in a JSON body or an
// event stream, its content coding undone) without its id; nil when it does not decode,
// or is an event stream without it (the response came on a resumed stream, or never).
func (t *Transport) Comparable(body []byte, contentEncoding string) []byte {
	body, err := contentcoding.Decode(contentEncoding, body, transport.MaxResponseBody)
	if err != nil {
		return nil
	}
	if gjson.ValidBytes(body) {
		return responseBody(body)
	}
	r := sse.NewReader(bytes.NewReader(body))
	events := 0
	for range 10000 {
		ev, err := r.Next()
		if err != nil {
			break
		}
		events++
		if isResponse(ev.Data) {
			return responseBody(ev.Data)
		}
	}
	if events > 0 || r.LastEventID() != "" {
		// An event stream without the response: cut, or closed for the client to resume
		// elsewhere (SEP-1699). Its bytes are not the committed response.
		return nil
	}
	return body
}

func isResponse(msg []byte) bool {
	return gjson.ValidBytes(msg) && gjson.GetBytes(msg, "id").Exists() &&
		(gjson.GetBytes(msg, "result").Exists() || gjson.GetBytes(msg, "error").Exists())
}

// responseBody is {"result":…} or {"error":…} of a JSON-RPC response, as written.
func responseBody(msg []byte) []byte {
	for _, member := range []string{"result", "error"} {
		if v := gjson.GetBytes(msg, member); v.Exists() {
			return []byte(`{"` + member + `":` + v.Raw + `}`)
		}
	}
	return msg
}

// Open implements transport.Transport.
func (t *Transport) Open() transport.Sender {
	return &sender{t: t, sessions: map[string]*lazySession{}}
}

type sender struct {
	t        *Transport
	mu       sync.Mutex
	sessions map[string]*lazySession
}

type lazySession struct {
	once sync.Once
	s    *Session
	err  error
}

func (s *sender) session(ctx context.Context, req *transport.Request) (*Session, error) {
	s.mu.Lock()
	ls, ok := s.sessions[req.Session]
	if !ok {
		ls = &lazySession{}
		s.sessions[req.Session] = ls
	}
	s.mu.Unlock()
	ls.once.Do(func() { ls.s, ls.err = s.t.open(ctx, req.URL, req.SessionHeader) })
	return ls.s, ls.err
}

func (t *Transport) open(ctx context.Context, url string, header http.Header) (*Session, error) {
	sess, err := t.Initialize(ctx, url, header)
	if err != nil {
		return nil, err
	}
	if t.RequireIdempotency && !sess.AdvertisesIdempotency() {
		sess.Close(ctx)
		return nil, ErrNoIdempotencyCapability
	}
	return sess, nil
}

// ErrNoIdempotencyCapability is a session's initialize answered without the
// capabilities.tools.idempotency that Transport.RequireIdempotency asks for.
var ErrNoIdempotencyCapability = errors.New("initialize: the server does not advertise capabilities.tools.idempotency (SEP-3182), which the profile requires (mcp.require_idempotency_capability)")

// Prepare opens the session req would go on, without sending it (transport.Preparer):
// copies meant to arrive together then do not wait on their sessions' set-up first.
func (s *sender) Prepare(ctx context.Context, req *transport.Request) error {
	if s.t.SessionPerAttempt {
		return nil
	}
	_, err := s.session(ctx, req)
	return err
}

func (s *sender) Send(ctx context.Context, req *transport.Request, timeout time.Duration) (transport.Answer, error) {
	var sess *Session
	var err error
	if s.t.SessionPerAttempt {
		sess, err = s.t.open(ctx, req.URL, req.SessionHeader)
		if sess != nil {
			defer sess.Close(context.WithoutCancel(ctx))
		}
	} else {
		sess, err = s.session(ctx, req)
	}
	if err != nil {
		return transport.Answer{}, err
	}
	started := time.Now()
	a, err := s.post(ctx, sess, req, timeout)
	if err != nil || a.Status != http.StatusNotFound || sess.ID == "" || s.t.SessionPerAttempt {
		return a, err
	}
	// The specification: a 404 to a request with a session id means the session is gone
	// (the server expired it), and the client starts a new one and sends the request
	// again, as an agent's SDK does. The server refused it before any tool ran, so the
	// attempt is that request in the new session, within what is left of its timeout.
	s.forget(req.Session, sess)
	left := timeout - time.Since(started)
	if left <= 0 {
		return a, nil
	}
	if sess, err = s.session(ctx, req); err != nil {
		return transport.Answer{}, err
	}
	a, err = s.post(ctx, sess, req, left)
	if err == nil && a.Status == http.StatusNotFound && sess.ID != "" {
		// No session lasts long enough for the request: the transport turned it away
		// twice before any tool saw it, so the attempt says nothing of the key.
		a.Class, a.Err = outcome.Info, "session gone: answered 404 in a new session too, before any tool saw the request"
	}
	return a, err
}

// post sends the attempt's tools/call in sess, under a JSON-RPC id of its own, and reads
// the answer to that id, resuming its event stream when the server closes it first.
func (s *sender) post(ctx context.Context, sess *Session, req *transport.Request, timeout time.Duration) (transport.Answer, error) {
	id := s.t.ids.Add(1)
	body, err := withID(req.Body, id)
	if err != nil {
		return transport.Answer{}, err
	}
	hreq, err := http.NewRequest(http.MethodPost, req.URL, bytes.NewReader(body))
	if err != nil {
		return transport.Answer{}, fmt.Errorf("build request: %w", err)
	}
	hreq.Header = req.Header.Clone()
	sess.setHeaders(hreq.Header)
	rpcID := strconv.FormatInt(id, 10)
	// The resumption's GETs belong to the attempt: they share its deadline.
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	a := transport.Do(ctx, s.t.client(), hreq, timeout, s.t.classifier(), func(resp *http.Response) ([]byte, error) {
		msg, err := sess.readResumed(ctx, resp, rpcID)
		if err != nil {
			return nil, err
		}
		return responseBody(msg), nil
	})
	sum, payload := sha256.Sum256(body), sha256.Sum256(req.Body)
	a.RPCID, a.RPCMethod, a.RequestSHA256, a.PayloadSHA256 = rpcID, "tools/call", hex.EncodeToString(sum[:]), hex.EncodeToString(payload[:])
	return a, nil
}

// maxResumes bounds how often one attempt's event stream is resumed; the attempt's
// timeout bounds how long.
const maxResumes = 10

// defaultReconnect is the wait before a resumption when the server set no retry field.
const defaultReconnect = 250 * time.Millisecond

// readResumed reads the response to id from an answer; when its event stream ends
// cleanly without it after an event id, it resumes the stream as the specification
// (2025-11-25, "Resumability and Redelivery"; SEP-1699, "SSE polling via server-side
// disconnect") has a client do: it waits the retry field's time, then GETs the endpoint
// with Last-Event-ID, and reads on there. This is no new attempt: the tools/call is not
// sent again, only the rest of its answer fetched. A resumption the server refuses, a
// stream that never had an event id, or a tenth resumption that ends without the answer
// leaves it unseen (info).
func (s *Session) readResumed(ctx context.Context, resp *http.Response, id string) ([]byte, error) {
	msg, err := readResponse(resp, id)
	// Both outlive the stream that set them, as the SSE standard's last event ID and
	// reconnection time do.
	lastID, wait := "", defaultReconnect
	for resumes := 0; ; resumes++ {
		var ended *streamEnded
		if !errors.As(err, &ended) {
			return msg, err
		}
		if ended.lastID != "" {
			lastID = ended.lastID
		}
		if lastID == "" {
			return nil, err
		}
		if resumes == maxResumes {
			return nil, fmt.Errorf("%w; resumed %d times, the most one attempt does", ended, maxResumes)
		}
		if ended.retry > 0 {
			wait = ended.retry
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w; waiting %s to resume it: %w", ended, wait, ctx.Err())
		case <-time.After(wait):
		}
		gresp, gerr := s.resume(ctx, lastID)
		if gerr != nil {
			return nil, fmt.Errorf("%w; resuming it: %w", ended, gerr)
		}
		ct, _, _ := mime.ParseMediaType(gresp.Header.Get("Content-Type"))
		if gresp.StatusCode != http.StatusOK || ct != "text/event-stream" {
			_, _ = io.Copy(io.Discard, io.LimitReader(gresp.Body, 4096))
			gresp.Body.Close()
			return nil, fmt.Errorf("%w; resuming it with GET and Last-Event-ID %q was answered %d %s", ended, lastID, gresp.StatusCode, ct)
		}
		decoded, derr := contentcoding.NewReader(gresp.Header.Get("Content-Encoding"), gresp.Body)
		if derr != nil {
			gresp.Body.Close()
			return nil, fmt.Errorf("%w; the resumed stream: %w", ended, derr)
		}
		msg, err = readResponse(&http.Response{StatusCode: gresp.StatusCode, Header: gresp.Header, Body: io.NopCloser(decoded)}, id)
		gresp.Body.Close()
	}
}

// resume opens the GET that resumes a stream after lastID: the session's set-up headers
// (no key, so the proxy's per-key rules and journal never see it), its session id and
// protocol version.
func (s *Session) resume(ctx context.Context, lastID string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header = s.header.Clone()
	if req.Header == nil {
		req.Header = http.Header{}
	}
	s.setHeaders(req.Header)
	req.Header.Del("Content-Type")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Last-Event-ID", lastID)
	return s.client.Do(req)
}

// streamEnded is an event stream that ended cleanly without the response to id. A
// server may close it on purpose once it has sent an event id (SEP-1699): lastID and
// retry are what resuming it needs.
type streamEnded struct {
	id, lastID string
	retry      time.Duration
}

func (e *streamEnded) Error() string {
	return "stream cut: the event stream ended without the response to id " + e.id
}

// forget drops the principal's session if it is still sess, so the next attempt opens a
// new one.
func (s *sender) forget(key string, sess *Session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ls, ok := s.sessions[key]; ok && ls.s == sess {
		delete(s.sessions, key)
	}
}

func (s *sender) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	for _, ls := range s.sessions {
		if ls.s != nil {
			ls.s.Close(ctx)
		}
	}
	s.sessions = map[string]*lazySession{}
}

// readResponse reads the JSON-RPC response with the given id (as JSON text, e.g. 7 or
// "init-1") from an answer: a JSON body, or the first matching event of an event stream
// (notifications, progress and server requests before it are skipped). Any other
// content (a plain-text 400 of the transport layer) is returned as it is, to be
// classified by its status.
func readResponse(resp *http.Response, id string) ([]byte, error) {
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if ct != "text/event-stream" {
		return io.ReadAll(io.LimitReader(resp.Body, transport.MaxResponseBody))
	}
	r := sse.NewReader(resp.Body)
	for {
		ev, err := r.Next()
		if errors.Is(err, io.EOF) {
			return nil, &streamEnded{id: id, lastID: r.LastEventID(), retry: time.Duration(r.RetryMillis()) * time.Millisecond}
		}
		if err != nil {
			return nil, err
		}
		if isResponse(ev.Data) && gjson.GetBytes(ev.Data, "id").Raw == id {
			// The server ends the stream after the response; reading to its end lets the
			// proxy journal the answer as delivered, not as cut by the client. What
			// follows the response cannot change it, so an error here is no concern.
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, transport.MaxResponseBody))
			return ev.Data, nil
		}
	}
}

// Session is one initialized MCP session.
type Session struct {
	// ID is the Mcp-Session-Id the server assigned; "" for a server without sessions.
	ID string
	// ProtocolVersion is the version the server answered with.
	ProtocolVersion string
	// Result is the initialize result as the SDK's type; Raw is it as written (it may
	// carry capabilities the SDK's types do not know, such as tools.idempotency).
	Result *sdk.InitializeResult
	Raw    json.RawMessage

	url    string
	header http.Header
	client *http.Client
}

// AdvertisesIdempotency reports whether the server's initialize result advertises the
// SEP-3182 capability capabilities.tools.idempotency.
func (s *Session) AdvertisesIdempotency() bool {
	return gjson.GetBytes(s.Raw, "capabilities.tools.idempotency").Exists()
}

func (s *Session) setHeaders(h http.Header) {
	if s.ID != "" {
		h.Set(HeaderSessionID, s.ID)
	}
	h.Set(HeaderProtocolVersion, s.ProtocolVersion)
	h.Set("Accept", "application/json, text/event-stream")
	h.Set("Content-Type", "application/json")
}

// Initialize opens a session at url: initialize, then notifications/initialized.
// header is what the set-up requests carry besides the transport's own headers (e.g.
// Authorization). The preflight uses it to read the server's capabilities.
func (t *Transport) Initialize(ctx context.Context, url string, header http.Header) (*Session, error) {
	ctx, cancel := context.WithTimeout(ctx, setupTimeout)
	defer cancel()
	params, err := json.Marshal(&sdk.InitializeParams{
		ProtocolVersion: t.version(),
		ClientInfo:      &sdk.Implementation{Name: "idemproof", Version: "1"},
		Capabilities:    &sdk.ClientCapabilities{},
	})
	if err != nil {
		return nil, fmt.Errorf("initialize: %w", err)
	}
	id := "idemproof-init-" + strconv.FormatInt(t.ids.Add(1), 10)
	body, err := encodeRequest(id, "initialize", params)
	if err != nil {
		return nil, fmt.Errorf("initialize: %w", err)
	}
	s := &Session{ProtocolVersion: t.version(), url: url, header: header.Clone(), client: t.client()}
	resp, err := s.post(ctx, body, false)
	if err != nil {
		return nil, fmt.Errorf("initialize %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("initialize %s: answered %d %s", url, resp.StatusCode, bytes.TrimSpace(b))
	}
	msg, err := readResponse(resp, strconv.Quote(id))
	if err != nil {
		return nil, fmt.Errorf("initialize %s: %w", url, err)
	}
	if e := gjson.GetBytes(msg, "error"); e.Exists() {
		return nil, fmt.Errorf("initialize %s: the server refused: %s", url, e.Raw)
	}
	raw := gjson.GetBytes(msg, "result")
	if !raw.IsObject() {
		return nil, fmt.Errorf("initialize %s: no initialize result in %.200q", url, msg)
	}
	s.Raw = json.RawMessage(raw.Raw)
	s.Result = &sdk.InitializeResult{}
	if err := json.Unmarshal(s.Raw, s.Result); err != nil {
		return nil, fmt.Errorf("initialize %s: read the result: %w", url, err)
	}
	s.ID = resp.Header.Get(HeaderSessionID)
	if s.Result.ProtocolVersion != "" {
		s.ProtocolVersion = s.Result.ProtocolVersion
	}
	note, err := encodeRequest(nil, "notifications/initialized", json.RawMessage(`{}`))
	if err != nil {
		return nil, fmt.Errorf("initialized: %w", err)
	}
	nresp, err := s.post(ctx, note, true)
	if err != nil {
		return nil, fmt.Errorf("notifications/initialized %s: %w", url, err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(nresp.Body, 4096))
	nresp.Body.Close()
	if nresp.StatusCode < 200 || nresp.StatusCode > 299 {
		return nil, fmt.Errorf("notifications/initialized %s: answered %d, want 202", url, nresp.StatusCode)
	}
	return s, nil
}

func (s *Session) post(ctx context.Context, body []byte, inSession bool) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header = s.header.Clone()
	if req.Header == nil {
		req.Header = http.Header{}
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Content-Type", "application/json")
	if inSession {
		s.setHeaders(req.Header)
	}
	return s.client.Do(req)
}

// Close ends the session with a DELETE (the specification's "clients that no longer need
// a session SHOULD send DELETE"); a server that refuses it is no concern of the run.
func (s *Session) Close(ctx context.Context) {
	if s.ID == "" {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, setupTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, s.url, nil)
	if err != nil {
		return
	}
	req.Header = s.header.Clone()
	if req.Header == nil {
		req.Header = http.Header{}
	}
	s.setHeaders(req.Header)
	if resp, err := s.client.Do(req); err == nil {
		resp.Body.Close()
	}
}

// Count implements transport.Transport: a ledger read as an HTTP GET, or a call of the
// ledger tool through the go-sdk's client (no faults stand in its way, so nothing needs
// to be seen raw), its result as {"result": CallToolResult} under the count path, e.g.
// result.structuredContent.count.
func (t *Transport) Count(ctx context.Context, l transport.Ledger) (int, error) {
	if l.Tool == "" {
		return (&transport.HTTP{Probe: t.Probe}).Count(ctx, l)
	}
	ctx, cancel := context.WithTimeout(ctx, setupTimeout)
	defer cancel()
	base := http.DefaultTransport
	if t.Probe != nil && t.Probe.Transport != nil {
		base = t.Probe.Transport
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "idemproof-ledger", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{
		Endpoint:             l.URL,
		HTTPClient:           &http.Client{Transport: HeaderRoundTripper{Base: base, Header: l.Header}},
		MaxRetries:           -1,
		DisableStandaloneSSE: true,
	}, &sdk.ClientSessionOptions{ProtocolVersion: t.version()})
	if err != nil {
		return 0, fmt.Errorf("read ledger: connect %s: %w", l.URL, err)
	}
	defer cs.Close()
	var args any
	if len(l.Arguments) > 0 {
		args = json.RawMessage(l.Arguments)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: l.Tool, Arguments: args})
	var wire *jsonrpc.Error
	if errors.As(err, &wire) {
		// Classified as an attempt's answer is: the JSON-RPC response without its id.
		doc, _ := json.Marshal(map[string]any{"error": wire})
		if t.classifier().Classify(outcome.Answer{Status: http.StatusOK, Body: doc}) == outcome.Throttled {
			return 0, &transport.RateLimitedError{What: "tool " + l.Tool, Detail: fmt.Sprintf("%d %s", wire.Code, wire.Message)}
		}
	}
	if err != nil {
		return 0, fmt.Errorf("read ledger: tool %s: %w", l.Tool, err)
	}
	doc, err := json.Marshal(struct {
		Result *sdk.CallToolResult `json:"result"`
	}{res})
	if err != nil {
		return 0, fmt.Errorf("read ledger: %w", err)
	}
	if res.IsError {
		return 0, fmt.Errorf("read ledger: tool %s answered an error: %.200s", l.Tool, doc)
	}
	return transport.Count(doc, l.Count)
}

// HeaderRoundTripper adds Header (a principal's credentials) to every request the SDK's
// client makes through Base: the ledger's calls, and a scan's tools/list.
type HeaderRoundTripper struct {
	Base   http.RoundTripper
	Header http.Header
}

// RoundTrip implements http.RoundTripper.
func (h HeaderRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for k, v := range h.Header {
		req.Header[k] = v
	}
	return h.Base.RoundTrip(req)
}
