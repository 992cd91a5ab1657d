package faultproxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unsafe"

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

// MaxJSONDepth is how deep arrays and objects may nest in a request body the proxy reads
// as JSON. With Config.KeyField a deeper body is refused (400) before it reaches the
// upstream; without, it is not read for a JSON-RPC id. gjson's validator recurses once
// per level: the bound, checked first by a flat scan (jsonWithinDepth), keeps its stack
// small whatever a client sends (a 16 MB body of '[' took a gigabyte of stack, or ended
// the process).
const MaxJSONDepth = 1000

// jsonCheck is what a buffered request body is as JSON, checked once per attempt.
type jsonCheck uint8

const (
	jsonUnchecked jsonCheck = iota
	jsonValid
	jsonInvalid
	jsonTooDeep
)

// checkJSON checks body: nesting first (a scan that stops at the first level past
// MaxJSONDepth), then validity. Both are linear in the body's bytes.
func checkJSON(body []byte) jsonCheck {
	switch {
	case !jsonWithinDepth(body, MaxJSONDepth):
		return jsonTooDeep
	case !gjson.ValidBytes(body):
		return jsonInvalid
	}
	return jsonValid
}

// jsonWithinDepth reports whether no array or object of body nests deeper than max. It
// counts brackets outside strings and validates nothing else. Only a body whose value is
// an array or an object can nest (the validator fails any other at its first bracket);
// where brackets close more than they opened the body is invalid, and the validator
// stops there.
func jsonWithinDepth(body []byte, max int) bool {
	if b := bytes.TrimLeft(body, " \t\r\n"); len(b) == 0 || (b[0] != '[' && b[0] != '{') {
		return true
	}
	depth := 0
	for i := 0; i < len(body); i++ {
		switch body[i] {
		case '"':
			for i++; i < len(body) && body[i] != '"'; i++ {
				if body[i] == '\\' {
					i++
				}
			}
		case '[', '{':
			if depth++; depth > max {
				return false
			}
		case ']', '}':
			if depth--; depth < 0 {
				return true
			}
		}
	}
	return true
}

// bodyKey is what the proxy read of the key field in a buffered request body.
type bodyKey struct {
	key string
	ok  bool
	// note says why no key was read, for the journal ("" when there is nothing to say).
	note string
	// refuse, when set, is why the request is refused (400) instead of forwarded: the
	// body is too deep to read, or decoders could read different keys from it.
	refuse string
}

// readBodyKey reads the key at the member names segs of a JSON body whose check is
// given. Strings are keys as Go's encoding/json decodes them, numbers by their
// spelling; anything else (absent, null, an object) means no key, and so does a body that
// is not valid JSON. A JSON-RPC batch (an array) has no single key.
//
// The key the proxy matches rules on must be the one the upstream uses, so a path
// member that is not named exactly once in its object — given twice (gjson would take
// the first, Go's decoder and JSON.parse the last), or also in another letter case (Go's
// decoder matches names ignoring case) — makes the request refused.
//
// It is a scan of the body with gjson, not a decode: memory does not grow with the body
// (a 10 MB body decoded into any took 400 MB), and each object on the path is read once.
func readBodyKey(body []byte, check jsonCheck, segs []string) bodyKey {
	switch {
	case len(body) == 0:
		return bodyKey{}
	case check == jsonTooDeep:
		return bodyKey{refuse: fmt.Sprintf("the request body nests JSON arrays and objects deeper than %d levels: the key field is not read from such a body", MaxJSONDepth)}
	case check != jsonValid:
		return bodyKey{note: "request body is not valid JSON: key field not read"}
	}
	cur := gjson.Parse(bodyString(body))
	for i, seg := range segs {
		next, ambiguity := member(cur, seg)
		if ambiguity != "" {
			return bodyKey{refuse: fmt.Sprintf("the key field is ambiguous: %s, and decoders differ on which one counts; name each member of %s once", ambiguity, strings.Join(segs, "."))}
		}
		if !next.Exists() {
			if i == 0 && cur.IsArray() {
				return bodyKey{note: "a JSON-RPC batch (an array) carries no single key: key field not read"}
			}
			return bodyKey{}
		}
		cur = next
	}
	switch cur.Type {
	case gjson.String:
		// Decoded as Go's decoder does (invalid UTF-8 and lone surrogates become U+FFFD);
		// the value is copied out of the body either way.
		var s string
		if json.Unmarshal([]byte(cur.Raw), &s) == nil {
			return bodyKey{key: s, ok: true}
		}
	case gjson.Number:
		return bodyKey{key: strings.Clone(cur.Raw), ok: true}
	}
	return bodyKey{}
}

// member is cur's member named name (of an object) or element at index name (of an
// array), and, when name is not exactly one member of the object, what makes it
// ambiguous.
func member(cur gjson.Result, name string) (gjson.Result, string) {
	var found gjson.Result
	switch {
	case cur.IsObject():
		n, variant := 0, ""
		cur.ForEach(func(k, v gjson.Result) bool {
			switch {
			case k.Str == name:
				if n == 0 {
					found = v
				}
				n++
			case variant == "" && strings.EqualFold(k.Str, name):
				variant = strings.Clone(k.Str)
			}
			return true
		})
		switch {
		case n > 1:
			return gjson.Result{}, fmt.Sprintf("member %q appears %d times in one object", name, n)
		case variant != "":
			return gjson.Result{}, fmt.Sprintf("member %q is also named %q (Go's decoder matches names ignoring case)", name, variant)
		}
	case cur.IsArray() && isIndex(name):
		want, err := strconv.Atoi(name)
		i := 0
		cur.ForEach(func(_, v gjson.Result) bool {
			if err == nil && i == want {
				found = v
				return false
			}
			i++
			return err == nil && i <= want
		})
	}
	return found, ""
}

// isIndex: decimal digits, no sign, no leading zero (but "0").
func isIndex(s string) bool {
	if s == "" || (len(s) > 1 && s[0] == '0') {
		return false
	}
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// bodyString views a buffered body as a string without copying it, for gjson's scan:
// a buffered body is never written again, and what is kept of it is copied out.
func bodyString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
