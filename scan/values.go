package scan

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// A per-execution value is a member of an operation's answer that a new execution mints
// anew (a refund's id) and a replay repeats: it tells a replay from a second execution
// without a ledger. The scan never assumes one. It detects it from two executions of the
// same arguments under two fresh keys (or, for an operation that takes none, two plain
// calls): a member present in both answers, with an id-like name, whose values differ —
// and which is not an echo of what the call itself sent (its key, its entity, an argument
// value). A member whose value changes in every answer, a replay's too (a request id, a
// trace id, a served-at time), would make a replay look like a second execution: such
// names, members inside them (request.id) and _meta are left out, and a time is never
// id-like. The expect.unique_field of a profile
// is the same idea, declared instead of detected.

// jsonText marks a path segment where a string member holds JSON that was read into (an
// MCP tool's text content with a JSON document in it).
const jsonText = "#json"

// perResponse are name parts of members that differ in every answer, replays included.
var perResponse = []string{"request", "trace", "correlation", "span", "nonce", "session", "idempoten", "etag", "event"}

// execution is one call's success as the detector sees it.
type execution struct {
	body   []byte // the comparable answer body
	key    string // the key it carried ("" for none)
	entity string // its {{.Entity}}
	sent   []byte // the arguments or body it sent, rendered
}

// leaf is one scalar member of an answer.
type leaf struct {
	path  string // dotted, JSON text marked with jsonText
	name  string // the member's own name
	value string // its value as JSON text
	text  string // a string's value, for comparing with what was sent
	depth int
}

// leaves flattens an answer into its scalar members, reading into string members that
// hold a JSON object or array; at most maxLeaves, depth-first in document order.
func leaves(body []byte) []leaf {
	var out []leaf
	var walk func(r gjson.Result, path, name string, depth int)
	walk = func(r gjson.Result, path, name string, depth int) {
		if len(out) >= maxLeaves || depth > maxSchemaDepth {
			return
		}
		switch {
		case r.IsObject():
			r.ForEach(func(k, v gjson.Result) bool {
				walk(v, join(path, escapeSegment(k.String())), k.String(), depth+1)
				return len(out) < maxLeaves
			})
		case r.IsArray():
			i := 0
			r.ForEach(func(_, v gjson.Result) bool {
				walk(v, join(path, strconv.Itoa(i)), name, depth+1)
				i++
				return len(out) < maxLeaves
			})
		case r.Type == gjson.String:
			s := r.String()
			if t := strings.TrimSpace(s); (strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[")) && gjson.Valid(t) {
				walk(gjson.Parse(t), join(path, jsonText), name, depth)
				return
			}
			out = append(out, leaf{path: path, name: name, value: r.Raw, text: s, depth: depth})
		case r.Type == gjson.Number:
			out = append(out, leaf{path: path, name: name, value: r.Raw, depth: depth})
		}
	}
	if gjson.ValidBytes(body) {
		walk(gjson.ParseBytes(body), "", "", 0)
	}
	return out
}

// maxLeaves bounds the members read of one answer.
const maxLeaves = 2000

func escapeSegment(s string) string { return strings.ReplaceAll(s, ".", `\.`) }

// valueAt is the value of the member at path in an answer.
func valueAt(body []byte, path string) (string, bool) {
	for _, l := range leaves(body) {
		if l.path == path {
			return l.value, true
		}
	}
	return "", false
}

// perExecution finds the per-execution value of two executions: its path, or "".
func perExecution(a, b execution) string {
	bv := map[string]leaf{}
	for _, l := range leaves(b.body) {
		bv[l.path] = l
	}
	var found []leaf
	for _, l := range leaves(a.body) {
		other, ok := bv[l.path]
		if !ok || other.value == l.value || !idLike(l.name) && !numberLike(l.name) || perResponsePath(l.path) {
			continue
		}
		if echoes(l, a) || echoes(other, b) {
			continue
		}
		found = append(found, l)
	}
	if len(found) == 0 {
		return ""
	}
	sort.SliceStable(found, func(i, j int) bool {
		if found[i].depth != found[j].depth {
			return found[i].depth < found[j].depth
		}
		return strings.EqualFold(found[i].name, "id") && !strings.EqualFold(found[j].name, "id")
	})
	return found[0].path
}

// numberLike: invoice_number, orderNumber — a sequence a new execution draws from.
func numberLike(name string) bool {
	return strings.HasSuffix(strings.ToLower(name), "_number") || strings.HasSuffix(name, "Number")
}

// perResponsePath reports whether a member is, or sits inside, one named for what
// differs in every answer (request.id, trace_id, _meta.progressToken).
func perResponsePath(path string) bool {
	for _, seg := range strings.Split(strings.ReplaceAll(path, `\.`, "\x00"), ".") {
		l := strings.ToLower(seg)
		if l == "_meta" {
			return true
		}
		for _, p := range perResponse {
			if strings.Contains(l, p) {
				return true
			}
		}
	}
	return false
}

// echoes reports whether a member's value is something the call sent: its key, its
// entity, or one of its argument values.
func echoes(l leaf, e execution) bool {
	if l.text == "" {
		return sentScalar(e.sent, l.value)
	}
	if l.text == e.key || (e.entity != "" && strings.Contains(l.text, e.entity)) {
		return true
	}
	return sentScalar(e.sent, l.value)
}

func sentScalar(sent []byte, value string) bool {
	for _, s := range leaves(sent) {
		if s.value == value {
			return true
		}
	}
	return false
}

// showPath is a per-execution value's path for people: "result.structuredContent.refund_id",
// "result.content.0.text (JSON) refund_id".
func showPath(path string) string {
	return strings.ReplaceAll(strings.ReplaceAll(path, "."+jsonText+".", " (JSON) "), `\.`, ".")
}

// showValue clips a value for evidence.
func showValue(v string) string {
	if len(v) > 48 {
		return v[:47] + "…"
	}
	return v
}

// sameJSON reports whether two answers are the same JSON document (or the same bytes).
func sameJSON(a, b []byte) bool {
	if string(a) == string(b) {
		return true
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}
