package faultproxy

import (
	"strings"

	"github.com/tidwall/gjson"
)

// KeyPath turns the documented dotted field path into a gjson path: every segment is
// escaped, so a name holding gjson's own syntax (* ? # @ | and the like) is a plain
// name; numeric segments index arrays (and name members of objects), as documented.
func KeyPath(field string) string {
	segs := SplitKeyField(field)
	for i, s := range segs {
		segs[i] = gjson.Escape(s)
	}
	return strings.Join(segs, ".")
}

// SplitKeyField splits a dotted key field path into its member names. A dot inside a
// name is written `\.`: MCP's _meta names are namespaced that way
// (params._meta.io\.modelcontextprotocol/idempotency-key).
func SplitKeyField(field string) []string {
	var parts []string
	var b strings.Builder
	for i := 0; i < len(field); i++ {
		switch {
		case field[i] == '\\' && i+1 < len(field) && field[i+1] == '.':
			b.WriteByte('.')
			i++
		case field[i] == '.':
			parts = append(parts, b.String())
			b.Reset()
		default:
			b.WriteByte(field[i])
		}
	}
	return append(parts, b.String())
}

// keyFromBody extracts the idempotency key at a gjson path of a JSON body (keyPath).
// Strings are taken as they are, numbers by their literal spelling; anything else
// (absent, null, object, not JSON) means "no key".
//
// It is a scan that stops at the key, not a decode: memory does not grow with the body
// and the scan reads only as far as the key's value (a 10 MB body decoded into any took
// 400 MB). The body is not validated past the key, and where a name appears twice the
// first occurrence counts.
func keyFromBody(body []byte, path string) (string, bool) {
	if len(body) == 0 {
		return "", false
	}
	r := gjson.GetBytes(body, path)
	switch r.Type {
	case gjson.String:
		return r.Str, true
	case gjson.Number:
		return r.Raw, true
	}
	return "", false
}
