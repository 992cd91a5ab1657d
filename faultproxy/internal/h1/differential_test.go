package h1_test

import (
	"bufio"
	"bytes"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/faultproxy/internal/h1"
)

// The differential tests hold the package to its contract: whatever ParseRequest or
// ParseResponse calls Complete, net/http reads exactly the same way. What is compared,
// and the few places where the two report the same message differently:
//
//   - Method, target and Host as they arrived. The target is also r.RequestURI and
//     r.URL.RequestURI(): the proxy forwards and journals the raw target, net/http's path
//     rebuilds it from the URL, and the two must agree.
//   - The fields as an http.Header: canonical names, repeated fields in arrival order,
//     Host left out (net/http moves it to r.Host). On a response carrying Connection:
//     close, net/http also removes every Connection field from the header (it becomes
//     resp.Close), so that one is left out there too. Nothing else is dropped: Connection:
//     keep-alive, Keep-Alive and Proxy-Connection stay in net/http's header maps.
//   - Content-Length. A request without one has ContentLength -1 here and 0 in net/http
//     (no Content-Length and no Transfer-Encoding means no body; net/http says so with 0).
//     A 204 or 304 answer to anything but HEAD has ContentLength 0 in net/http, whatever
//     the field says; here it is the field's value (or -1), and BodyLength is 0. A HEAD
//     answer has the field's value (or -1) in both.
//   - The body: net/http reads exactly BodyLength bytes (requests: ContentLength, or none).
//   - Go's server accepts the request (its handler runs, it answers 200) and hands the
//     handler the same method, target, Host, fields and body bytes.

// recordingServer is a real http.Server on loopback whose handler records what it was
// given, so the test sees the request as a net/http handler would.
type recordingServer struct {
	addr string
	mu   sync.Mutex
	last *serverRecord
}

type serverRecord struct {
	method, requestURI, urlRequestURI, host string
	header                                  http.Header
	contentLength                           int64
	close                                   bool
	body                                    []byte
}

// exchangeTimeout bounds one exchange with the server so a server that waits for bytes
// that will never come fails the test instead of hanging it. It is no speed assertion:
// a healthy exchange takes well under a millisecond.
const exchangeTimeout = 30 * time.Second

func newRecordingServer(tb testing.TB) *recordingServer {
	s := &recordingServer{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(tb, err)
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// A body shorter than its Content-Length ends in an error; the bytes that did
			// arrive are what is compared.
			body, _ := io.ReadAll(r.Body)
			rec := &serverRecord{method: r.Method, requestURI: r.RequestURI, urlRequestURI: r.URL.RequestURI(), host: r.Host,
				header: r.Header.Clone(), contentLength: r.ContentLength, close: r.Close, body: body}
			s.mu.Lock()
			s.last = rec
			s.mu.Unlock()
			w.WriteHeader(http.StatusOK)
		}),
		ErrorLog: log.New(io.Discard, "", 0),
	}
	go srv.Serve(ln) //nolint:errcheck // ends with ErrServerClosed at cleanup
	tb.Cleanup(func() { srv.Close() })
	s.addr = ln.Addr().String()
	return s
}

// exchange sends request on a fresh connection, half-closes it (so a short body ends
// instead of being waited for) and returns the server's status and what the handler saw
// (nil when the handler did not run).
func (s *recordingServer) exchange(t *testing.T, request []byte) (int, *serverRecord) {
	s.mu.Lock()
	s.last = nil
	s.mu.Unlock()
	conn, err := net.Dial("tcp", s.addr)
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.SetDeadline(time.Now().Add(exchangeTimeout)))
	_, err = conn.Write(request)
	require.NoError(t, err)
	require.NoError(t, conn.(*net.TCPConn).CloseWrite())
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err, "the server did not answer %q", request)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	return resp.StatusCode, s.last
}

// headerOf is the http.Header net/http builds from these fields.
func headerOf(fields []h1.Field, leaveOut ...string) http.Header {
	h := http.Header{}
	for _, f := range fields {
		name := http.CanonicalHeaderKey(string(f.Name))
		if !contains(leaveOut, name) {
			h[name] = append(h[name], string(f.Value))
		}
	}
	return h
}

func contains(names []string, name string) bool {
	for _, n := range names {
		if n == name {
			return true
		}
	}
	return false
}

// requireIncompletePrefixes: every strict prefix of a Complete head is Incomplete, and the
// head alone (without what follows it) parses the same.
func requireIncompletePrefixes(t *testing.T, input []byte, headLen int, parse func([]byte) h1.Verdict) {
	for n := range headLen {
		if v := parse(input[:n]); v != h1.Incomplete {
			t.Fatalf("prefix %q of a Complete head is %v, want incomplete", input[:n], v)
		}
	}
}

// checkRequest is the differential check of one input; it passes when ParseRequest does
// not call the input Complete. With srv nil, only http.ReadRequest is compared.
func checkRequest(t *testing.T, srv *recordingServer, input []byte) {
	var r h1.Request
	if h1.ParseRequest(input, testMaxHead, &r) != h1.Complete {
		return
	}
	parsed := requestAsWant(&r)
	headLen := r.HeadLen
	var again h1.Request
	requireIncompletePrefixes(t, input, headLen, func(b []byte) h1.Verdict { return h1.ParseRequest(b, testMaxHead, &again) })
	require.Equal(t, h1.Complete, h1.ParseRequest(input[:headLen], testMaxHead, &again))
	require.Equal(t, parsed, requestAsWant(&again), "the head alone parses differently")

	netContentLength := max(r.ContentLength, 0)
	rest := input[headLen:]
	body := rest[:min(netContentLength, int64(len(rest)))]
	want := serverRecord{method: parsed.method, requestURI: parsed.target, urlRequestURI: parsed.target, host: parsed.host,
		header: headerOf(r.Fields, "Host"), contentLength: netContentLength, close: r.Close, body: body}

	req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(input)))
	require.NoError(t, err, "net/http refuses a Complete head %q", input)
	readBody, bodyErr := io.ReadAll(req.Body)
	got := serverRecord{method: req.Method, requestURI: req.RequestURI, urlRequestURI: req.URL.RequestURI(), host: req.Host,
		header: req.Header, contentLength: req.ContentLength, close: req.Close, body: readBody}
	require.Equal(t, want, got, "http.ReadRequest reads %q differently", input)
	if int64(len(body)) < netContentLength {
		require.ErrorIs(t, bodyErr, io.ErrUnexpectedEOF)
	} else {
		require.NoError(t, bodyErr)
	}

	if srv == nil {
		return
	}
	// Only this request goes to the server: what follows its body is another request
	// (or garbage) of its own.
	status, rec := srv.exchange(t, input[:headLen+len(body)])
	require.Equal(t, http.StatusOK, status, "Go's server refuses a Complete head %q", input)
	require.NotNil(t, rec, "the handler did not run for %q", input)
	require.Equal(t, want, *rec, "Go's server reads %q differently", input)
}

// checkResponse is the differential check of one answer to a GET (or, bodyless, to a
// HEAD).
func checkResponse(t *testing.T, input []byte, bodyless bool) {
	var r h1.Response
	if h1.ParseResponse(input, testMaxHead, bodyless, &r) != h1.Complete {
		return
	}
	parsed := responseAsWant(&r, bodyless)
	var again h1.Response
	requireIncompletePrefixes(t, input, r.HeadLen, func(b []byte) h1.Verdict {
		return h1.ParseResponse(b, testMaxHead, bodyless, &again)
	})
	require.Equal(t, h1.Complete, h1.ParseResponse(input[:r.HeadLen], testMaxHead, bodyless, &again))
	require.Equal(t, parsed, responseAsWant(&again, bodyless), "the head alone parses differently")

	method := http.MethodGet
	if bodyless {
		method = http.MethodHead
	}
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(input)), &http.Request{Method: method})
	require.NoError(t, err, "net/http refuses a Complete head %q", input)

	var leaveOut []string
	if r.Close {
		leaveOut = append(leaveOut, "Connection")
	}
	netContentLength := r.ContentLength
	if !bodyless && (r.Status == 204 || r.Status == 304) {
		netContentLength = 0
	}
	status := string(input[len("HTTP/1.1 "):bytes.Index(input, []byte("\r\n"))])
	require.Equal(t, r.Status, resp.StatusCode, "%q", input)
	require.Equal(t, status, resp.Status, "%q", input)
	require.Equal(t, strings.TrimPrefix(strings.TrimPrefix(status, status[:3]), " "), parsed.reason, "%q", input)
	require.Equal(t, headerOf(r.Fields, leaveOut...), resp.Header, "http.ReadResponse reads the fields of %q differently", input)
	require.Equal(t, netContentLength, resp.ContentLength, "%q", input)
	require.Equal(t, r.Close, resp.Close, "%q", input)

	rest := input[r.HeadLen:]
	bodyLen := r.BodyLength(bodyless)
	body := rest[:min(bodyLen, int64(len(rest)))]
	readBody, bodyErr := io.ReadAll(resp.Body)
	require.Equal(t, body, append([]byte{}, readBody...), "net/http reads another body from %q", input)
	if int64(len(body)) < bodyLen {
		require.ErrorIs(t, bodyErr, io.ErrUnexpectedEOF)
	} else {
		require.NoError(t, bodyErr)
	}
}

func FuzzRequestDifferential(f *testing.F) {
	for _, tc := range requestCases {
		f.Add([]byte(tc.input))
	}
	srv := newRecordingServer(f)
	f.Fuzz(func(t *testing.T, input []byte) { checkRequest(t, srv, input) })
}

func FuzzResponseDifferential(f *testing.F) {
	for _, tc := range responseCases {
		f.Add([]byte(tc.input), tc.bodyless)
	}
	f.Fuzz(func(t *testing.T, input []byte, bodyless bool) { checkResponse(t, input, bodyless) })
}

// TestRequestDifferential runs the differential check over the table and a generated
// corpus, and counts the Complete ones so a generator gone wrong (nothing Complete, so
// nothing compared) fails instead of passing vacuously.
func TestRequestDifferential(t *testing.T) {
	srv := newRecordingServer(t)
	corpus := generatedRequests(2000)
	for _, tc := range requestCases {
		corpus = append(corpus, []byte(tc.input))
	}
	complete := 0
	var r h1.Request
	for _, input := range corpus {
		if h1.ParseRequest(input, testMaxHead, &r) == h1.Complete {
			complete++
		}
		checkRequest(t, srv, input)
	}
	t.Logf("%d inputs, %d complete", len(corpus), complete)
	require.Greater(t, complete, len(corpus)/10)
	require.Less(t, complete, len(corpus)*9/10)
}

func TestResponseDifferential(t *testing.T) {
	corpus := generatedResponses(2000)
	for _, tc := range responseCases {
		corpus = append(corpus, responseInput{[]byte(tc.input), tc.bodyless})
	}
	complete := 0
	var r h1.Response
	for _, in := range corpus {
		if h1.ParseResponse(in.input, testMaxHead, in.bodyless, &r) == h1.Complete {
			complete++
		}
		checkResponse(t, in.input, in.bodyless)
	}
	t.Logf("%d inputs, %d complete", len(corpus), complete)
	require.Greater(t, complete, len(corpus)/10)
	require.Less(t, complete, len(corpus)*9/10)
}

// smugglingBytes are the bytes a one-byte change that matters to framing is made of: line
// ends, white space, separators, signs, digits, a NUL, DEL and obs-text.
var smugglingBytes = []byte{'\r', '\n', ' ', '\t', ':', ',', ';', '+', '-', '0', '9', 0, 0x7f, 0x80, 0xff}

// mutations is every input one smuggling-relevant byte away from input: each byte of the
// head replaced by, or preceded by, each of smugglingBytes, or deleted. The long inputs of
// the limit cases give none: a byte changed near their start is what the short cases
// already try, and each of their thousands of mutants would cost a long parse.
func mutations(input []byte) [][]byte {
	if len(input) > 512 {
		return nil
	}
	end := bytes.Index(input, []byte("\r\n\r\n"))
	if end < 0 {
		end = len(input)
	} else {
		end += 4
	}
	var out [][]byte
	for i := range end {
		out = append(out, append(input[:i:i], input[i+1:]...))
		for _, c := range smugglingBytes {
			if c != input[i] {
				replaced := bytes.Clone(input)
				replaced[i] = c
				out = append(out, replaced)
			}
			inserted := append(append(input[:i:i], c), input[i:]...)
			out = append(out, inserted)
		}
	}
	return out
}

// TestRequestDifferentialMutations: no input one smuggling-relevant byte away from a
// table case is Complete unless net/http reads it the same way. ReadRequest sees every
// Complete mutant; Go's server sees a bounded share of them (the rest differ from
// those it saw only where ReadRequest already compared them).
func TestRequestDifferentialMutations(t *testing.T) {
	srv := newRecordingServer(t)
	rng := rand.New(rand.NewPCG(7, 7))
	const serverShare = 8 // one Complete mutant in serverShare goes to the server too
	inputs, complete := 0, 0
	var r h1.Request
	for _, tc := range requestCases {
		for _, m := range mutations([]byte(tc.input)) {
			inputs++
			if h1.ParseRequest(m, testMaxHead, &r) != h1.Complete {
				continue
			}
			complete++
			if rng.IntN(serverShare) == 0 {
				checkRequest(t, srv, m)
			} else {
				checkRequest(t, nil, m)
			}
		}
	}
	t.Logf("%d mutants, %d complete", inputs, complete)
	require.Positive(t, complete)
}

func TestResponseDifferentialMutations(t *testing.T) {
	inputs, complete := 0, 0
	var r h1.Response
	for _, tc := range responseCases {
		for _, m := range mutations([]byte(tc.input)) {
			for _, bodyless := range []bool{false, true} {
				inputs++
				if h1.ParseResponse(m, testMaxHead, bodyless, &r) == h1.Complete {
					complete++
				}
				checkResponse(t, m, bodyless)
			}
		}
	}
	t.Logf("%d mutants, %d complete", inputs, complete)
	require.Positive(t, complete)
}

// The generated corpus combines the pieces below, mostly well-formed, so that a good
// share of it is Complete and the rest sits just beside the supported shape.
var (
	genMethods  = []string{"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "get", "CONNECT", "PRI", "M-SEARCH", "GE T"}
	genTargets  = []string{"/", "/v1/pay", "/a/b?c=d&e=f", "/%41%2f%2F", "/a%zz", "*", "http://a/b", "/a#b", "//x", "/a?", "/a??b", "/;p=1", "/~u/!$&'()*+,;=:@", "/caf\xc3\xa9", "/a b", "/%25", "/a?%"}
	genVersions = []string{"HTTP/1.1", "HTTP/1.0", "HTTP/2.0", "HTTP/1.1 ", "HTTP/1.10", "HTTP/01.1"}
	// genFields are mostly plain fields; the tail holds the framing, hop-by-hop and
	// malformed ones.
	genFields = []string{
		"Idempotency-Key: k-1", "idempotency-key: k-2", "X: \t a \t", "X:", "Cookie: a=b; c=d", "Accept: */*", "User-Agent: go",
		"Content-Type: application/json", "Cache-Control: no-store", "X-Request-Id: 7", "Accept-Encoding: gzip, br", "x-y_z~1: \"q\"",
		"Host: a", "Host: api.example.test:8443", "Host: [::1]:80", "Content-Length: 0", "Content-Length: 3", "content-length: 03",
		"Connection: keep-alive", "Connection: close", "Keep-Alive: timeout=5", "Proxy-Connection: keep-alive",
		"Host:", "Host: a b", "host: B", "Host: a,b", "Content-Length: +3", "Content-Length: 3,3", "Content-Length:  3 ", "Content-Length: 3 3",
		"Transfer-Encoding: chunked", "Connection: foo", " folded", "\tfolded", "X : y", "X\t: y", ": y", "X",
		"Pragma: no-cache", "Expect: 100-continue", "Upgrade: websocket", "TE: trailers", "Trailer: X", "X: \x80", "X: \x00", "X: a\x7f",
	}
	genPlainFields = 12 // genFields[:genPlainFields] are plain
	genStatusLines = []string{"HTTP/1.1 200 OK", "HTTP/1.1 201 Created", "HTTP/1.1 204 No Content", "HTTP/1.1 304 Not Modified", "HTTP/1.1 404",
		"HTTP/1.1 500 ", "HTTP/1.1 100 Continue", "HTTP/1.1 101 Switching Protocols", "HTTP/1.0 200 OK", "HTTP/1.1  200 OK", "HTTP/1.1 2000", "HTTP/1.1 600 X"}
)

func pick[T any](rng *rand.Rand, xs []T) T { return xs[rng.IntN(len(xs))] }

// genHead builds a head: the first line, then n fields, each line ended by a mostly-CRLF
// ending, then a few body bytes.
func genHead(rng *rand.Rand, first string, mustHave []string) []byte {
	lines := append([]string{first}, mustHave...)
	for range rng.IntN(6) {
		if rng.IntN(3) > 0 {
			lines = append(lines, pick(rng, genFields[:genPlainFields]))
		} else {
			lines = append(lines, pick(rng, genFields))
		}
	}
	rng.Shuffle(len(lines)-1, func(i, j int) { lines[i+1], lines[j+1] = lines[j+1], lines[i+1] })
	lineEnd := func() string {
		switch rng.IntN(50) {
		case 0:
			return "\n"
		case 1:
			return "\r"
		}
		return "\r\n"
	}
	var b []byte
	for _, l := range lines {
		b = append(append(b, l...), lineEnd()...)
	}
	b = append(b, lineEnd()...)
	for range rng.IntN(6) {
		b = append(b, byte('a'+rng.IntN(26)))
	}
	return b
}

func generatedRequests(n int) [][]byte {
	rng := rand.New(rand.NewPCG(1, 1))
	out := make([][]byte, 0, n)
	for range n {
		line := "GET / HTTP/1.1"
		if rng.IntN(3) > 0 {
			line = pick(rng, genMethods) + " " + pick(rng, genTargets) + " " + pick(rng, genVersions)
		}
		var mustHave []string
		if rng.IntN(4) > 0 {
			mustHave = append(mustHave, "Host: a")
		}
		out = append(out, genHead(rng, line, mustHave))
	}
	return out
}

type responseInput struct {
	input    []byte
	bodyless bool
}

func generatedResponses(n int) []responseInput {
	rng := rand.New(rand.NewPCG(2, 2))
	out := make([]responseInput, 0, n)
	for range n {
		var mustHave []string
		if rng.IntN(3) > 0 {
			mustHave = append(mustHave, "Content-Length: 3")
		}
		out = append(out, responseInput{genHead(rng, pick(rng, genStatusLines), mustHave), rng.IntN(4) == 0})
	}
	return out
}

// TestExchangeSeesServerRefusal: the server harness reports a refused request as a 400
// and no handler record, so the differential check would see a refusal.
func TestExchangeSeesServerRefusal(t *testing.T) {
	srv := newRecordingServer(t)
	status, rec := srv.exchange(t, []byte(head("GET / HTTP/1.1", "Host: a b")))
	require.Equal(t, http.StatusBadRequest, status)
	require.Nil(t, rec)
	status, rec = srv.exchange(t, []byte(head("POST /p?q HTTP/1.1", "Host: a", "Content-Length: 2", "X: 1", "x: 2")+"hi"))
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, &serverRecord{method: "POST", requestURI: "/p?q", urlRequestURI: "/p?q", host: "a",
		header: http.Header{"Content-Length": {"2"}, "X": {"1", "2"}}, contentLength: 2, body: []byte("hi")}, rec)
}
