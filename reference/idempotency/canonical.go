package idempotency

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxDepth bounds nesting, so a hostile body cannot exhaust the stack.
const maxDepth = 512

// CanonicalJSON re-encodes a JSON document with object members sorted by key, no
// insignificant whitespace, strings in one escaping and numbers in one exact spelling
// (4900, 4900.0 and 4.9e3 are all 4900; 0.50 and 5e-1 are 0.5). ok is false when body is
// not exactly one JSON value, or is one the middleware refuses (see BodyError). It is a
// small hand-written scanner rather than a decode into map[string]any because it runs on
// every keyed request.
//
// Two bodies with the same canonical form decode to the same Go value with encoding/json
// (a differential fuzz test holds it to that). That is why two members whose names
// encoding/json would take for one (equal, or equal ignoring case: it matches struct
// fields case-insensitively and keeps the last duplicate) are refused instead of sorted:
// sorting them would make {"amount":1,"AMOUNT":2} and {"AMOUNT":2,"amount":1} one
// request although a handler executes amount 2 for the first and 1 for the second.
// Strings decode as encoding/json decodes them (invalid UTF-8 becomes U+FFFD).
func CanonicalJSON(body []byte) ([]byte, bool) {
	out, ok, err := appendCanonicalJSON(make([]byte, 0, len(body)), body)
	if !ok || err != nil {
		return nil, false
	}
	return out, true
}

// appendCanonicalJSON appends body's canonical form to out. ok is false when body is not
// one JSON value; err is a *BodyError when it is one the middleware refuses. On failure
// out's contents past its original length are unspecified. Time and memory are linear in
// the body (objects add a sort of their members).
func appendCanonicalJSON(out, body []byte) ([]byte, bool, error) {
	c := canonicalizer{in: body}
	c.space()
	out, ok := c.value(out)
	if c.err != nil {
		return out, false, c.err
	}
	if !ok {
		return out, false, nil
	}
	c.space()
	return out, c.i == len(c.in), nil
}

type canonicalizer struct {
	in    []byte
	i     int
	depth int
	err   *BodyError // a refusal: the scan stops at the first
}

// BodyError is a JSON body the middleware refuses before it records the key (400
// application/problem+json, nothing executed): its fingerprint could not be trusted to
// say what the handler decodes.
type BodyError struct {
	Status int
	Slug   string // problem type, after ProblemBase
	Title  string
	Detail string
}

func (e *BodyError) Error() string { return e.Title + ": " + e.Detail }

// ErrDuplicateMember and ErrNumberRange classify a *BodyError for errors.Is.
var (
	ErrDuplicateMember = errors.New("duplicate member")
	ErrNumberRange     = errors.New("number out of range")
)

// Is lets errors.Is(err, ErrDuplicateMember) and errors.Is(err, ErrNumberRange) work.
func (e *BodyError) Is(target error) bool {
	return (target == ErrDuplicateMember && e.Slug == "duplicate-member") ||
		(target == ErrNumberRange && e.Slug == "number-out-of-range")
}

func duplicateMember(a, b []byte) *BodyError {
	detail := fmt.Sprintf("the object names the member %q twice; send each member once", a)
	if !bytes.Equal(a, b) {
		detail = fmt.Sprintf("the object has the members %q and %q, which a JSON decoder matches as one name (field names are matched case-insensitively); send each member once, spelled as documented", a, b)
	}
	return &BodyError{Status: 400, Slug: "duplicate-member", Title: "Duplicate member in the JSON body",
		Detail: detail + "; the request was not executed, so the same key may be reused"}
}

func numberOutOfRange(raw []byte) *BodyError {
	if len(raw) > 40 {
		raw = append(append([]byte(nil), raw[:40]...), "..."...)
	}
	return &BodyError{Status: 400, Slug: "number-out-of-range", Title: "Number out of range",
		Detail: fmt.Sprintf("the number %s is beyond what a 64-bit float holds (about 1.8e308); the request was not executed, so the same key may be reused", raw)}
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
	if err := checkDuplicates(members); err != nil {
		c.err = err
		return out, false
	}
	slices.SortFunc(members, func(a, b member) int { return bytes.Compare(a.key, b.key) })
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

// checkDuplicates refuses two members whose names encoding/json matches as one: equal
// under bytes.EqualFold (its case-insensitive field matching; an exact duplicate is the
// special case). Small objects compare pairwise; larger ones sort a copy by the folded
// name, so a hostile body with many members costs n log n, not n².
func checkDuplicates(members []member) *BodyError {
	if len(members) <= 8 {
		for i := range members {
			for j := i + 1; j < len(members); j++ {
				if bytes.EqualFold(members[i].key, members[j].key) {
					return duplicateMember(members[i].key, members[j].key)
				}
			}
		}
		return nil
	}
	byFold := slices.Clone(members)
	slices.SortFunc(byFold, func(a, b member) int { return compareFold(a.key, b.key) })
	for i := 1; i < len(byFold); i++ {
		if compareFold(byFold[i-1].key, byFold[i].key) == 0 {
			return duplicateMember(byFold[i-1].key, byFold[i].key)
		}
	}
	return nil
}

// compareFold orders names by their case-folded runes: 0 exactly when bytes.EqualFold.
func compareFold(a, b []byte) int {
	for len(a) > 0 && len(b) > 0 {
		ra, na := foldedRune(a)
		rb, nb := foldedRune(b)
		if ra != rb {
			if ra < rb {
				return -1
			}
			return 1
		}
		a, b = a[na:], b[nb:]
	}
	return len(a) - len(b)
}

// foldedRune decodes the first rune of s as the smallest rune of its case-fold orbit
// (what encoding/json's name matching compares).
func foldedRune(s []byte) (rune, int) {
	if c := s[0]; c < utf8.RuneSelf {
		if 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		return rune(c), 1
	}
	r, n := utf8.DecodeRune(s)
	for {
		next := unicode.SimpleFold(r)
		if next <= r {
			return next, n
		}
		r = next
	}
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
	escaped, nonASCII := false, false
	for c.i < len(c.in) {
		b := c.in[c.i]
		if !special[b] {
			c.i++
			continue
		}
		switch {
		case b >= utf8.RuneSelf:
			nonASCII = true
			c.i++
		case b == '"':
			c.i++
			raw := c.in[start+1 : c.i-1]
			if !escaped && (!nonASCII || utf8.Valid(raw)) {
				return raw, true, true
			}
			// Rare: let the standard decoder handle \u escapes, surrogates and invalid
			// UTF-8 (which it decodes as U+FFFD), so the canonical string is the decoded one.
			var s string
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

// special marks the bytes a string scan must stop at: quote, backslash, control, and
// the bytes of non-ASCII characters (whose UTF-8 is checked once at the end).
var special = func() (t [256]bool) {
	for b := range 0x20 {
		t[b] = true
	}
	for b := utf8.RuneSelf; b < 256; b++ {
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

// number reads a JSON number (RFC 8259 grammar) and writes its canonical spelling (see
// appendDecimal). A number beyond float64's range is refused (ErrNumberRange): the
// decoder could not hold it either.
func (c *canonicalizer) number(out []byte) ([]byte, bool) {
	d, n, ok := scanDecimal(c.in[c.i:])
	if !ok {
		return out, false
	}
	raw := c.in[c.i : c.i+n]
	c.i += n
	if d.plain && len(raw) <= maxPositional && string(raw) != "-0" {
		return append(out, raw...), true // already canonical
	}
	digits, exp := d.significant()
	if !finite(digits, exp, raw) {
		c.err = numberOutOfRange(raw)
		return out, false
	}
	return appendDecimal(out, d.neg, digits, exp), true
}

// CanonicalNumber is the canonical spelling of one JSON number (4900.0 and 4.9e3 are
// 4900, 0.50 is 0.5, 1e25 stays 1e25), in time linear in its length: no big-number
// arithmetic, whatever the exponent. The error is ErrNumberRange for a number beyond
// float64's range, ErrNotJSON for anything that is not a JSON number.
func CanonicalNumber(raw []byte) (string, error) {
	d, n, ok := scanDecimal(raw)
	if !ok || n != len(raw) {
		return "", ErrNotJSON
	}
	digits, exp := d.significant()
	if !finite(digits, exp, raw) {
		return "", numberOutOfRange(raw)
	}
	return string(appendDecimal(nil, d.neg, digits, exp)), nil
}

// ErrNotJSON: the input is not what the JSON grammar allows there.
var ErrNotJSON = errors.New("not JSON")

// maxPositional is the longest run of digits written positionally (as 12300 or 0.00123);
// past it a number is written d.ddde±N, so the canonical form never outgrows the input
// by more than a constant and 1e300 costs no 300-digit expansion.
const maxPositional = 21

// decimal is a JSON number as significant digits and a power of ten:
// value = ±digits × 10^exp, digits without leading or trailing zeros ("" is zero).
type decimal struct {
	neg               bool
	intPart, fracPart []byte
	exp               int64 // as written, saturated far beyond float64's range
	plain             bool  // an integer with no fraction nor exponent
}

// expLimit saturates exponents; anything near it is far outside float64 in either
// direction, so saturation never merges two numbers a decoder tells apart.
const expLimit = 1 << 40

// scanDecimal reads one JSON number at the start of in; n is its length.
func scanDecimal(in []byte) (d decimal, n int, ok bool) {
	i := 0
	digits := func() int {
		start := i
		for i < len(in) && in[i] >= '0' && in[i] <= '9' {
			i++
		}
		return i - start
	}
	if i < len(in) && in[i] == '-' {
		d.neg = true
		i++
	}
	intStart := i
	if k := digits(); k == 0 || (k > 1 && in[intStart] == '0') {
		return d, 0, false
	}
	d.intPart, d.plain = in[intStart:i], true
	if i < len(in) && in[i] == '.' {
		i++
		fracStart := i
		if digits() == 0 {
			return d, 0, false
		}
		d.fracPart, d.plain = in[fracStart:i], false
	}
	if i < len(in) && (in[i] == 'e' || in[i] == 'E') {
		i++
		d.plain = false
		expNeg := false
		if i < len(in) && (in[i] == '+' || in[i] == '-') {
			expNeg = in[i] == '-'
			i++
		}
		expStart := i
		if digits() == 0 {
			return d, 0, false
		}
		for _, b := range in[expStart:i] {
			if d.exp < expLimit {
				d.exp = d.exp*10 + int64(b-'0')
			}
		}
		if expNeg {
			d.exp = -d.exp
		}
	}
	return d, i, true
}

// significant returns the digits without leading and trailing zeros and the power of ten
// they are multiplied by. The digits are intPart followed by fracPart, which are only
// concatenated when both contribute.
func (d decimal) significant() ([]byte, int64) {
	all := d.intPart
	if len(d.fracPart) > 0 {
		all = append(append(make([]byte, 0, len(d.intPart)+len(d.fracPart)), d.intPart...), d.fracPart...)
	}
	exp := d.exp - int64(len(d.fracPart))
	lead := 0
	for lead < len(all) && all[lead] == '0' {
		lead++
	}
	all = all[lead:]
	trail := len(all)
	for trail > 0 && all[trail-1] == '0' {
		trail--
	}
	exp += int64(len(all) - trail)
	return all[:trail], exp
}

// finite reports whether the number (its significant digits and power of ten; raw as
// written) fits a float64, what encoding/json decodes into any.
func finite(digits []byte, exp int64, raw []byte) bool {
	if len(digits) == 0 {
		return true
	}
	if adjusted := int64(len(digits)) + exp - 1; adjusted < 308 {
		return true
	}
	// Near the edge only the exact parse knows; strconv is linear in the input.
	_, err := strconv.ParseFloat(string(raw), 64)
	return err == nil
}

// appendDecimal writes the canonical spelling of ±digits×10^exp (see significant): "0"
// for zero; positionally when it takes at most maxPositional digits (4900, 0.5, 0.001);
// otherwise d.ddde±N (1.5e300, 1e-40).
func appendDecimal(out []byte, neg bool, digits []byte, exp int64) []byte {
	if len(digits) == 0 {
		return append(out, '0')
	}
	if neg {
		out = append(out, '-')
	}
	n := int64(len(digits))
	switch {
	case exp >= 0 && n+exp <= maxPositional:
		out = append(out, digits...)
		for range exp {
			out = append(out, '0')
		}
		return out
	case exp < 0 && -exp < n: // 12.5
		point := n + exp
		out = append(out, digits[:point]...)
		out = append(out, '.')
		return append(out, digits[point:]...)
	case exp < 0 && -exp-n < maxPositional: // 0.00125
		out = append(out, '0', '.')
		for range -exp - n {
			out = append(out, '0')
		}
		return append(out, digits...)
	}
	out = append(out, digits[0])
	if n > 1 {
		out = append(out, '.')
		out = append(out, digits[1:]...)
	}
	out = append(out, 'e')
	return strconv.AppendInt(out, n+exp-1, 10)
}
