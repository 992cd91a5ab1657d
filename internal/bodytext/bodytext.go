// Package bodytext renders HTTP response bodies for people: a JSON body as JSON text
// (compact on one line, or indented), anything else as text, never as a Go-quoted string
// full of backslashes; and the differences between two bodies, member by member for JSON
// ("amount: 4900 → 5000"), line by line otherwise.
//
// Every rendering is bounded by bytes: a body longer than the limit is cut at a UTF-8
// boundary and ends with a marker saying how many bytes were left out. Control characters
// (a body may hold any byte) are shown escaped so they cannot garble a terminal or a
// table. Bodies that are not valid UTF-8 are shown with the invalid bytes escaped.
package bodytext

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// Empty is how an empty body is shown.
const Empty = "(empty body)"

// Line renders a body on one line: compact JSON when it is JSON, else its text, cut
// after max bytes.
func Line(body []byte, max int) string {
	if len(bytes.TrimSpace(body)) == 0 {
		return Empty
	}
	if json.Valid(body) {
		var b bytes.Buffer
		if json.Compact(&b, body) == nil {
			return clip(b.String(), max)
		}
	}
	return clip(oneLine(string(body)), max)
}

// Pretty renders a body for a block of text: indented JSON when it is JSON, else its
// text as is, cut after max bytes.
func Pretty(body []byte, max int) string {
	if len(bytes.TrimSpace(body)) == 0 {
		return Empty
	}
	if json.Valid(body) {
		var b bytes.Buffer
		if json.Indent(&b, bytes.TrimSpace(body), "", "  ") == nil {
			return clip(b.String(), max)
		}
	}
	return clip(text(string(body), false), max)
}

// Change is one difference between two bodies: the member (a gjson-style path such as
// "refund.amount" or "items.0.id"; "line 3" for a text body; "body" when only one of
// the two is JSON) with its value in each. A member missing on one side has "(absent)".
type Change struct {
	Path     string
	From, To string
}

func (c Change) String() string { return c.Path + ": " + c.From + " → " + c.To }

// Absent is the value of a member one of the two bodies does not have.
const Absent = "(absent)"

// maxChanges bounds a diff: the first differences are enough to see what changed.
const maxChanges = 12

// valueBytes bounds each value shown in a Change.
const valueBytes = 60

// Diff lists what differs from the committed body to the other one (a replay, a
// retry), in the committed body's member order, then the members only the other has.
// Equal bodies give nil. At most 12 changes are listed; a 13th is "…: N more".
func Diff(committed, other []byte) []Change {
	if bytes.Equal(committed, other) {
		return nil
	}
	a, b := bytes.TrimSpace(committed), bytes.TrimSpace(other)
	var out []Change
	switch {
	case len(a) > 0 && len(b) > 0 && json.Valid(a) && json.Valid(b):
		out = jsonDiff(a, b)
		if len(out) == 0 {
			// Same members and values, other bytes: spelling or whitespace.
			out = []Change{{Path: "body", From: Line(committed, valueBytes), To: Line(other, valueBytes) + " (same members, other bytes)"}}
		}
	case json.Valid(a) != json.Valid(b) || len(a) == 0 || len(b) == 0:
		out = []Change{{Path: "body", From: Line(committed, valueBytes), To: Line(other, valueBytes)}}
	default:
		out = lineDiff(string(committed), string(other))
	}
	if len(out) > maxChanges {
		rest := len(out) - maxChanges
		out = append(out[:maxChanges:maxChanges], Change{Path: "…", From: "", To: strconv.Itoa(rest) + " more"})
	}
	return out
}

// Summary is the changes on one line, "amount: 4900 → 5000; id: re_a → re_b".
func Summary(changes []Change) string {
	parts := make([]string, len(changes))
	for i, c := range changes {
		if c.Path == "…" {
			parts[i] = "… " + c.To
			continue
		}
		parts[i] = c.String()
	}
	return strings.Join(parts, "; ")
}

// jsonDiff compares two JSON values member by member. It is hand-written because what
// is needed is small — leaves compared by their raw bytes, paths in document order — and
// a general JSON-patch library would report moves and array edits nobody reads here.
func jsonDiff(a, b []byte) []Change {
	var out []Change
	var walk func(path string, x, y gjson.Result)
	walk = func(path string, x, y gjson.Result) {
		switch {
		case !x.Exists() || !y.Exists() || container(x) != container(y) || !container(x):
			if x.Raw != y.Raw {
				out = append(out, Change{Path: orRoot(path), From: value(x), To: value(y)})
			}
			return
		}
		seen := map[string]bool{}
		var xNames, yNames []string
		forEach(x, func(name string, v gjson.Result) {
			seen[name] = true
			xNames = append(xNames, name)
			walk(join(path, name), v, member(y, name))
		})
		forEach(y, func(name string, v gjson.Result) {
			yNames = append(yNames, name)
			if !seen[name] {
				walk(join(path, name), gjson.Result{}, v)
			}
		})
		// The same members in another order are other bytes too.
		if x.IsObject() && len(xNames) == len(yNames) && !slices.Equal(xNames, yNames) && sameSet(xNames, seen, yNames) {
			out = append(out, Change{Path: join(path, "(member order)"), From: names(xNames), To: names(yNames)})
		}
	}
	walk("", gjson.ParseBytes(a), gjson.ParseBytes(b))
	return out
}

func sameSet(a []string, inA map[string]bool, b []string) bool {
	for _, n := range b {
		if !inA[n] {
			return false
		}
	}
	return len(a) == len(b)
}

// names lists member names for a change, cut like any value.
func names(list []string) string { return clip(strings.Join(list, ", "), valueBytes) }

func container(r gjson.Result) bool { return r.IsObject() || r.IsArray() }

// forEach calls fn with each object member's name, or each array element's index
// (gjson's ForEach gives an array element no key).
func forEach(r gjson.Result, fn func(name string, v gjson.Result)) {
	i := 0
	r.ForEach(func(k, v gjson.Result) bool {
		name := k.String()
		if r.IsArray() {
			name = strconv.Itoa(i)
		}
		i++
		fn(name, v)
		return true
	})
}

// member finds a member by name (or index) without gjson path syntax, so a name with a
// dot or a wildcard in it is matched literally.
func member(r gjson.Result, name string) gjson.Result {
	var found gjson.Result
	if r.IsArray() {
		i, err := strconv.Atoi(name)
		if arr := r.Array(); err == nil && i >= 0 && i < len(arr) {
			return arr[i]
		}
		return found
	}
	r.ForEach(func(k, v gjson.Result) bool {
		if k.String() == name {
			found = v
			return false
		}
		return true
	})
	return found
}

func value(r gjson.Result) string {
	if !r.Exists() {
		return Absent
	}
	return Line([]byte(r.Raw), valueBytes)
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func orRoot(path string) string {
	if path == "" {
		return "body"
	}
	return path
}

// lineDiff pairs the lines of two texts by position: enough for the short error pages
// and plain-text bodies a target sends.
func lineDiff(a, b string) []Change {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	var out []Change
	for i := 0; i < max(len(la), len(lb)); i++ {
		x, y := Absent, Absent
		if i < len(la) {
			x = clip(oneLine(la[i]), valueBytes)
		}
		if i < len(lb) {
			y = clip(oneLine(lb[i]), valueBytes)
		}
		if x != y {
			out = append(out, Change{Path: fmt.Sprintf("line %d", i+1), From: x, To: y})
		}
	}
	return out
}

// oneLine shows a text's line breaks and control characters escaped.
func oneLine(s string) string { return text(s, true) }

// text shows a text's control characters (and, when escapeBreaks, its line breaks and
// tabs) escaped, and bytes that are not UTF-8 as \xNN.
func text(s string, escapeBreaks bool) string {
	var b strings.Builder
	for len(s) > 0 {
		r, size := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[0])
		case !escapeBreaks && (r == '\n' || r == '\t'):
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteString(s[:size])
		}
		s = s[size:]
	}
	return b.String()
}

// clip cuts s after max bytes at a rune boundary and says how much was left out.
func clip(s string, max int) string {
	if max <= 0 || len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("… (%d more bytes)", len(s)-cut)
}
