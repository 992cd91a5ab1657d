package jsonvalue

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/idemproof/idemproof/faultproxy"
)

// JSONRPCEnvelope names the top-level members of a JSON-RPC 2.0 request that frame the
// call rather than carry its payload. A server answers with the request's id (JSON-RPC
// 2.0 §5), so a changed or respelled id comes back in a correct replay, which would then
// look like a response of its own; the version and the method name the call itself.
var JSONRPCEnvelope = map[string]bool{"jsonrpc": true, "id": true, "method": true}

// IsJSONRPCRequest reports whether v is a JSON-RPC 2.0 request: an object with
// "jsonrpc": "2.0" and a string method.
func (v *Value) IsJSONRPCRequest() bool {
	if v == nil || !v.IsObject {
		return false
	}
	var version, method bool
	for _, m := range v.Members {
		var s string
		isString := !m.Value.IsObject && !m.Value.IsArray && json.Unmarshal(m.Value.Raw, &s) == nil
		switch m.Key {
		case "jsonrpc":
			version = isString && s == "2.0"
		case "method":
			method = isString
		}
	}
	return version && method
}

// RespellPayloadIntegers is respellIntegers for fingerprint/number-spelling: in a JSON-RPC
// 2.0 request only the payload is respelled, never the envelope (an id of 1 respelled
// 1.0 comes back as 1.0 in a correct replay). Over MCP the harness replaces the id of
// the request it framed on every attempt anyway.
func (v *Value) RespellPayloadIntegers() bool {
	if !v.IsJSONRPCRequest() {
		return v.RespellIntegers()
	}
	changed := false
	for _, m := range v.Members {
		if !JSONRPCEnvelope[m.Key] {
			changed = m.Value.RespellIntegers() || changed
		}
	}
	return changed
}

// MemberPath is the dotted path of member inside parent ("" for the top level), its
// dots escaped.
func MemberPath(parent, member string) string {
	if parent == "" {
		return strings.ReplaceAll(member, ".", `\.`)
	}
	return parent + "." + strings.ReplaceAll(member, ".", `\.`)
}

// At finds the value at a dotted path (a member name may escape a dot as `\.`; an array
// element is its index), nil when there is none.
func (v *Value) At(path string) *Value {
	cur := v
	for _, part := range SplitPath(path) {
		switch {
		case cur.IsObject:
			var next *Value
			for _, m := range cur.Members {
				if m.Key == part {
					next = m.Value
				}
			}
			cur = next
		case cur.IsArray:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(cur.Elems) {
				return nil
			}
			cur = cur.Elems[i]
		default:
			return nil
		}
		if cur == nil {
			return nil
		}
	}
	return cur
}

// SplitPath splits a dotted path at the dots that are not escaped.
func SplitPath(path string) []string { return faultproxy.SplitKeyField(path) }
