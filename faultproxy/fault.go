package faultproxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// Fault is one injected failure applied to one attempt. Apply drives the Exchange: it
// decides whether and how the request reaches the upstream (Forward, Upstream,
// ForwardTwice) and what the client gets (Deliver, Respond, Reset, Close, Truncate, or
// nothing after Wait reported the client gone). Apply must return promptly once
// ex.Context() ends, must not keep the Exchange after returning, and must not change its
// own configuration: one Fault value serves concurrent requests. Probability and counts
// are not a fault's business; the rule set applies them before Apply is called.
type Fault interface {
	Apply(ex *Exchange)
}

// Builder turns a FaultSpec into a Fault. It returns a *FieldError naming the bad
// parameter ("fault.status") when the spec is invalid, and refuses parameters the fault
// does not use so that a misplaced parameter is not silently ignored.
type Builder func(spec FaultSpec) (Fault, error)

// Registry maps a fault type name (FaultSpec.Type) to its builder. It is explicit: a Proxy
// uses Config.Faults, or DefaultFaults() when nil; there are no package-level globals.
type Registry map[string]Builder

// DefaultFaults returns a new registry of the built-in faults.
func DefaultFaults() Registry {
	return Registry{
		FaultBeforeStatus:  newBeforeStatus,
		FaultBeforeReset:   newBeforeReset,
		FaultBeforeDelay:   newBeforeDelay,
		FaultAfterStatus:   newAfterStatus,
		FaultAfterReset:    newAfterReset,
		FaultAfterClose:    newAfterClose,
		FaultAfterTruncate: newAfterTruncate,
		FaultAfterHold:     newAfterHold,
		FaultAfterDelay:    newAfterDelay,
		FaultDuplicate:     newDuplicate,
	}
}

// Types lists the registered fault types, sorted.
func (r Registry) Types() []string {
	out := make([]string, 0, len(r))
	for t := range r {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// Build makes the Fault a spec describes.
func (r Registry) Build(spec FaultSpec) (Fault, error) {
	if spec.Type == "" {
		return nil, &FieldError{Field: "fault.type", Msg: "required; one of " + strings.Join(r.Types(), ", ")}
	}
	b, ok := r[spec.Type]
	if !ok {
		return nil, &FieldError{Field: "fault.type", Msg: fmt.Sprintf("unknown fault %q; one of %s", spec.Type, strings.Join(r.Types(), ", "))}
	}
	return b(spec)
}

// onlyParams refuses every parameter of spec not named in allowed (JSON names).
func onlyParams(spec FaultSpec, allowed ...string) error {
	set := map[string]bool{
		"status":       spec.Status != 0,
		"body":         spec.Body != "",
		"content_type": spec.ContentType != "",
		"jsonrpc_id":   spec.JSONRPCID,
		"retry_after":  spec.RetryAfter != 0,
		"headers":      len(spec.Headers) > 0,
		"bytes":        spec.Bytes != 0,
		"duration_ms":  spec.Duration != 0,
		"then":         spec.Then != "",
		"mode":         spec.Mode != "",
	}
	for _, a := range allowed {
		delete(set, a)
	}
	names := make([]string, 0, len(set))
	for name, isSet := range set {
		if isSet {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	sort.Strings(names)
	use := "no parameters"
	if len(allowed) > 0 {
		use = "only " + strings.Join(allowed, ", ")
	}
	return &FieldError{Field: "fault." + names[0], Msg: fmt.Sprintf("not a parameter of %s (it takes %s)", spec.Type, use)}
}

// statusParam checks an optional status, defaulting to 503.
func statusParam(spec FaultSpec) (int, error) {
	if spec.Status == 0 {
		return http.StatusServiceUnavailable, nil
	}
	if spec.Status < 200 || spec.Status > 599 {
		return 0, &FieldError{Field: "fault.status", Msg: fmt.Sprintf("must be an HTTP status from 200 to 599, got %d", spec.Status)}
	}
	return spec.Status, nil
}

// durationParam checks a required positive duration.
func durationParam(spec FaultSpec) error {
	if spec.Duration <= 0 {
		return &FieldError{Field: "fault.duration_ms", Msg: fmt.Sprintf("%s needs a positive duration_ms", spec.Type)}
	}
	return nil
}

// statusResponse is the reply of a status fault: a fixed status with an optional body
// and Retry-After, shared by before-status and after-status.
type statusResponse struct {
	status      int
	body        []byte
	contentType string
	retryAfter  int
	headers     http.Header // FaultSpec.Headers, canonical names
	jsonRPCID   bool        // the body's id is set to the request's (FaultSpec.JSONRPCID)
}

func newStatusResponse(spec FaultSpec) (statusResponse, error) {
	if err := onlyParams(spec, "status", "body", "content_type", "retry_after", "headers", "jsonrpc_id"); err != nil {
		return statusResponse{}, err
	}
	headers, err := headersParam(spec)
	if err != nil {
		return statusResponse{}, err
	}
	ctype := spec.ContentType
	switch {
	case ctype != "" && strings.ContainsAny(ctype, "\r\n"):
		return statusResponse{}, &FieldError{Field: "fault.content_type", Msg: fmt.Sprintf("must be a media type such as application/json, got %q", ctype)}
	case ctype == "" && spec.Body != "" && json.Valid([]byte(spec.Body)):
		ctype = "application/json"
	case ctype == "":
		ctype = "text/plain; charset=utf-8"
	}
	status, err := statusParam(spec)
	if err != nil {
		return statusResponse{}, err
	}
	if spec.RetryAfter < 0 {
		return statusResponse{}, &FieldError{Field: "fault.retry_after", Msg: fmt.Sprintf("must be seconds >= 0, got %d", spec.RetryAfter)}
	}
	if spec.JSONRPCID && !gjson.Parse(spec.Body).IsObject() {
		return statusResponse{}, &FieldError{Field: "fault.jsonrpc_id", Msg: `needs a body that is a JSON-RPC response object, such as {"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"request in flight"}}`}
	}
	body := spec.Body
	if body == "" {
		body = fmt.Sprintf("faultproxy: injected %d %s\n", status, http.StatusText(status))
	}
	return statusResponse{status: status, body: []byte(body), contentType: ctype, retryAfter: spec.RetryAfter, headers: headers, jsonRPCID: spec.JSONRPCID}, nil
}

// maxFaultHeaderBytes bounds the names and values of one fault's headers.
const maxFaultHeaderBytes = 8 << 10

// proxyOwnedHeaders frame the answer or belong to one hop: the proxy writes them itself.
var proxyOwnedHeaders = map[string]bool{
	"Content-Length": true, "Transfer-Encoding": true, "Connection": true, "Keep-Alive": true,
	"Proxy-Connection": true, "Te": true, "Trailer": true, "Upgrade": true,
}

// headersParam checks a status fault's headers and returns them with canonical names.
func headersParam(spec FaultSpec) (http.Header, error) {
	if len(spec.Headers) == 0 {
		return nil, nil
	}
	h, size := make(http.Header, len(spec.Headers)), 0
	for name, value := range spec.Headers {
		canonical := http.CanonicalHeaderKey(name)
		field := "fault.headers." + name
		switch {
		case !isToken(name):
			return nil, &FieldError{Field: "fault.headers", Msg: fmt.Sprintf("%q is not a header name", name)}
		case proxyOwnedHeaders[canonical]:
			return nil, &FieldError{Field: field, Msg: "the proxy sets it (framing and hop-by-hop headers are the proxy's)"}
		case canonical == "Content-Type":
			return nil, &FieldError{Field: field, Msg: "use fault.content_type"}
		case canonical == "Retry-After" && spec.RetryAfter != 0:
			return nil, &FieldError{Field: field, Msg: "given twice: fault.retry_after sends it too; keep one"}
		case len(h[canonical]) > 0:
			return nil, &FieldError{Field: field, Msg: "given twice (header names are case-insensitive)"}
		case !validHeaderValue(value):
			return nil, &FieldError{Field: field, Msg: fmt.Sprintf("a header value may hold no control characters (CR, LF, NUL), got %q", value)}
		}
		size += len(name) + len(value)
		h[canonical] = []string{value}
	}
	if size > maxFaultHeaderBytes {
		return nil, &FieldError{Field: "fault.headers", Msg: fmt.Sprintf("at most %d bytes of names and values, got %d", maxFaultHeaderBytes, size)}
	}
	return h, nil
}

// validHeaderValue reports whether v may be sent as a field value (RFC 9110 §5.5: no
// control characters but horizontal tab).
func validHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < 0x20 && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

func (s statusResponse) send(ex *Exchange) {
	h := s.headers.Clone()
	if h == nil {
		h = http.Header{}
	}
	h.Set("Content-Type", s.contentType)
	if s.retryAfter > 0 {
		h.Set("Retry-After", fmt.Sprint(s.retryAfter))
	}
	body := s.body
	if s.jsonRPCID {
		body = ex.answeringRequestID(body)
	}
	ex.Respond(s.status, h, body)
}

// answeringRequestID is body, a JSON object, with its top-level id set to the request's
// JSON-RPC id: a JSON-RPC client matches an answer to its call by the id, so a refusal
// with any other id is one it never sees. A request whose id cannot be read (none, a
// notification, a body over the buffer limit) gets null, as a server answers a request
// it could not read, and the journal says so.
func (ex *Exchange) answeringRequestID(body []byte) []byte {
	if !ex.rec.ReachedUpstream {
		ex.body.bufferAll(ex.p.cfg.BufferLimit)
	}
	id, _ := ex.jsonRPC()
	if id == nil {
		ex.Note("jsonrpc_id: the request has no JSON-RPC id the proxy could read; the answer's id is null")
		id = []byte("null")
	}
	out, err := sjson.SetRawBytes(bytes.Clone(body), "id", id)
	if err != nil {
		return body
	}
	return out
}
