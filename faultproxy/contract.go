package faultproxy

import (
	"context"
	"time"
)

// This file is the contract other packages build on (scenarios, client-check, suites):
// the rule and journal shapes and the Controller interface. Fields may be added; the
// existing names, JSON tags and meanings stay.

// Rule says which requests get which fault. Rules are evaluated in the order they were
// added; the first rule whose Match holds, whose Count is not used up and whose
// Probability draw succeeds is applied, and no other.
type Rule struct {
	// Name identifies the rule for DELETE /rules/{name} and in the journal. Required;
	// unique within a proxy.
	Name  string    `json:"name" yaml:"name"`
	Match Match     `json:"match" yaml:"match"`
	Fault FaultSpec `json:"fault" yaml:"fault"`
	// Count is how many times the rule may fire; 0 means no limit.
	Count int `json:"count,omitempty" yaml:"count,omitempty"`
	// Probability in (0,1] that a matching request gets the fault, drawn from the proxy's
	// one seeded source; 0 means 1 (always).
	Probability float64 `json:"probability,omitempty" yaml:"probability,omitempty"`
}

// Match selects requests. Every non-empty field must hold (AND); an empty Match matches
// every request.
type Match struct {
	Method string `json:"method,omitempty" yaml:"method,omitempty"` // exact, case-insensitive
	Path   string `json:"path,omitempty" yaml:"path,omitempty"`     // path.Match glob on the URL path
	// Headers: a value "" means "present"; otherwise the header must equal the value.
	Headers map[string]string `json:"headers,omitempty" yaml:"headers,omitempty"`
	// Key is a path.Match glob on the idempotency key ("*" = any keyed request).
	Key string `json:"key,omitempty" yaml:"key,omitempty"`
	// NoKey matches only requests that carry no idempotency key.
	NoKey bool `json:"no_key,omitempty" yaml:"no_key,omitempty"`
	// Attempts restricts the rule to attempt ordinals of a key (1-based, inclusive):
	// {from: 1, to: 1} is "only the first attempt of each key". Requests without a key
	// never match a rule that sets Attempts.
	Attempts *Range `json:"attempts,omitempty" yaml:"attempts,omitempty"`
}

// Range is an inclusive range of attempt ordinals; To == 0 means unbounded.
type Range struct {
	From int `json:"from" yaml:"from"`
	To   int `json:"to,omitempty" yaml:"to,omitempty"`
}

// Fault types. "before-*" faults act before the upstream sees the request (it never
// arrives); "after-*" faults act after the upstream answered (it committed; only the
// response suffers); "duplicate" delivers the request to the upstream twice.
const (
	FaultBeforeStatus  = "before-status"  // respond Status (default 503), optional Body and RetryAfter
	FaultBeforeReset   = "before-reset"   // reset the client connection (RST)
	FaultBeforeDelay   = "before-delay"   // wait Duration, then forward normally
	FaultAfterStatus   = "after-status"   // replace the upstream response with Status (503, 502, 504)
	FaultAfterReset    = "after-reset"    // reset the client connection (RST)
	FaultAfterClose    = "after-close"    // close the client connection without a byte
	FaultAfterTruncate = "after-truncate" // send headers and the first Bytes of the body, then close
	FaultAfterHold     = "after-hold"     // hold the response for Duration, then deliver or drop (Then)
	FaultAfterDelay    = "after-delay"    // wait Duration, then deliver the response
	FaultDuplicate     = "duplicate"      // send upstream twice (Mode sequential|concurrent); client gets one answer

	// Faults of a layer on a server process's pipes only (faultproxy/stdio); the HTTP
	// proxy refuses them.
	FaultBeforeDrop = "before-drop" // the request line never reaches the server
	FaultAfterDrop  = "after-drop"  // the server's answer line never reaches the client
	FaultAfterKill  = "after-kill"  // the server process is killed right after it answered; the answer is lost
)

// FaultSpec is the data form of a fault: a type and its parameters. Durations are
// time.Duration in Go and integer milliseconds at the JSON/YAML edge (duration_ms).
type FaultSpec struct {
	Type   string `json:"type" yaml:"type"`
	Status int    `json:"status,omitempty" yaml:"status,omitempty"`
	Body   string `json:"body,omitempty" yaml:"body,omitempty"`
	// ContentType is the status faults' Content-Type; "" is application/json for a body
	// that is JSON, else text/plain.
	ContentType string `json:"content_type,omitempty" yaml:"content_type,omitempty"`
	// JSONRPCID makes a status fault's body (a JSON-RPC response object) answer the
	// request it refuses: its top-level id becomes the request's JSON-RPC id (null for a
	// request without one), as a JSON-RPC server's error inside a 200 does.
	JSONRPCID  bool `json:"jsonrpc_id,omitempty" yaml:"jsonrpc_id,omitempty"`
	RetryAfter int  `json:"retry_after,omitempty" yaml:"retry_after,omitempty"` // seconds
	// Headers are response headers a status fault's answer carries besides Content-Type
	// and Retry-After: the retry signals an API sends (x-should-retry, Stripe-Should-Retry,
	// Retry-After-Ms, a Retry-After as an HTTP date). Framing and hop-by-hop headers are
	// the proxy's and refused.
	Headers  map[string]string `json:"headers,omitempty" yaml:"headers,omitempty"`
	Bytes    int               `json:"bytes,omitempty" yaml:"bytes,omitempty"`
	Duration time.Duration     `json:"-" yaml:"-"`
	Then     string            `json:"then,omitempty" yaml:"then,omitempty"` // after-hold: "deliver" (default) or "drop"
	Mode     string            `json:"mode,omitempty" yaml:"mode,omitempty"` // duplicate: "sequential" (default) or "concurrent"
}

// Client-side results: what the client got for one attempt.
const (
	ClientDelivered = "delivered" // a complete HTTP response (the upstream's or a fault's status)
	ClientReset     = "reset"     // connection reset (RST)
	ClientClosed    = "closed"    // connection closed without a response
	ClientTruncated = "truncated" // headers and part of the body, then closed
	ClientTimedOut  = "timed-out" // the client gave up before the response came (hold)
	ClientError     = "error"     // the proxy could not reach the upstream (502 from the proxy)
	// A layer on a server process's pipes (faultproxy/stdio):
	ClientDropped = "dropped" // the answer line was never delivered: the client is left waiting
	ClientKilled  = "killed"  // the server process was killed; the client saw its pipe close with no answer
)

// History outcome types, Jepsen style: what the CLIENT can know about an attempt.
const (
	OutcomeOK   = "ok"   // the client got a 2xx: the operation happened
	OutcomeFail = "fail" // the client got a definite refusal (4xx): it did not happen
	OutcomeInfo = "info" // unknown to the client: reset, closed, truncated, timed out, 5xx
)

// Record is the journal entry of one attempt as the proxy saw it: the ground truth the
// checkers count, independent of what the client believes it sent.
type Record struct {
	Seq                 uint64            `json:"seq"`
	Time                time.Time         `json:"time"`
	Method              string            `json:"method"`
	Path                string            `json:"path"`                   // URL path and query (at most 8 KiB)
	PathClipped         int               `json:"path_clipped,omitempty"` // bytes of the path not kept
	Key                 string            `json:"key,omitempty"`
	HasKey              bool              `json:"has_key"`
	Attempt             int               `json:"attempt,omitempty"`         // ordinal of this attempt for its key, 1-based; 0 without key
	BodySHA256          string            `json:"body_sha256"`               // hex SHA-256 of the request body as received
	Headers             map[string]string `json:"headers,omitempty"`         // end-to-end request headers, credentials redacted, clipped to Config.JournalHeaderLimit
	HeadersClipped      int               `json:"headers_clipped,omitempty"` // bytes of header values not kept
	Rule                string            `json:"rule,omitempty"`
	Fault               string            `json:"fault,omitempty"`
	ReachedUpstream     bool              `json:"reached_upstream"`
	UpstreamCalls       int               `json:"upstream_calls"` // 2 for a duplicate delivery
	UpstreamStatus      int               `json:"upstream_status,omitempty"`
	UpstreamBody        []byte            `json:"upstream_body,omitempty"`         // buffered upstream body when a fault buffered it, at most Config.JournalBodyLimit
	UpstreamBodyClipped int               `json:"upstream_body_clipped,omitempty"` // bytes of that body not kept
	// UpstreamContentEncoding is that body's Content-Encoding ("gzip"), so a reader can
	// compare it with what a client decoded.
	UpstreamContentEncoding string  `json:"upstream_content_encoding,omitempty"`
	UpstreamMillis          float64 `json:"upstream_ms"`
	// ForwardedAfterMillis is the time from the proxy's receipt (Time) to its first
	// upstream call: a before-delay's hold plus the proxy's own latency, so Time plus it
	// is when the request left for the target, whatever the answer's timing. 0 when the
	// request never left.
	ForwardedAfterMillis float64 `json:"forwarded_after_ms,omitempty"`
	ClientStatus         int     `json:"client_status,omitempty"` // status the client got, when it got one
	ClientResult         string  `json:"client_result"`           // Client* constants
	Outcome              string  `json:"outcome"`                 // Outcome* constants
	Note                 string  `json:"note,omitempty"`          // e.g. "response over buffer limit: fault not applied"
	// The JSON-RPC request's id (as JSON: 7, "a1") and method ("tools/call"), when the
	// proxy read the body as one: for a key field, or to find the response to it in an
	// event stream.
	RPCID     string `json:"rpc_id,omitempty"`
	RPCMethod string `json:"rpc_method,omitempty"`
	// Class is Config.Classify's outcome class of what the client got ("info" when it got
	// no complete answer); empty without a Classify hook.
	Class string `json:"class,omitempty"`
}

// JournalQuery filters the journal. Zero values mean "all".
type JournalQuery struct {
	Key   string `json:"key,omitempty"`
	Since uint64 `json:"since,omitempty"` // records with Seq > Since
	// Limit is the most records one answer holds (0: all; GET /journal: 1000 unless
	// ?limit= says otherwise); continue with Since set to the last Seq returned.
	Limit int `json:"limit,omitempty"`
}

// Controller is what a test harness needs from a proxy, whether in-process (*Proxy) or
// remote through the admin API (the Go client in faultproxy/client).
type Controller interface {
	AddRule(ctx context.Context, r Rule) error
	DeleteRule(ctx context.Context, name string) error
	Reset(ctx context.Context) error // remove all rules, clear the journal and attempt counters
	Journal(ctx context.Context, q JournalQuery) ([]Record, error)
}
