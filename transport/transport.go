// Package transport turns one step of a scenario into attempts on the wire and their
// answers into classified results; the runner and the checkers know nothing of how a
// target is spoken to.
//
//	runner ──Request──> Transport ──HTTP attempt──> faultproxy ──> target
//	       <──Answer─── (status, comparable body, outcome class, or why it is unknown)
//
// Three implementations: HTTP (plain requests, one per attempt) in this package, MCP
// Streamable HTTP (sessions, JSON-RPC tools/call, event-stream answers) in transport/mcp,
// and MCP over stdio (a server process's pipes, one tools/call line per attempt) in
// transport/mcpstdio.
//
// What every Transport guarantees:
//   - one Send is exactly one attempt of the operation (over HTTP, on a fresh connection:
//     Go's http.Transport may silently resend a request carrying an Idempotency-Key on a
//     broken keep-alive connection; a hidden attempt would corrupt every count). Set-up requests
//     a transport needs (an MCP session's initialize) are separate requests that carry no
//     idempotency key, so the proxy's per-key rules and journal never see them;
//   - an answer the client did not see whole (timeout, reset, close, truncated body, an
//     event stream cut before the response) is Info with the reason in Err, never
//     classified; a complete one is classified by the profile's Classifier;
//   - Answer.Body is comparable between attempts: the same stored response gives the same
//     bytes (plain HTTP: the body; MCP: the JSON-RPC response without its id, which
//     echoes each request's own).
package transport

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"syscall"
	"time"

	"github.com/idemproof/idemproof/outcome"
)

// MaxResponseBody bounds what is read of one response.
const MaxResponseBody = 4 << 20

// Request is one step's request: the same for every attempt of the step.
type Request struct {
	URL    string      // where the attempt goes (the proxy or the target) with the operation's path
	Method string      // plain HTTP only; MCP always POSTs
	Header http.Header // everything the attempt carries (the key too when it is a header)
	Body   []byte      // Frame's document with the key put in and any respelling applied
	// Session names the attempts that share an MCP session (one per principal);
	// SessionHeader is what the session's set-up requests carry (the operation's and the
	// principal's headers, no test hooks, no key). Plain HTTP ignores both.
	Session       string
	SessionHeader http.Header
}

// Answer is what one attempt got.
type Answer struct {
	Status int
	Header http.Header
	Body   []byte        // comparable body (see the package doc)
	Class  outcome.Class // outcome.Info when the answer was not seen whole
	Err    string        // why the outcome is unknown: "timed-out", "reset", "closed", "truncated: …", "stream cut: …"
	// The JSON-RPC request's id and method (MCP), and the hex SHA-256 of the request body
	// as sent (unique per attempt, as its id is): the timeline finds the proxy's record of
	// the attempt by it.
	RPCID, RPCMethod string
	RequestSHA256    string
	// PayloadSHA256 is the hex SHA-256 of the request body before the transport added
	// the attempt's own id: the same tool call sent twice shares it (MCP; "" otherwise).
	PayloadSHA256 string
}

// Ledger is one side-effect count read: an HTTP GET (Method, URL) or, over MCP, a tool
// call (Tool with Arguments), and a gjson path to the count in the answer.
type Ledger struct {
	Method    string
	URL       string
	Header    http.Header
	Tool      string
	Arguments []byte
	// Body is an HTTP ledger read's request body (a JSON-RPC call of a counting method,
	// a search query); nil sends none.
	Body  []byte
	Count string
}

// Transport speaks to one target.
type Transport interface {
	// Frame wraps a step's rendered body into the document the runner puts the key into
	// (key_field paths are relative to it) and respells: plain HTTP sends the body as it
	// is; MCP wraps the tool's arguments into a JSON-RPC tools/call request of the named
	// tool (the operation's; plain HTTP has none).
	Frame(tool string, body []byte) ([]byte, error)
	// Open starts the attempts of one scenario run; sessions are never shared between
	// runs.
	Open() Sender
	// Comparable turns a body the upstream produced (as the fault proxy journaled it,
	// with its Content-Encoding) into the form Answer.Body has, so a checker can compare
	// the two; nil when it cannot (a coding that does not decode).
	Comparable(body []byte, contentEncoding string) []byte
	// Count reads the ledger.
	Count(ctx context.Context, l Ledger) (int, error)
}

// Sender sends the attempts of one scenario run.
type Sender interface {
	// Send performs one attempt and waits at most timeout for its answer. An error means
	// the attempt could not even be made (a session could not be set up): the run cannot
	// be judged, which is not an answer of the target.
	Send(ctx context.Context, req *Request, timeout time.Duration) (Answer, error)
	// Close ends what Open started (MCP: its sessions).
	Close()
}

// Preparer is a Sender that can set up what an attempt needs (an MCP session) before
// it is sent, so that attempts meant to reach the target together are not held apart by
// their set-up. A Sender without it sets up inside Send.
type Preparer interface {
	Prepare(ctx context.Context, req *Request) error
}

// NewAttemptClient returns the client every attempt goes through: a fresh connection per
// request, no proxy from the environment, no compression (bodies are compared byte for
// byte as sent), redirects not followed. tlsConfig verifies an https:// target (a
// profile's tls.ca_file); the client uses a clone of it. nil: Go's defaults, the
// system's roots.
func NewAttemptClient(tlsConfig *tls.Config) *http.Client {
	return &http.Client{
		Transport: &http.Transport{
			Proxy:              nil,
			DialContext:        (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
			DisableKeepAlives:  true,
			DisableCompression: true,
			TLSClientConfig:    tlsConfig.Clone(),
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// NewProbeClient returns a client for ledger reads, which no fault stands in the way of:
// Go's default transport, bounded by timeout. tlsConfig is as for NewAttemptClient.
func NewProbeClient(timeout time.Duration, tlsConfig *tls.Config) *http.Client {
	c := &http.Client{Timeout: timeout}
	if tlsConfig != nil {
		tr := &http.Transport{Proxy: http.ProxyFromEnvironment}
		if d, ok := http.DefaultTransport.(*http.Transport); ok {
			tr = d.Clone()
		}
		// A Transport adds "h2" to the NextProtos of the config it is given: its own clone.
		tr.TLSClientConfig = tlsConfig.Clone()
		c.Transport = tr
	}
	return c
}

// TimedOut is Answer.Err for an attempt whose timeout passed before its answer came.
const TimedOut = "timed-out"

// ErrorName names what happened to an attempt in the words of the fault proxy's client
// results: TimedOut, "reset", "closed", or the error itself.
func ErrorName(ctx context.Context, err error) string {
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded):
		return TimedOut
	case errors.Is(err, syscall.ECONNRESET):
		return "reset"
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return "closed"
	}
	return err.Error()
}
