package faultproxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/tidwall/gjson"
)

// JSON-RPC requests (MCP tools/call and the like) are journaled with their id and method,
// and, when Config.Classify is set, every attempt with the outcome class of what its
// client got: for an event stream, of the JSON-RPC response inside it.

// rpcExchange is an Exchange's JSON-RPC view: the request's id once read, and what the
// client was answered, kept only for Config.Classify.
type rpcExchange struct {
	parsed bool
	json   jsonCheck // the request body checked as JSON (key.go), once
	id     []byte    // compact JSON of the request id; nil: not a JSON-RPC request with an id
	answer *answerCapture
}

// checked is body's JSON check, made on the first call.
func (r *rpcExchange) checked(body []byte) jsonCheck {
	if r.json == jsonUnchecked {
		r.json = checkJSON(body)
	}
	return r.json
}

// jsonRPC reads the request as a JSON-RPC request when its body is buffered whole, once,
// and journals its id and method. It returns the id as compact JSON (nil for none) and
// the method.
func (ex *Exchange) jsonRPC() ([]byte, string) {
	if ex.rpc.parsed {
		return ex.rpc.id, ex.rec.RPCMethod
	}
	if !ex.body.complete {
		return nil, ""
	}
	ex.rpc.parsed = true
	var method string
	ex.rpc.id, method = readJSONRPC(ex.body.buf, ex.rpc.checked(ex.body.buf), ex.rec)
	return ex.rpc.id, method
}

// readJSONRPC reads body, whose JSON check is given, as a JSON-RPC request and journals
// its id and method in rec; it returns the id as compact JSON (nil for none) and the
// method ("" when body is not a JSON-RPC request, or not JSON the proxy reads).
func readJSONRPC(body []byte, check jsonCheck, rec *Record) ([]byte, string) {
	// A scan for three members that stops reading where it found them, not a decode of
	// the whole body: the body is the client's, and its size must not decide the cost
	// (the key field is read the same way).
	if check != jsonValid {
		return nil, ""
	}
	got := gjson.GetManyBytes(body, "jsonrpc", "id", "method")
	if got[0].Type != gjson.String || got[0].Str != "2.0" || got[2].Type != gjson.String || got[2].Str == "" {
		return nil, ""
	}
	method := got[2].Str
	rec.RPCMethod = clipField(method)
	var id []byte
	if got[1].Exists() {
		if id = compactID(json.RawMessage(got[1].Raw)); id != nil {
			rec.RPCID = clipField(string(id))
		}
	}
	return id, method
}

// maxRPCField bounds the id and method a record keeps: the client chooses them, and the
// journal's memory must not follow.
const maxRPCField = 256

// clipField keeps at most maxRPCField bytes of s, marking a cut with "…".
func clipField(s string) string {
	if len(s) <= maxRPCField {
		return s
	}
	return strings.ToValidUTF8(s[:maxRPCField], "") + "…"
}

// compactID is a JSON-RPC id (a string or a number) in compact form, nil for none or null.
func compactID(raw json.RawMessage) []byte {
	var buf bytes.Buffer
	if len(raw) == 0 || json.Compact(&buf, raw) != nil || buf.String() == "null" {
		return nil
	}
	if c := buf.Bytes()[0]; c != '"' && c != '-' && (c < '0' || c > '9') {
		return nil
	}
	return buf.Bytes()
}

// rpcResponseID reports whether msg is a JSON-RPC response (a result or an error, no
// method) and returns its id in compact form.
func rpcResponseID(msg []byte) ([]byte, bool) {
	var m struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
		Result  json.RawMessage `json:"result"`
		Error   json.RawMessage `json:"error"`
	}
	if json.Unmarshal(msg, &m) != nil || m.JSONRPC != "2.0" || m.Method != "" || (m.Result == nil && m.Error == nil) {
		return nil, false
	}
	return compactID(m.ID), true
}

// answerCapture keeps what the client was answered, bounded: the JSON-RPC response of an
// event stream (one event at a time), the body of anything else up to limit bytes.
type answerCapture struct {
	header http.Header
	events *eventScanner
	body   []byte
	limit  int64
	over   bool
}

// capture starts keeping the answer the client gets: an event stream's JSON-RPC
// response always (stream needs to know whether it was delivered), another body only for
// a Classify hook; nil when there is nothing to keep.
func (ex *Exchange) capture(header http.Header) *answerCapture {
	sse := isEventStream(header)
	if ex.p.cfg.Classify == nil && !sse {
		return nil
	}
	c := &answerCapture{header: header, limit: ex.p.cfg.BufferLimit}
	if sse {
		id, _ := ex.jsonRPC()
		c.events = newEventScanner(id, c.limit)
	}
	ex.rpc.answer = c
	return c
}

// answered reports whether the JSON-RPC response of an event stream went to the client:
// whatever happens to the stream after it, the client has its complete answer.
func (c *answerCapture) answered() bool {
	return c != nil && c.events != nil && c.events.response != nil
}

func (c *answerCapture) write(p []byte) {
	switch {
	case c == nil:
	case c.events != nil:
		c.events.Write(p)
	case c.over || int64(len(c.body)+len(p)) > c.limit:
		c.over, c.body = true, nil
	default:
		c.body = append(c.body, p...)
	}
}

// classify sets Record.Class from Config.Classify: the class of the complete answer the
// client got, OutcomeInfo when it got none (reset, close, truncation, timeout) or when an
// event stream ended without the JSON-RPC response.
func (ex *Exchange) classify() {
	classify := ex.p.cfg.Classify
	if classify == nil {
		return
	}
	c := ex.rpc.answer
	switch {
	case ex.rec.ClientResult != ClientDelivered || c == nil:
		ex.rec.Class = OutcomeInfo
	case c.events != nil && c.events.response == nil:
		ex.rec.Class = OutcomeInfo
		ex.Note("event stream ended without the JSON-RPC response: not classified")
	case c.events != nil:
		ex.rec.Class = classify(ex.rec.ClientStatus, c.header, c.events.response)
	case c.over:
		ex.Note(fmt.Sprintf("answer over buffer limit (%d bytes): not classified", c.limit))
	default:
		ex.rec.Class = classify(ex.rec.ClientStatus, c.header, c.body)
	}
}
