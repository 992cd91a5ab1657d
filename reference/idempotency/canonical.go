package idempotency

import (
	"bytes"
	"encoding/json"
	"math/big"
	"slices"
	"strconv"
	"strings"
)

// maxDepth bounds nesting, so a hostile body cannot exhaust the stack.
const maxDepth = 512

// CanonicalJSON re-encodes a JSON document with object members sorted by key, no
// insignificant whitespace, strings in one escaping and numbers in one exact spelling
// (4900, 4900.0 and 4.9e3 are all 4900; 0.50 and 5e-1 are 0.5). ok is false when body is
// not exactly one JSON value. It is a small hand-written scanner rather than a decode
// into map[string]any because it runs on every keyed request.
func CanonicalJSON(body []byte) ([]byte, bool) {
	out, ok := appendCanonicalJSON(make([]byte, 0, len(body)), body)
	if !ok {
		return nil, false
	}
	return out, true
}

// appendCanonicalJSON appends body's canonical form to out; on failure out's contents
// past its original length are unspecified.
func appendCanonicalJSON(out, body []byte) ([]byte, bool) {
	c := canonicalizer{in: body}
	c.space()
	out, ok := c.value(out)
	if !ok {
		return out, false
	}
	c.space()
	return out, c.i == len(c.in)
}

type canonicalizer struct {
	in    []byte
	i     int
	depth int
}

func (c *canonicalizer) space() {
	for c.i < len(c.in) {
		switch c.in[c.i] {
		case ' ', '\t', '\n', '\r':
			c.i++
		default:
			return
		}
	}
}

func (c *canonicalizer) peek() byte {
	if c.i < len(c.in) {
		return c.in[c.i]
	}
	return 0
}

func (c *canonicalizer) value(out []byte) ([]byte, bool) {
	switch c.peek() {
	case '{':
		return c.object(out)
	case '[':
		return c.array(out)
	case '"':
		s, plain, ok := c.str()
		return appendString(out, s, plain), ok
	case 't':
		return c.literal(out, "true")
	case 'f':
		return c.literal(out, "false")
	case 'n':
		return c.literal(out, "null")
	}
	return c.number(out)
}

func (c *canonicalizer) literal(out []byte, word string) ([]byte, bool) {
	if !strings.HasPrefix(string(c.in[c.i:]), word) {
		return out, false
	}
	c.i += len(word)
	return append(out, word...), true
}

type member struct {
	key        []byte // decoded
	plain      bool   // key needs no escaping
	start, end int    // the canonical value, in out past the object's start
}

func (c *canonicalizer) object(out []byte) ([]byte, bool) {
	if c.depth++; c.depth > maxDepth {
		return out, false
	}
	defer func() { c.depth-- }()
	c.i++ // '{'
	c.space()
	if c.peek() == '}' {
		c.i++
		return append(out, "{}"...), true
	}
	// The members' canonical values are written to out in arrival order, past where the
	// object will start; the sorted object is then assembled after them and moved back.
	// out is the only buffer, so a request body costs no allocation beyond out's growth.
	// Small objects (every request body we expect) keep their member list on the stack.
	var memberArr [8]member
	members, base := memberArr[:0], len(out)
	for {
		c.space()
		if c.peek() != '"' {
			return out, false
		}
		key, plain, ok := c.str()
		if !ok {
			return out, false
		}
		c.space()
		if c.peek() != ':' {
			return out, false
		}
		c.i++
		c.space()
		start := len(out)
		if out, ok = c.value(out); !ok {
			return out, false
		}
		members = append(members, member{key: key, plain: plain, start: start, end: len(out)})
		c.space()
		switch c.peek() {
		case ',':
			c.i++
			continue
		case '}':
			c.i++
		default:
			return out, false
		}
		break
	}
	slices.SortStableFunc(members, func(a, b member) int { return bytes.Compare(a.key, b.key) })
	values := len(out)
	out = append(out, '{')
	for i, m := range members {
		if i > 0 {
			out = append(out, ',')
		}
		out = appendString(out, m.key, m.plain)
		out = append(out, ':')
		out = append(out, out[m.start:m.end]...)
	}
	out = append(out, '}')
	n := copy(out[base:], out[values:])
	return out[:base+n], true
}

func (c *canonicalizer) array(out []byte) ([]byte, bool) {
	if c.depth++; c.depth > maxDepth {
		return out, false
	}
	defer func() { c.depth-- }()
	c.i++ // '['
	out = append(out, '[')
	c.space()
	if c.peek() == ']' {
		c.i++
		return append(out, ']'), true
	}
	for n := 0; ; n++ {
		if n > 0 {
			out = append(out, ',')
		}
		c.space()
		var ok bool
		if out, ok = c.value(out); !ok {
			return out, false
		}
		c.space()
		switch c.peek() {
		case ',':
			c.i++
			continue
		case ']':
			c.i++
			return append(out, ']'), true
		}
		return out, false
	}
}

// str reads a JSON string and returns its decoded bytes: a slice of the input when
// the string has no escapes (the common case: no allocation). plain says the bytes hold
// no quote, backslash nor control character, so they need no escaping when written.
func (c *canonicalizer) str() (s []byte, plain, ok bool) {
	start := c.i
	c.i++ // opening quote
	escaped := false
	for c.i < len(c.in) {
		b := c.in[c.i]
		if !special[b] {
			c.i++
			continue
		}
		switch {
		case b == '"':
			c.i++
			if !escaped {
				return c.in[start+1 : c.i-1], true, true
			}
			var s string // rare: let the standard decoder handle \u escapes and surrogates
			err := json.Unmarshal(c.in[start:c.i], &s)
			return []byte(s), false, err == nil
		case b == '\\':
			escaped = true
			c.i += 2
		default: // a control character
			return nil, false, false
		}
	}
	return nil, false, false
}

// special marks the bytes a string scan must stop at: quote, backslash, control.
var special = func() (t [256]bool) {
	for b := range 0x20 {
		t[b] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// appendString writes s as a canonical JSON string; plain (from str) skips the escaping
// scan.
func appendString(out, s []byte, plain bool) []byte {
	if plain {
		out = append(out, '"')
		out = append(out, s...)
		return append(out, '"')
	}
	return appendCanonicalString(out, s)
}

// appendCanonicalString writes s with the minimal escaping: quote, backslash and
// control characters only.
func appendCanonicalString(out []byte, s []byte) []byte {
	const hex = "0123456789abcdef"
	out = append(out, '"')
	for i := 0; i < len(s); i++ {
		switch b := s[i]; {
		case b == '"' || b == '\\':
			out = append(out, '\\', b)
		case b < 0x20:
			out = append(out, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xf])
		default:
			out = append(out, b)
		}
	}
	return append(out, '"')
}

// maxExponent bounds the exponents canonicalised exactly; a number beyond it makes the
// body fall back to a byte-for-byte fingerprint instead of costing unbounded arithmetic.
const maxExponent = 400

// number reads a JSON number (RFC 8259 grammar) and writes its canonical spelling: an
// integer without exponent or fraction, otherwise the shortest exact decimal (0.10 and
// 1e-1 are both 0.1).
func (c *canonicalizer) number(out []byte) ([]byte, bool) {
	start := c.i
	digits := func() int {
		n := 0
		for c.i < len(c.in) && c.in[c.i] >= '0' && c.in[c.i] <= '9' {
			c.i++
			n++
		}
		return n
	}
	if c.peek() == '-' {
		c.i++
	}
	intStart := c.i
	if n := digits(); n == 0 || (n > 1 && c.in[intStart] == '0') {
		return out, false
	}
	plain, fraction, exponent := true, 0, 0
	if c.peek() == '.' {
		c.i++
		plain = false
		if fraction = digits(); fraction == 0 {
			return out, false
		}
	}
	if p := c.peek(); p == 'e' || p == 'E' {
		c.i++
		plain = false
		expStart := c.i
		if p := c.peek(); p == '+' || p == '-' {
			c.i++
		}
		if digits() == 0 {
			return out, false
		}
		e, err := strconv.Atoi(string(c.in[expStart:c.i]))
		if err != nil || e > maxExponent || e < -maxExponent {
			return out, false
		}
		exponent = e
	}
	if raw := c.in[start:c.i]; plain && string(raw) != "-0" {
		return append(out, raw...), true // already canonical; skips the big.Rat
	}
	text := string(c.in[start:c.i])
	if fraction > maxExponent {
		return out, false
	}
	r, ok := new(big.Rat).SetString(text)
	if !ok {
		return out, false
	}
	if r.IsInt() {
		return r.Num().Append(out, 10), true
	}
	dec := r.FloatString(max(fraction-exponent, 1)) // exact: the value has that many decimals at most
	dec = strings.TrimRight(dec, "0")
	return append(out, dec...), true
}
