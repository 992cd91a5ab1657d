// Package h1 recognises the common, unambiguous shape of an HTTP/1.1 request head and
// response head in a byte slice, without allocating, so the fault proxy can forward the
// everyday exchange (keep-alive, a Content-Length body, plain header fields) without
// Go's net/http server building a Request, header maps and a ResponseWriter for it.
//
// It is deliberately a recogniser, not a full parser: anything it is not certain to read
// exactly as net/http does is Unsupported, and the proxy then hands the connection, bytes
// unread, to net/http, whose parser and smuggling defences decide. Unsupported covers,
// among others: Transfer-Encoding (so CL+TE never reaches this code), more than one
// Content-Length field, a Content-Length that is not plain digits, obs-fold (a line that
// starts with white space), a bare CR or LF, white space before a field's colon, bytes
// outside visible ASCII, space and tab, HTTP versions other than 1.1, CONNECT and the
// HTTP/2 preface, Expect, Upgrade, Pragma (net/http adds a Cache-Control field for it),
// every hop-by-hop field but Connection: keep-alive or close (and, on responses,
// Keep-Alive and Proxy-Connection), a missing or repeated Host, more than MaxFields
// fields, and heads larger than the caller's limit. A differential test holds it to that:
// whatever it accepts, net/http's ReadRequest and server (or ReadResponse) accept with the
// same method, target, status, fields and body length.
//
// No library fits: net/http's parser allocates per request by design, and fasthttp's
// normalises field names and has body and connection rules of its own, which would make
// the proxy's forwarding differ from its net/http path.
package h1

import "bytes"

// Verdict is what a parse found.
type Verdict int

const (
	// Complete: the buffer starts with a whole head of the supported shape.
	Complete Verdict = iota
	// Incomplete: the head has not ended within the buffer, which holds fewer than maxHead
	// bytes, and every whole line in it is of the supported shape; the line that has not
	// ended yet is judged once it has. The caller reads more and parses again.
	Incomplete
	// Unsupported: the head is malformed, ambiguous or of a shape this package leaves to
	// net/http.
	Unsupported
)

func (v Verdict) String() string {
	switch v {
	case Complete:
		return "complete"
	case Incomplete:
		return "incomplete"
	default:
		return "unsupported"
	}
}

// Field is one header field as it arrived: the name's case kept, the value without the
// white space around it. Both alias the parsed buffer.
type Field struct {
	Name, Value []byte
	// Hop marks a hop-by-hop field the parser accepted (Connection: keep-alive or close,
	// and on responses Keep-Alive and Proxy-Connection): it describes the connection and
	// is never forwarded.
	Hop bool
}

// Request is a parsed request head. Its slices alias the parsed buffer.
type Request struct {
	Method []byte
	Target []byte // origin form: starts with '/'
	Host   []byte
	Fields []Field // in arrival order, Host and hop-by-hop fields included
	// ContentLength is the body's length; -1 when the request has no Content-Length
	// (then, without Transfer-Encoding, it has no body).
	ContentLength int64
	Close         bool // Connection: close: the connection ends after the answer
	HeadLen       int  // bytes of the head, the blank line included
}

// Response is a parsed response head. Its slices alias the parsed buffer.
type Response struct {
	Status int
	Reason []byte
	Fields []Field
	// ContentLength is the Content-Length field's value, -1 without one (only bodyless
	// answers are Complete without one). A HEAD, 204 or 304 answer keeps the field's
	// value although no body follows (net/http reports 0 for a 204 or 304 to anything
	// but HEAD); BodyLength says how many body bytes follow.
	ContentLength int64
	Close         bool // Connection: close
	HeadLen       int  // bytes of the head, the blank line included
}

// MaxFields is the most header fields a head may have to be Complete.
const MaxFields = 100

// ParseRequest parses the request head at the start of buf, at most maxHead bytes of it.
// r's Fields slice is reused.
func ParseRequest(buf []byte, maxHead int, r *Request) Verdict {
	*r = Request{Fields: r.Fields[:0], ContentLength: -1}
	head, v := cut(buf, maxHead)
	if v == Unsupported {
		return v
	}
	line, rest, ok := nextLine(head)
	if !ok {
		return v
	}
	sp := bytes.IndexByte(line, ' ')
	if sp <= 0 || !isMethod(line[:sp]) {
		return Unsupported
	}
	r.Method = line[:sp]
	if string(r.Method) == "CONNECT" || string(r.Method) == "PRI" {
		return Unsupported
	}
	target, ok := bytes.CutSuffix(line[sp+1:], []byte(" HTTP/1.1"))
	if !ok || !validTarget(target) {
		return Unsupported
	}
	r.Target = target
	hosts := 0
	for {
		line, rest, ok = nextLine(rest)
		if !ok {
			return v
		}
		if len(line) == 0 {
			break
		}
		f, ok := parseField(line)
		if !ok || len(r.Fields) == MaxFields {
			return Unsupported
		}
		switch {
		case equalFold(f.Name, "Host"):
			hosts++
			if !validHost(f.Value) {
				return Unsupported
			}
			r.Host = f.Value
		case !framing(&f, &r.ContentLength, &r.Close):
			return Unsupported
		}
		r.Fields = append(r.Fields, f)
	}
	if hosts != 1 {
		return Unsupported
	}
	if v == Incomplete {
		// cut found the blank line, so the loop cannot run out of lines before it.
		return Unsupported
	}
	r.HeadLen = len(head)
	return Complete
}

// ParseResponse parses the response head at the start of buf, at most maxHead bytes.
// bodyless says the answer has no body whatever its fields say (the request was HEAD);
// 204 and 304 answers never have one. An answer with neither a Content-Length nor a
// reason to be bodyless is Unsupported (chunked or read until close: net/http reads it).
func ParseResponse(buf []byte, maxHead int, bodyless bool, r *Response) Verdict {
	*r = Response{Fields: r.Fields[:0], ContentLength: -1}
	head, v := cut(buf, maxHead)
	if v == Unsupported {
		return v
	}
	line, rest, ok := nextLine(head)
	if !ok {
		return v
	}
	status, ok := bytes.CutPrefix(line, []byte("HTTP/1.1 "))
	if !ok || len(status) < 3 || !isDigit(status[0]) || !isDigit(status[1]) || !isDigit(status[2]) {
		return Unsupported
	}
	r.Status = int(status[0]-'0')*100 + int(status[1]-'0')*10 + int(status[2]-'0')
	if r.Status < 200 || r.Status > 599 {
		return Unsupported // 1xx interim answers and odd codes: net/http reads them
	}
	if len(status) > 3 {
		if status[3] != ' ' || !validValue(status[4:]) {
			return Unsupported
		}
		r.Reason = status[4:]
	}
	for {
		line, rest, ok = nextLine(rest)
		if !ok {
			return v
		}
		if len(line) == 0 {
			break
		}
		f, ok := parseField(line)
		if !ok || len(r.Fields) == MaxFields {
			return Unsupported
		}
		switch {
		case equalFold(f.Name, "Keep-Alive"), equalFold(f.Name, "Proxy-Connection"):
			f.Hop = true
		case !framing(&f, &r.ContentLength, &r.Close):
			return Unsupported
		}
		r.Fields = append(r.Fields, f)
	}
	if v == Incomplete {
		return Unsupported
	}
	if bodyless || r.Status == 204 || r.Status == 304 {
		if r.Status == 204 && r.ContentLength > 0 {
			return Unsupported // a 204 announcing a body is an upstream bug net/http handles
		}
	} else if r.ContentLength < 0 {
		return Unsupported
	}
	r.HeadLen = len(head)
	return Complete
}

// framing reads the fields requests and responses share the rules of: Content-Length
// (one, plain digits), Connection (keep-alive or close, marked Hop), and those left to
// net/http. false: the head is Unsupported.
func framing(f *Field, length *int64, closing *bool) bool {
	switch {
	case equalFold(f.Name, "Content-Length"):
		if *length >= 0 {
			return false
		}
		n, ok := parseLength(f.Value)
		*length = n
		return ok
	case equalFold(f.Name, "Connection"):
		switch {
		case equalFold(f.Value, "close"):
			*closing = true
		case equalFold(f.Value, "keep-alive"):
		default:
			return false // a list, or fields named to drop: net/http does that
		}
		f.Hop = true
	case isLeftToNetHTTP(f.Name):
		return false
	}
	return true
}

// BodyLength is how many body bytes follow the head: 0 for a bodyless answer.
func (r *Response) BodyLength(bodyless bool) int64 {
	if bodyless || r.Status == 204 || r.Status == 304 || r.ContentLength < 0 {
		return 0
	}
	return r.ContentLength
}

// cut returns the head (up to and including the blank line) when it ends within the
// first maxHead bytes; else the bytes to parse so far, Incomplete, or Unsupported when
// maxHead bytes hold no end. A bare CR or LF anywhere in the head is Unsupported.
func cut(buf []byte, maxHead int) ([]byte, Verdict) {
	maxHead = max(maxHead, 0) // a limit below zero holds no head, like zero
	scan := buf[:min(len(buf), maxHead)]
	v := Incomplete
	if end := bytes.Index(scan, []byte("\r\n\r\n")); end >= 0 {
		scan, v = scan[:end+4], Complete
	} else if len(scan) == maxHead {
		return nil, Unsupported
	}
	// Every LF must follow a CR, and then every CR but a last one still waiting for its
	// LF is followed by one when the counts agree. Jumping from LF to LF (and counting)
	// runs on the vectorised byte search rather than a loop over every byte.
	lfs := 0
	for i := 0; ; lfs++ {
		j := bytes.IndexByte(scan[i:], '\n')
		if j < 0 {
			break
		}
		if i+j == 0 || scan[i+j-1] != '\r' {
			return nil, Unsupported
		}
		i += j + 1
	}
	crs := bytes.Count(scan, []byte{'\r'})
	if crs != lfs && (crs != lfs+1 || scan[len(scan)-1] != '\r') {
		return nil, Unsupported
	}
	return scan, v
}

// nextLine splits off the next CRLF-terminated line; ok is false when no whole line is
// left (an incomplete head).
func nextLine(b []byte) (line, rest []byte, ok bool) {
	i := bytes.Index(b, []byte("\r\n"))
	if i < 0 {
		return nil, nil, false
	}
	return b[:i], b[i+2:], true
}

// parseField splits "name:OWS value OWS". A name must be a token right up to the colon
// (no white space before it: RFC 9112 §5.1 says reject), and the value plain.
func parseField(line []byte) (Field, bool) {
	colon := bytes.IndexByte(line, ':')
	if colon <= 0 {
		return Field{}, false
	}
	name := line[:colon]
	for _, c := range name {
		if !isTokenChar(c) {
			return Field{}, false
		}
	}
	value := trimOWS(line[colon+1:])
	if !validValue(value) {
		return Field{}, false
	}
	return Field{Name: name, Value: value}, true
}

func trimOWS(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// validValue: visible ASCII, space and tab only (obs-text and controls are left to
// net/http).
func validValue(b []byte) bool {
	for _, c := range b {
		if (c < 0x20 && c != '\t') || c > 0x7e {
			return false
		}
	}
	return true
}

// parseLength reads a Content-Length: 1 to 18 digits, nothing else.
func parseLength(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if !isDigit(c) {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// isLeftToNetHTTP names the fields whose handling this package leaves to net/http: the
// framing and hop-by-hop ones (RFC 9110 §7.6.1), Expect, and Pragma, because net/http
// reads "Pragma: no-cache" as if "Cache-Control: no-cache" came with it (a field the
// sender never wrote).
func isLeftToNetHTTP(name []byte) bool {
	for _, s := range [...]string{"Transfer-Encoding", "Te", "Trailer", "Upgrade", "Expect",
		"Keep-Alive", "Proxy-Connection", "Proxy-Authenticate", "Proxy-Authorization", "Pragma"} {
		if equalFold(name, s) {
			return true
		}
	}
	return false
}

// isMethod: upper-case letters only (every registered method; others go to net/http).
func isMethod(b []byte) bool {
	for _, c := range b {
		if c < 'A' || c > 'Z' {
			return false
		}
	}
	return true
}

// validTarget accepts an origin-form target whose bytes are unreserved, sub-delims, ':',
// '@', '/', '?' or a valid %XX escape: the set for which Go's URL parsing gives back the
// same request URI, so the journal and the upstream see what the client sent.
func validTarget(b []byte) bool {
	if len(b) == 0 || b[0] != '/' {
		return false
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', isDigit(c):
		case c == '%':
			if i+2 >= len(b) || !isHex(b[i+1]) || !isHex(b[i+2]) {
				return false
			}
			i += 2
		default:
			if !targetChars[c] {
				return false
			}
		}
	}
	return true
}

// validHost accepts a reg-name or IPv4 host with an optional port, or a bracketed IPv6
// literal: letters, digits, "-._:[]".
func validHost(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if !hostChars[c] {
			return false
		}
	}
	return true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isHex(c byte) bool { return isDigit(c) || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

// isTokenChar: RFC 9110 tchar.
func isTokenChar(c byte) bool { return tokenChars[c] }

// The character classes as tables: the parser asks once per byte of every head.
var (
	tokenChars  = charTable("!#$%&'*+-.^_`|~")
	targetChars = charTable("-._~!$&'()*+,;=:@/?") // besides letters, digits and %XX
	hostChars   = charTable("-._:[]")
)

// charTable is the letters and digits plus extra.
func charTable(extra string) (t [256]bool) {
	for c := range 256 {
		t[c] = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
	}
	for i := range len(extra) {
		t[extra[i]] = true
	}
	return t
}

// equalFold compares an ASCII name with a constant, ignoring case.
func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		d := s[i]
		if 'A' <= d && d <= 'Z' {
			d += 'a' - 'A'
		}
		if c != d {
			return false
		}
	}
	return true
}
