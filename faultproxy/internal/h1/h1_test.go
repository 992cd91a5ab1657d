package h1_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/faultproxy/internal/h1"
)

// testMaxHead is the head limit every table and differential test parses with; the
// limit's own edges have tests of their own.
const testMaxHead = 8 << 10

// head joins lines with CRLF and ends them with the blank line.
func head(lines ...string) string { return strings.Join(lines, "\r\n") + "\r\n\r\n" }

// manyFields is "X-Fn: v" lines, n of them.
func manyFields(n int) []string {
	lines := make([]string, n)
	for i := range lines {
		lines[i] = fmt.Sprintf("X-F%d: v", i)
	}
	return lines
}

type field struct {
	name, value string
	hop         bool
}

// wantRequest is what a Complete request must hold, the slices compared as strings.
type wantRequest struct {
	method, target, host string
	fields               []field
	contentLength        int64
	close                bool
	headLen              int
}

type requestCase struct {
	name  string
	input string
	want  h1.Verdict
	// parsed, when set, is the whole parse a Complete case must give.
	parsed *wantRequest
}

const keyedPOST = "POST /v1/payments?expand=customer HTTP/1.1\r\n" +
	"Host: api.example.test:8443\r\n" +
	"User-Agent: idemproof-client/1.0\r\n" +
	"Accept: application/json\r\n" +
	"Content-Type: application/json\r\n" +
	"Idempotency-Key: 8f14e45f-ceea-467f-a0e6-a1b2c3d4e5f6\r\n" +
	"Authorization: Bearer sk_test_4eC39HqLyjWDarjtT1zdp7dc\r\n" +
	"Connection: keep-alive\r\n" +
	"Content-Length: 27\r\n" +
	"\r\n"

// requestCases are the request heads of the table test; the differential tests and the
// fuzz targets start from them too.
var requestCases = []requestCase{
	// The supported shape.
	{name: "GET without a body", input: head("GET / HTTP/1.1", "Host: a"), want: h1.Complete,
		parsed: &wantRequest{method: "GET", target: "/", host: "a",
			fields: []field{{name: "Host", value: "a"}}, contentLength: -1, headLen: 27}},
	{name: "POST with Content-Length and its body", input: head("POST /pay HTTP/1.1", "Host: a", "Content-Length: 5") + "hello",
		want: h1.Complete, parsed: &wantRequest{method: "POST", target: "/pay", host: "a",
			fields: []field{{name: "Host", value: "a"}, {name: "Content-Length", value: "5"}}, contentLength: 5, headLen: 50}},
	{name: "field name case kept", input: head("GET / HTTP/1.1", "hOsT: a", "x-IdemPotency-KEY: k"), want: h1.Complete,
		parsed: &wantRequest{method: "GET", target: "/", host: "a",
			fields: []field{{name: "hOsT", value: "a"}, {name: "x-IdemPotency-KEY", value: "k"}}, contentLength: -1, headLen: 49}},
	{name: "OWS around a value trimmed, inner white space kept", input: head("GET / HTTP/1.1", "Host:a", "X: \t a \t b\t "), want: h1.Complete,
		parsed: &wantRequest{method: "GET", target: "/", host: "a",
			fields: []field{{name: "Host", value: "a"}, {name: "X", value: "a \t b"}}, contentLength: -1, headLen: 40}},
	{name: "Connection keep-alive marked hop", input: head("GET / HTTP/1.1", "Host: a", "Connection: Keep-Alive"), want: h1.Complete,
		parsed: &wantRequest{method: "GET", target: "/", host: "a",
			fields: []field{{name: "Host", value: "a"}, {name: "Connection", value: "Keep-Alive", hop: true}}, contentLength: -1, headLen: 51}},
	{name: "Connection close marked hop, sets Close", input: head("GET / HTTP/1.1", "Host: a", "Connection: close"), want: h1.Complete,
		parsed: &wantRequest{method: "GET", target: "/", host: "a", close: true,
			fields: []field{{name: "Host", value: "a"}, {name: "Connection", value: "close", hop: true}}, contentLength: -1, headLen: 46}},
	{name: "HeadLen stops at the blank line of pipelined requests", input: head("GET /1 HTTP/1.1", "Host: a") + head("GET /2 HTTP/1.1", "Host: a"),
		want: h1.Complete, parsed: &wantRequest{method: "GET", target: "/1", host: "a",
			fields: []field{{name: "Host", value: "a"}}, contentLength: -1, headLen: 28}},
	{name: "repeated fields kept in order", input: head("GET / HTTP/1.1", "Accept: a", "Host: h", "accept: b"), want: h1.Complete,
		parsed: &wantRequest{method: "GET", target: "/", host: "h",
			fields: []field{{name: "Accept", value: "a"}, {name: "Host", value: "h"}, {name: "accept", value: "b"}}, contentLength: -1, headLen: 49}},
	{name: "empty value", input: head("GET / HTTP/1.1", "Host: a", "X-Empty:"), want: h1.Complete,
		parsed: &wantRequest{method: "GET", target: "/", host: "a",
			fields: []field{{name: "Host", value: "a"}, {name: "X-Empty", value: ""}}, contentLength: -1, headLen: 37}},
	{name: "Content-Length with leading zeros", input: head("PUT /x HTTP/1.1", "Host: a", "Content-Length: 007") + "1234567",
		want: h1.Complete, parsed: &wantRequest{method: "PUT", target: "/x", host: "a",
			fields: []field{{name: "Host", value: "a"}, {name: "Content-Length", value: "007"}}, contentLength: 7, headLen: 49}},
	{name: "Content-Length of 18 digits", input: head("POST / HTTP/1.1", "Host: a", "Content-Length: 999999999999999999"), want: h1.Complete},
	{name: "Content-Length zero", input: head("POST / HTTP/1.1", "Host: a", "Content-Length: 0"), want: h1.Complete},
	{name: "target with query, escapes and sub-delims", input: head("GET /a/b%20c;p=1/!$&'()*+,=:@~-._?q=%2F&x=/?y HTTP/1.1", "Host: a"), want: h1.Complete},
	{name: "target with an empty query", input: head("GET /a? HTTP/1.1", "Host: a"), want: h1.Complete},
	{name: "target starting with two slashes", input: head("GET //a/b HTTP/1.1", "Host: a"), want: h1.Complete},
	{name: "Host with port", input: head("GET / HTTP/1.1", "Host: api.example.test:8443"), want: h1.Complete},
	{name: "Host as IPv6 literal", input: head("GET / HTTP/1.1", "Host: [::1]:80"), want: h1.Complete},
	{name: "other methods", input: head("DELETE /x HTTP/1.1", "Host: a"), want: h1.Complete},
	{name: "escaped NUL in target", input: head("GET /%00?q=%00 HTTP/1.1", "Host: a"), want: h1.Complete},
	{name: "escaped dot segments in target", input: head("GET /%2e%2E/a/./b/../c%2F%2f HTTP/1.1", "Host: a"), want: h1.Complete},
	{name: "escaped UTF-8 in target", input: head("GET /caf%C3%A9 HTTP/1.1", "Host: a"), want: h1.Complete},
	{name: "escaped escape in target", input: head("GET /%2541 HTTP/1.1", "Host: a"), want: h1.Complete},
	{name: "several '?' in target", input: head("GET /a?b?c=/d HTTP/1.1", "Host: a"), want: h1.Complete},
	{name: "target of only sub-delims and colon", input: head("GET /:@;+ HTTP/1.1", "Host: a"), want: h1.Complete},
	{name: "Host with trailing dot", input: head("GET / HTTP/1.1", "Host: a.example."), want: h1.Complete},
	{name: "Host as IPv4 with port", input: head("GET / HTTP/1.1", "Host: 127.0.0.1:8080"), want: h1.Complete},
	{name: "field name of every token character", input: head("GET / HTTP/1.1", "Host: a", "!#$%&'*+-.^_`|~09aZ: v"), want: h1.Complete},
	{name: "value of every visible character", input: head("GET / HTTP/1.1", "Host: a", "X: !\"#$%&'()*+,-./09:;<=>?@AZ[\\]^_`az{|}~"), want: h1.Complete},
	{name: "HEAD with a body", input: head("HEAD / HTTP/1.1", "Host: a", "Content-Length: 2") + "hi", want: h1.Complete},
	{name: "Cache-Control and Content-Type untouched", input: head("GET / HTTP/1.1", "Host: a", "Cache-Control: no-cache", "Content-Type: text/plain"), want: h1.Complete},
	{name: "Content-Length with OWS", input: head("POST / HTTP/1.1", "Host: a", "Content-Length:\t 2 \t") + "hi", want: h1.Complete},
	{name: "typical keyed POST", input: keyedPOST + `{"amount":100,"cur":"eur"}` + "\n", want: h1.Complete},
	{name: "exactly MaxFields fields", input: head(append([]string{"GET / HTTP/1.1", "Host: a"}, manyFields(h1.MaxFields-1)...)...), want: h1.Complete},

	// Framing: the request smuggling shapes.
	{name: "CL+TE", input: head("POST / HTTP/1.1", "Host: a", "Content-Length: 5", "Transfer-Encoding: chunked"), want: h1.Unsupported},
	{name: "TE+CL", input: head("POST / HTTP/1.1", "Host: a", "Transfer-Encoding: chunked", "Content-Length: 5"), want: h1.Unsupported},
	{name: "TE alone", input: head("POST / HTTP/1.1", "Host: a", "Transfer-Encoding: chunked") + "0\r\n\r\n", want: h1.Unsupported},
	{name: "TE identity", input: head("POST / HTTP/1.1", "Host: a", "transfer-encoding: identity"), want: h1.Unsupported},
	{name: "two Content-Length equal", input: head("POST / HTTP/1.1", "Host: a", "Content-Length: 5", "Content-Length: 5"), want: h1.Unsupported},
	{name: "two Content-Length different", input: head("POST / HTTP/1.1", "Host: a", "Content-Length: 5", "content-length: 6"), want: h1.Unsupported},
	{name: "Content-Length plus sign", input: head("POST / HTTP/1.1", "Host: a", "Content-Length: +5"), want: h1.Unsupported},
	{name: "Content-Length minus sign", input: head("POST / HTTP/1.1", "Host: a", "Content-Length: -1"), want: h1.Unsupported},
	{name: "Content-Length two numbers", input: head("POST / HTTP/1.1", "Host: a", "Content-Length:  5 5"), want: h1.Unsupported},
	{name: "Content-Length list", input: head("POST / HTTP/1.1", "Host: a", "Content-Length: 5,5"), want: h1.Unsupported},
	{name: "Content-Length hex", input: head("POST / HTTP/1.1", "Host: a", "Content-Length: 0x5"), want: h1.Unsupported},
	{name: "Content-Length empty", input: head("POST / HTTP/1.1", "Host: a", "Content-Length: "), want: h1.Unsupported},
	{name: "Content-Length of 19 digits", input: head("POST / HTTP/1.1", "Host: a", "Content-Length: 1000000000000000000"), want: h1.Unsupported},
	{name: "Content-Length beyond int64", input: head("POST / HTTP/1.1", "Host: a", "Content-Length: 99999999999999999999"), want: h1.Unsupported},
	{name: "obs-fold line", input: head("GET / HTTP/1.1", "Host: a", "X: a", " b"), want: h1.Unsupported},
	{name: "obs-fold with tab", input: head("GET / HTTP/1.1", "Host: a", "X: a", "\tb"), want: h1.Unsupported},
	{name: "obs-fold of Content-Length", input: head("POST / HTTP/1.1", "Host: a", "Content-Length:", " 5"), want: h1.Unsupported},
	{name: "first field line folded", input: head("GET / HTTP/1.1", " Host: a"), want: h1.Unsupported},
	{name: "whitespace before colon", input: head("GET / HTTP/1.1", "Host : x"), want: h1.Unsupported},
	{name: "tab before colon", input: head("POST / HTTP/1.1", "Host: a", "Content-Length\t: 5"), want: h1.Unsupported},
	{name: "whitespace before colon of Transfer-Encoding", input: head("POST / HTTP/1.1", "Host: a", "Transfer-Encoding : chunked"), want: h1.Unsupported},
	{name: "empty field name", input: head("GET / HTTP/1.1", "Host: a", ": x"), want: h1.Unsupported},
	{name: "field line without colon", input: head("GET / HTTP/1.1", "Host: a", "X"), want: h1.Unsupported},
	{name: "non-token field name", input: head("GET / HTTP/1.1", "Host: a", "X(y): z"), want: h1.Unsupported},
	{name: "bare LF in a field line", input: "GET / HTTP/1.1\r\nHost: a\nX: b\r\n\r\n", want: h1.Unsupported},
	{name: "bare LF ending the request line", input: "GET / HTTP/1.1\nHost: a\r\n\r\n", want: h1.Unsupported},
	{name: "bare CR in a field line", input: "GET / HTTP/1.1\r\nHost: a\rX: b\r\n\r\n", want: h1.Unsupported},
	{name: "bare CR in the value", input: "GET / HTTP/1.1\r\nHost: a\r\nX: a\rb\r\n\r\n", want: h1.Unsupported},
	{name: "LF-only line endings", input: "GET / HTTP/1.1\nHost: a\n\n", want: h1.Unsupported},
	{name: "LF-only blank line", input: "GET / HTTP/1.1\r\nHost: a\r\n\n", want: h1.Unsupported},
	{name: "CR CR LF", input: "GET / HTTP/1.1\r\nHost: a\r\r\n\r\n", want: h1.Unsupported},
	{name: "NUL in value", input: head("GET / HTTP/1.1", "Host: a", "X: a\x00b"), want: h1.Unsupported},
	{name: "control character in value", input: head("GET / HTTP/1.1", "Host: a", "X: a\x01b"), want: h1.Unsupported},
	{name: "DEL in value", input: head("GET / HTTP/1.1", "Host: a", "X: a\x7fb"), want: h1.Unsupported},
	{name: "obs-text in value", input: head("GET / HTTP/1.1", "Host: a", "X: caf\xc3\xa9"), want: h1.Unsupported},
	{name: "obs-text 0x80 in value", input: head("GET / HTTP/1.1", "Host: a", "X: \x80"), want: h1.Unsupported},
	{name: "leading blank line", input: "\r\n" + head("GET / HTTP/1.1", "Host: a"), want: h1.Unsupported},
	{name: "blank head", input: "\r\n\r\n", want: h1.Unsupported},

	// Host.
	{name: "missing Host", input: head("GET / HTTP/1.1", "X: a"), want: h1.Unsupported},
	{name: "two Hosts", input: head("GET / HTTP/1.1", "Host: a", "Host: b"), want: h1.Unsupported},
	{name: "two Hosts equal, differing case of name", input: head("GET / HTTP/1.1", "Host: a", "host: a"), want: h1.Unsupported},
	{name: "empty Host", input: head("GET / HTTP/1.1", "Host:"), want: h1.Unsupported},
	{name: "Host with a space", input: head("GET / HTTP/1.1", "Host: a b"), want: h1.Unsupported},
	{name: "Host with a slash", input: head("GET / HTTP/1.1", "Host: a/b"), want: h1.Unsupported},
	{name: "Host with userinfo", input: head("GET / HTTP/1.1", "Host: u@a"), want: h1.Unsupported},
	{name: "Host with a percent", input: head("GET / HTTP/1.1", "Host: a%20b"), want: h1.Unsupported},
	{name: "Host with a comma", input: head("GET / HTTP/1.1", "Host: a,b"), want: h1.Unsupported},

	// Request line.
	{name: "HTTP/1.0", input: head("GET / HTTP/1.0", "Host: a"), want: h1.Unsupported},
	{name: "HTTP/1.2", input: head("GET / HTTP/1.2", "Host: a"), want: h1.Unsupported},
	{name: "lower-case version", input: head("GET / http/1.1", "Host: a"), want: h1.Unsupported},
	{name: "no version", input: head("GET /", "Host: a"), want: h1.Unsupported},
	{name: "space after the version", input: head("GET / HTTP/1.1 ", "Host: a"), want: h1.Unsupported},
	{name: "HTTP/2 preface", input: "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", want: h1.Unsupported},
	{name: "PRI method on HTTP/1.1", input: head("PRI / HTTP/1.1", "Host: a"), want: h1.Unsupported},
	{name: "CONNECT", input: head("CONNECT a:443 HTTP/1.1", "Host: a:443"), want: h1.Unsupported},
	{name: "CONNECT with a path", input: head("CONNECT /rpc HTTP/1.1", "Host: a"), want: h1.Unsupported},
	{name: "absolute-form target", input: head("GET http://a/ HTTP/1.1", "Host: a"), want: h1.Unsupported},
	{name: "asterisk-form target", input: head("OPTIONS * HTTP/1.1", "Host: a"), want: h1.Unsupported},
	{name: "'#' in target", input: head("GET /a#b HTTP/1.1", "Host: a"), want: h1.Unsupported},
	{name: "bad %-escape", input: head("GET /a%zz HTTP/1.1", "Host: a"), want: h1.Unsupported},
	{name: "truncated %-escape", input: head("GET /a%4 HTTP/1.1", "Host: a"), want: h1.Unsupported},
	{name: "'%' ending the target", input: head("GET /a% HTTP/1.1", "Host: a"), want: h1.Unsupported},
	{name: "bad %-escape in the query", input: head("GET /a?q=%x1 HTTP/1.1", "Host: a"), want: h1.Unsupported},
	{name: "brackets in target", input: head("GET /[a] HTTP/1.1", "Host: a"), want: h1.Unsupported},
	{name: "backslash in target", input: head("GET /a\\b HTTP/1.1", "Host: a"), want: h1.Unsupported},
	{name: "quote in target", input: head("GET /a\"b HTTP/1.1", "Host: a"), want: h1.Unsupported},
	{name: "obs-text in target", input: head("GET /caf\xc3\xa9 HTTP/1.1", "Host: a"), want: h1.Unsupported},
	{name: "empty target", input: head("GET  HTTP/1.1", "Host: a"), want: h1.Unsupported},
	{name: "two spaces after the method", input: head("GET  / HTTP/1.1", "Host: a"), want: h1.Unsupported},
	{name: "two spaces before the version", input: head("GET /  HTTP/1.1", "Host: a"), want: h1.Unsupported},
	{name: "tab as separator", input: head("GET\t/ HTTP/1.1", "Host: a"), want: h1.Unsupported},
	{name: "lowercase method", input: head("get / HTTP/1.1", "Host: a"), want: h1.Unsupported},
	{name: "method with a digit", input: head("G3T / HTTP/1.1", "Host: a"), want: h1.Unsupported},
	{name: "method with a hyphen", input: head("M-SEARCH / HTTP/1.1", "Host: a"), want: h1.Unsupported},
	{name: "empty method", input: head(" / HTTP/1.1", "Host: a"), want: h1.Unsupported},

	// Fields whose handling is left to net/http.
	{name: "Expect", input: head("POST / HTTP/1.1", "Host: a", "Content-Length: 5", "Expect: 100-continue"), want: h1.Unsupported},
	{name: "Upgrade", input: head("GET / HTTP/1.1", "Host: a", "Connection: Upgrade", "Upgrade: websocket"), want: h1.Unsupported},
	{name: "Upgrade without Connection", input: head("GET / HTTP/1.1", "Host: a", "Upgrade: h2c"), want: h1.Unsupported},
	{name: "Connection foo", input: head("GET / HTTP/1.1", "Host: a", "Connection: foo"), want: h1.Unsupported},
	{name: "Connection list", input: head("GET / HTTP/1.1", "Host: a", "Connection: keep-alive, close"), want: h1.Unsupported},
	{name: "Connection naming a field to drop", input: head("GET / HTTP/1.1", "Host: a", "Connection: Idempotency-Key", "Idempotency-Key: k"), want: h1.Unsupported},
	{name: "Keep-Alive", input: head("GET / HTTP/1.1", "Host: a", "Keep-Alive: timeout=5"), want: h1.Unsupported},
	{name: "Te", input: head("GET / HTTP/1.1", "Host: a", "TE: trailers"), want: h1.Unsupported},
	{name: "Trailer", input: head("POST / HTTP/1.1", "Host: a", "Content-Length: 1", "Trailer: X"), want: h1.Unsupported},
	{name: "Proxy-Authorization", input: head("GET / HTTP/1.1", "Host: a", "Proxy-Authorization: Basic eDp5"), want: h1.Unsupported},
	{name: "Proxy-Authenticate", input: head("GET / HTTP/1.1", "Host: a", "Proxy-Authenticate: Basic"), want: h1.Unsupported},
	{name: "Proxy-Connection", input: head("GET / HTTP/1.1", "Host: a", "Proxy-Connection: keep-alive"), want: h1.Unsupported},
	{name: "Pragma no-cache, which net/http turns into Cache-Control", input: head("GET / HTTP/1.1", "Host: a", "Pragma: no-cache"), want: h1.Unsupported},

	// Limits.
	{name: "more than MaxFields fields", input: head(append([]string{"GET / HTTP/1.1", "Host: a"}, manyFields(h1.MaxFields)...)...), want: h1.Unsupported},
	{name: "head longer than maxHead", input: head("GET /"+strings.Repeat("a", testMaxHead)+" HTTP/1.1", "Host: a"), want: h1.Unsupported},
	{name: "no blank line within maxHead", input: "GET / HTTP/1.1\r\nHost: a\r\n" + strings.Repeat("X: y\r\n", testMaxHead/6+1), want: h1.Unsupported},
}

func TestParseRequest(t *testing.T) {
	for _, tc := range requestCases {
		t.Run(tc.name, func(t *testing.T) {
			var r h1.Request
			got := h1.ParseRequest([]byte(tc.input), testMaxHead, &r)
			require.Equal(t, tc.want, got, "%q", tc.input)
			if tc.parsed != nil {
				require.Equal(t, *tc.parsed, requestAsWant(&r))
			}
			if got == h1.Complete {
				require.Equal(t, "\r\n\r\n", tc.input[r.HeadLen-4:r.HeadLen], "HeadLen ends at the blank line")
			}
		})
	}
}

func requestAsWant(r *h1.Request) wantRequest {
	return wantRequest{method: string(r.Method), target: string(r.Target), host: string(r.Host),
		fields: fieldsAsWant(r.Fields), contentLength: r.ContentLength, close: r.Close, headLen: r.HeadLen}
}

func fieldsAsWant(fs []h1.Field) []field {
	var out []field
	for _, f := range fs {
		out = append(out, field{name: string(f.Name), value: string(f.Value), hop: f.Hop})
	}
	return out
}

// TestParseRequestIncompletePrefixes: every strict prefix of a Complete head is
// Incomplete — never Unsupported, which would send a valid request to the slow path, and
// never Complete, which would cut it short.
func TestParseRequestIncompletePrefixes(t *testing.T) {
	for _, tc := range requestCases {
		if tc.want != h1.Complete {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			var r h1.Request
			require.Equal(t, h1.Complete, h1.ParseRequest([]byte(tc.input), testMaxHead, &r))
			headLen := r.HeadLen
			for n := range headLen {
				require.Equal(t, h1.Incomplete, h1.ParseRequest([]byte(tc.input[:n]), testMaxHead, &r), "prefix %q", tc.input[:n])
			}
		})
	}
}

// TestParseRequestMaxHead: the head, blank line included, must fit in maxHead bytes;
// until maxHead bytes have arrived a head that has not ended is only Incomplete.
func TestParseRequestMaxHead(t *testing.T) {
	input := []byte(head("GET / HTTP/1.1", "Host: a"))
	var r h1.Request
	require.Equal(t, h1.Complete, h1.ParseRequest(input, len(input), &r))
	require.Equal(t, len(input), r.HeadLen)
	require.Equal(t, h1.Unsupported, h1.ParseRequest(input, len(input)-1, &r))
	require.Equal(t, h1.Incomplete, h1.ParseRequest(input[:len(input)-2], len(input)-1, &r))
	require.Equal(t, h1.Unsupported, h1.ParseRequest(input[:len(input)-1], len(input)-1, &r))
	require.Equal(t, h1.Unsupported, h1.ParseRequest(input, 0, &r))
	require.Equal(t, h1.Unsupported, h1.ParseRequest(input, -1, &r))
	require.Equal(t, h1.Incomplete, h1.ParseRequest(nil, len(input), &r))
}

// TestIncompleteJudgesWholeLines: a line is judged once it has ended, so a malformed
// start is Incomplete until its CRLF arrives, then Unsupported.
func TestIncompleteJudgesWholeLines(t *testing.T) {
	var r h1.Request
	require.Equal(t, h1.Incomplete, h1.ParseRequest([]byte("get / HTTP/1.1"), testMaxHead, &r))
	require.Equal(t, h1.Unsupported, h1.ParseRequest([]byte("get / HTTP/1.1\r\n"), testMaxHead, &r))
	require.Equal(t, h1.Incomplete, h1.ParseRequest([]byte("GET / HTTP/1.1\r\nTransfer-Encoding: chunked"), testMaxHead, &r))
	require.Equal(t, h1.Unsupported, h1.ParseRequest([]byte("GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"), testMaxHead, &r))
	require.Equal(t, h1.Unsupported, h1.ParseRequest([]byte("GET / HTTP/1.1\nHost"), testMaxHead, &r), "a bare LF is seen at once")
	var resp h1.Response
	require.Equal(t, h1.Incomplete, h1.ParseResponse([]byte("HTTP/1.1 100 Cont"), testMaxHead, false, &resp))
	require.Equal(t, h1.Unsupported, h1.ParseResponse([]byte("HTTP/1.1 100 Continue\r\n"), testMaxHead, false, &resp))
}

// TestParseRequestReusesFields: a parse reuses the caller's Fields array and forgets the
// previous request entirely, whatever the verdict.
func TestParseRequestReusesFields(t *testing.T) {
	r := h1.Request{Fields: make([]h1.Field, 0, h1.MaxFields)}
	backing := &r.Fields[:1][0]

	require.Equal(t, h1.Complete, h1.ParseRequest([]byte(head("POST /a HTTP/1.1", "Host: a", "Content-Length: 1", "X: 1")), testMaxHead, &r))
	require.Len(t, r.Fields, 3)
	require.Same(t, backing, &r.Fields[0])

	require.Equal(t, h1.Complete, h1.ParseRequest([]byte(head("GET /b HTTP/1.1", "Host: b")), testMaxHead, &r))
	require.Equal(t, wantRequest{method: "GET", target: "/b", host: "b", fields: []field{{name: "Host", value: "b"}},
		contentLength: -1, headLen: 28}, requestAsWant(&r))
	require.Same(t, backing, &r.Fields[0])

	require.Equal(t, h1.Unsupported, h1.ParseRequest([]byte(head("GET / HTTP/1.0", "Host: c")), testMaxHead, &r))
	require.Equal(t, int64(-1), r.ContentLength)
	require.Zero(t, r.HeadLen)
}

// wantResponse is what a Complete response must hold.
type wantResponse struct {
	status     int
	reason     string
	fields     []field
	contentLen int64
	close      bool
	headLen    int
	bodyLen    int64
}

type responseCase struct {
	name     string
	input    string
	bodyless bool // the request was HEAD
	want     h1.Verdict
	parsed   *wantResponse
}

var responseCases = []responseCase{
	// The supported shape.
	{name: "200 with Content-Length and its body", input: head("HTTP/1.1 200 OK", "Content-Length: 2") + "ok", want: h1.Complete,
		parsed: &wantResponse{status: 200, reason: "OK", fields: []field{{name: "Content-Length", value: "2"}}, contentLen: 2, headLen: 38, bodyLen: 2}},
	{name: "reason optional", input: head("HTTP/1.1 201", "content-length: 0"), want: h1.Complete,
		parsed: &wantResponse{status: 201, fields: []field{{name: "content-length", value: "0"}}, headLen: 35}},
	{name: "empty reason", input: head("HTTP/1.1 404 ", "Content-Length: 0"), want: h1.Complete,
		parsed: &wantResponse{status: 404, fields: []field{{name: "Content-Length", value: "0"}}, headLen: 36}},
	{name: "reason with spaces and tab", input: head("HTTP/1.1 503 Service \tUnavailable", "Content-Length: 0"), want: h1.Complete,
		parsed: &wantResponse{status: 503, reason: "Service \tUnavailable", fields: []field{{name: "Content-Length", value: "0"}}, headLen: 56}},
	{name: "Connection close sets Close", input: head("HTTP/1.1 200 OK", "Connection: Close", "Content-Length: 1") + "x", want: h1.Complete,
		parsed: &wantResponse{status: 200, reason: "OK", fields: []field{{name: "Connection", value: "Close", hop: true},
			{name: "Content-Length", value: "1"}}, contentLen: 1, close: true, headLen: 57, bodyLen: 1}},
	{name: "Connection keep-alive and Keep-Alive marked hop", input: head("HTTP/1.1 200 OK", "Connection: keep-alive", "Keep-Alive: timeout=5", "Content-Length: 0"),
		want: h1.Complete, parsed: &wantResponse{status: 200, reason: "OK", fields: []field{{name: "Connection", value: "keep-alive", hop: true},
			{name: "Keep-Alive", value: "timeout=5", hop: true}, {name: "Content-Length", value: "0"}}, headLen: 85}},
	{name: "Proxy-Connection marked hop", input: head("HTTP/1.1 200 OK", "Proxy-Connection: keep-alive", "Content-Length: 0"), want: h1.Complete,
		parsed: &wantResponse{status: 200, reason: "OK", fields: []field{{name: "Proxy-Connection", value: "keep-alive", hop: true},
			{name: "Content-Length", value: "0"}}, headLen: 68}},
	{name: "OWS trimmed, case kept, repeats in order", input: head("HTTP/1.1 200 OK", "set-COOKIE: \ta=1 ", "Set-Cookie:b=2", "Content-Length: 0"), want: h1.Complete,
		parsed: &wantResponse{status: 200, reason: "OK", fields: []field{{name: "set-COOKIE", value: "a=1"}, {name: "Set-Cookie", value: "b=2"},
			{name: "Content-Length", value: "0"}}, headLen: 73}},
	{name: "HEAD answer without Content-Length", input: head("HTTP/1.1 200 OK", "X: y"), bodyless: true, want: h1.Complete,
		parsed: &wantResponse{status: 200, reason: "OK", fields: []field{{name: "X", value: "y"}}, contentLen: -1, headLen: 25}},
	{name: "HEAD answer with Content-Length has no body", input: head("HTTP/1.1 200 OK", "Content-Length: 42"), bodyless: true, want: h1.Complete,
		parsed: &wantResponse{status: 200, reason: "OK", fields: []field{{name: "Content-Length", value: "42"}}, contentLen: 42, headLen: 39}},
	{name: "204 without Content-Length", input: head("HTTP/1.1 204 No Content", "X: y"), want: h1.Complete,
		parsed: &wantResponse{status: 204, reason: "No Content", fields: []field{{name: "X", value: "y"}}, contentLen: -1, headLen: 33}},
	{name: "204 with Content-Length 0", input: head("HTTP/1.1 204 No Content", "Content-Length: 0"), want: h1.Complete},
	{name: "304 without Content-Length", input: head("HTTP/1.1 304 Not Modified", "ETag: \"x\""), want: h1.Complete},
	{name: "304 with the representation's Content-Length has no body", input: head("HTTP/1.1 304 Not Modified", "Content-Length: 100"), want: h1.Complete,
		parsed: &wantResponse{status: 304, reason: "Not Modified", fields: []field{{name: "Content-Length", value: "100"}}, contentLen: 100, headLen: 50}},
	{name: "HEAD answer 304", input: head("HTTP/1.1 304 Not Modified", "Content-Length: 100"), bodyless: true, want: h1.Complete},
	{name: "599", input: head("HTTP/1.1 599 x", "Content-Length: 0"), want: h1.Complete},
	{name: "exactly MaxFields fields", input: head(append([]string{"HTTP/1.1 200 OK", "Content-Length: 0"}, manyFields(h1.MaxFields-1)...)...), want: h1.Complete},

	// Status line.
	{name: "100 Continue", input: head("HTTP/1.1 100 Continue"), want: h1.Unsupported},
	{name: "101 Switching Protocols", input: head("HTTP/1.1 101 Switching Protocols", "Connection: Upgrade", "Upgrade: websocket"), want: h1.Unsupported},
	{name: "103 Early Hints", input: head("HTTP/1.1 103 Early Hints", "Link: </a>"), bodyless: true, want: h1.Unsupported},
	{name: "status 600", input: head("HTTP/1.1 600 x", "Content-Length: 0"), want: h1.Unsupported},
	{name: "status 099", input: head("HTTP/1.1 099 x", "Content-Length: 0"), want: h1.Unsupported},
	{name: "two-digit status", input: head("HTTP/1.1 20 OK", "Content-Length: 0"), want: h1.Unsupported},
	{name: "four-digit status", input: head("HTTP/1.1 2000 OK", "Content-Length: 0"), want: h1.Unsupported},
	{name: "signed status", input: head("HTTP/1.1 +20 OK", "Content-Length: 0"), want: h1.Unsupported},
	{name: "status with a letter", input: head("HTTP/1.1 2x0 OK", "Content-Length: 0"), want: h1.Unsupported},
	{name: "two spaces before the status", input: head("HTTP/1.1  200 OK", "Content-Length: 0"), want: h1.Unsupported},
	{name: "tab after the status", input: head("HTTP/1.1 200\tOK", "Content-Length: 0"), want: h1.Unsupported},
	{name: "HTTP/1.0", input: head("HTTP/1.0 200 OK", "Content-Length: 0"), want: h1.Unsupported},
	{name: "HTTP/2.0", input: head("HTTP/2.0 200 OK", "Content-Length: 0"), want: h1.Unsupported},
	{name: "lower-case version", input: head("http/1.1 200 OK", "Content-Length: 0"), want: h1.Unsupported},
	{name: "obs-text in reason", input: head("HTTP/1.1 200 \xc3\x89", "Content-Length: 0"), want: h1.Unsupported},
	{name: "control character in reason", input: head("HTTP/1.1 200 O\x00K", "Content-Length: 0"), want: h1.Unsupported},

	// Framing.
	{name: "no Content-Length, read until close", input: head("HTTP/1.1 200 OK", "X: y") + "body", want: h1.Unsupported},
	{name: "204 with Content-Length above 0", input: head("HTTP/1.1 204 No Content", "Content-Length: 5"), want: h1.Unsupported},
	{name: "HEAD answer 204 with Content-Length above 0", input: head("HTTP/1.1 204 No Content", "Content-Length: 5"), bodyless: true, want: h1.Unsupported},
	{name: "Transfer-Encoding", input: head("HTTP/1.1 200 OK", "Transfer-Encoding: chunked") + "0\r\n\r\n", want: h1.Unsupported},
	{name: "CL+TE", input: head("HTTP/1.1 200 OK", "Content-Length: 5", "Transfer-Encoding: chunked"), want: h1.Unsupported},
	{name: "two Content-Length equal", input: head("HTTP/1.1 200 OK", "Content-Length: 5", "Content-Length: 5"), want: h1.Unsupported},
	{name: "two Content-Length different", input: head("HTTP/1.1 200 OK", "Content-Length: 5", "Content-Length: 6"), want: h1.Unsupported},
	{name: "Content-Length plus sign", input: head("HTTP/1.1 200 OK", "Content-Length: +5"), want: h1.Unsupported},
	{name: "Content-Length list", input: head("HTTP/1.1 200 OK", "Content-Length: 5,5"), want: h1.Unsupported},
	{name: "Content-Length two numbers", input: head("HTTP/1.1 200 OK", "Content-Length: 5 5"), want: h1.Unsupported},
	{name: "Content-Length of 19 digits", input: head("HTTP/1.1 200 OK", "Content-Length: 1000000000000000000"), want: h1.Unsupported},
	{name: "bad Content-Length on a HEAD answer", input: head("HTTP/1.1 200 OK", "Content-Length: x"), bodyless: true, want: h1.Unsupported},
	{name: "bad Content-Length on a 304", input: head("HTTP/1.1 304 Not Modified", "Content-Length: x"), want: h1.Unsupported},
	{name: "obs-fold line", input: head("HTTP/1.1 200 OK", "Content-Length: 0", "X: a", " b"), want: h1.Unsupported},
	{name: "whitespace before colon", input: head("HTTP/1.1 200 OK", "Content-Length : 0"), want: h1.Unsupported},
	{name: "bare LF", input: "HTTP/1.1 200 OK\r\nContent-Length: 0\n\r\n", want: h1.Unsupported},
	{name: "bare CR", input: "HTTP/1.1 200 OK\r\nContent-Length: 0\rX: y\r\n\r\n", want: h1.Unsupported},
	{name: "LF-only line endings", input: "HTTP/1.1 200 OK\nContent-Length: 0\n\n", want: h1.Unsupported},
	{name: "NUL in value", input: head("HTTP/1.1 200 OK", "Content-Length: 0", "X: \x00"), want: h1.Unsupported},
	{name: "obs-text in value", input: head("HTTP/1.1 200 OK", "Content-Length: 0", "X: \xff"), want: h1.Unsupported},

	// Fields whose handling is left to net/http.
	{name: "Connection foo", input: head("HTTP/1.1 200 OK", "Connection: foo", "Content-Length: 0"), want: h1.Unsupported},
	{name: "Connection list", input: head("HTTP/1.1 200 OK", "Connection: keep-alive, close", "Content-Length: 0"), want: h1.Unsupported},
	{name: "Upgrade", input: head("HTTP/1.1 200 OK", "Upgrade: h2c", "Content-Length: 0"), want: h1.Unsupported},
	{name: "Trailer", input: head("HTTP/1.1 200 OK", "Trailer: X", "Content-Length: 0"), want: h1.Unsupported},
	{name: "Te", input: head("HTTP/1.1 200 OK", "TE: trailers", "Content-Length: 0"), want: h1.Unsupported},
	{name: "Proxy-Authenticate", input: head("HTTP/1.1 407 Proxy Authentication Required", "Proxy-Authenticate: Basic", "Content-Length: 0"), want: h1.Unsupported},
	{name: "Pragma no-cache, which net/http turns into Cache-Control", input: head("HTTP/1.1 200 OK", "Pragma: no-cache", "Content-Length: 0"), want: h1.Unsupported},

	// Limits.
	{name: "more than MaxFields fields", input: head(append([]string{"HTTP/1.1 200 OK", "Content-Length: 0"}, manyFields(h1.MaxFields)...)...), want: h1.Unsupported},
	{name: "head longer than maxHead", input: head("HTTP/1.1 200 OK", "Content-Length: 0", "X: "+strings.Repeat("a", testMaxHead)), want: h1.Unsupported},
}

func TestParseResponse(t *testing.T) {
	for _, tc := range responseCases {
		t.Run(tc.name, func(t *testing.T) {
			var r h1.Response
			got := h1.ParseResponse([]byte(tc.input), testMaxHead, tc.bodyless, &r)
			require.Equal(t, tc.want, got, "%q", tc.input)
			if tc.parsed != nil {
				require.Equal(t, *tc.parsed, responseAsWant(&r, tc.bodyless))
			}
		})
	}
}

func responseAsWant(r *h1.Response, bodyless bool) wantResponse {
	return wantResponse{status: r.Status, reason: string(r.Reason), fields: fieldsAsWant(r.Fields), contentLen: r.ContentLength,
		close: r.Close, headLen: r.HeadLen, bodyLen: r.BodyLength(bodyless)}
}

func TestParseResponseIncompletePrefixes(t *testing.T) {
	for _, tc := range responseCases {
		if tc.want != h1.Complete {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			var r h1.Response
			require.Equal(t, h1.Complete, h1.ParseResponse([]byte(tc.input), testMaxHead, tc.bodyless, &r))
			headLen := r.HeadLen
			for n := range headLen {
				require.Equal(t, h1.Incomplete, h1.ParseResponse([]byte(tc.input[:n]), testMaxHead, tc.bodyless, &r), "prefix %q", tc.input[:n])
			}
		})
	}
}

func TestParseResponseReusesFields(t *testing.T) {
	r := h1.Response{Fields: make([]h1.Field, 0, h1.MaxFields)}
	backing := &r.Fields[:1][0]
	require.Equal(t, h1.Complete, h1.ParseResponse([]byte(head("HTTP/1.1 200 OK", "Connection: close", "Content-Length: 1", "X: 1")), testMaxHead, false, &r))
	require.Len(t, r.Fields, 3)
	require.True(t, r.Close)
	require.Equal(t, h1.Complete, h1.ParseResponse([]byte(head("HTTP/1.1 204 No Content")), testMaxHead, false, &r))
	require.Equal(t, wantResponse{status: 204, reason: "No Content", contentLen: -1, headLen: 27}, responseAsWant(&r, false))
	require.Same(t, backing, &r.Fields[:1][0])
}

func TestBodyLength(t *testing.T) {
	for _, tc := range []struct {
		status        int
		contentLength int64
		bodyless      bool
		want          int64
	}{
		{status: 200, contentLength: 7, want: 7},
		{status: 200, contentLength: 7, bodyless: true, want: 0},
		{status: 204, contentLength: 0, want: 0},
		{status: 304, contentLength: 7, want: 0},
		{status: 200, contentLength: -1, bodyless: true, want: 0},
	} {
		r := h1.Response{Status: tc.status, ContentLength: tc.contentLength}
		require.Equal(t, tc.want, r.BodyLength(tc.bodyless), "%+v", tc)
	}
}

func TestVerdictString(t *testing.T) {
	require.Equal(t, "complete", h1.Complete.String())
	require.Equal(t, "incomplete", h1.Incomplete.String())
	require.Equal(t, "unsupported", h1.Unsupported.String())
}
