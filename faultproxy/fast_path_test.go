package faultproxy_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/faultproxy"
)

// The fast path (fast_exchange.go) and the net/http path must not be told apart by a
// client, an upstream or the journal. Every case here goes, byte for byte, to a proxy
// started with Start (fast path first) and to the same proxy served by net/http alone,
// and everything observable is compared.

// echoUpstream answers with what it received, in a shape chosen by the path.
func echoUpstream(t testing.TB) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		names := make([]string, 0, len(r.Header))
		for k := range r.Header {
			names = append(names, k)
		}
		sort.Strings(names)
		var hdr []string
		for _, k := range names {
			hdr = append(hdr, k+"="+strings.Join(r.Header[k], "|"))
		}
		echo, _ := json.Marshal(map[string]any{"method": r.Method, "uri": r.RequestURI, "headers": hdr, "body": string(body)})
		w.Header().Set("X-Upstream", "echo")
		switch {
		case strings.HasPrefix(r.URL.Path, "/chunked"):
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			w.Write(echo[:len(echo)/2])
			w.(http.Flusher).Flush()
			w.Write(echo[len(echo)/2:])
		case strings.HasPrefix(r.URL.Path, "/sse"):
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"progress\"}\n\n")
			w.(http.Flusher).Flush()
			fmt.Fprintf(w, "event: message\ndata: %s\n\n", echo)
		case strings.HasPrefix(r.URL.Path, "/early-hints"):
			w.Header().Set("Link", "</style.css>; rel=preload")
			w.WriteHeader(http.StatusEarlyHints)
			w.Write(echo)
		case strings.HasPrefix(r.URL.Path, "/no-content"):
			w.WriteHeader(http.StatusNoContent)
		case strings.HasPrefix(r.URL.Path, "/not-modified"):
			w.WriteHeader(http.StatusNotModified)
		case strings.HasPrefix(r.URL.Path, "/close"):
			w.Header().Set("Connection", "close")
			w.Write(echo)
		case strings.HasPrefix(r.URL.Path, "/no-type"):
			w.Header()["Content-Type"] = nil
			w.Write([]byte{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'})
		case strings.HasPrefix(r.URL.Path, "/big"):
			w.Header().Set("Content-Type", "text/plain")
			w.Write(bytes.Repeat([]byte("0123456789abcdef"), 8<<10))
		default:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusCreated)
			w.Write(echo)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// twoPaths is one upstream behind a started proxy and behind the same configuration
// served by net/http alone.
type twoPaths struct {
	fast, slow       *faultproxy.Proxy
	fastURL, slowURL string
}

func newTwoPaths(t testing.TB, upstream string, rules ...faultproxy.Rule) *twoPaths {
	return newTwoPathsWith(t, faultproxy.Config{Upstream: upstream, Rules: rules, Seed: 7})
}

func newTwoPathsWith(t testing.TB, cfg faultproxy.Config) *twoPaths {
	srv, err := faultproxy.Start(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { srv.Close() })
	slow, err := faultproxy.New(cfg)
	require.NoError(t, err)
	slowSrv := httptest.NewServer(slow)
	t.Cleanup(slowSrv.Close)
	return &twoPaths{fast: srv.Proxy(), slow: slow, fastURL: srv.URL(), slowURL: slowSrv.URL}
}

// exchange writes raw to a new connection to base and reads the answers of the requests
// in it (readAnswers); wait bounds the whole exchange.
func exchange(t testing.TB, base string, raw []byte, wait time.Duration) []string {
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.SetDeadline(time.Now().Add(wait)))
	_, err = conn.Write(raw)
	require.NoError(t, err)
	br := bufio.NewReader(conn)
	out := readAnswers(br, raw, errorClass)
	if len(out) == 0 {
		// Bytes with no request line this test recognises may still be one to the
		// server: wait for whatever it answers, or for it to close, so that its attempt
		// (if any) is journaled before the next input resets the journal.
		rest, err := io.ReadAll(br)
		if len(rest) > 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
			out = append(out, fmt.Sprintf("unexpected answer (%s): %q", errorClassOrEOF(err), firstLine(rest)))
		}
	}
	return out
}

// readAnswers reads from br the answers to the requests in raw (one per request line, at
// most 4), each as its status line, fields but Date, and body, with class naming a read
// error; interim (1xx) answers are entries of their own. It stops at an answer that
// closes the connection.
func readAnswers(br *bufio.Reader, raw []byte, class func(error) string) []string {
	methods := requestLine.FindAllSubmatch(raw, 4)
	var out []string
	for i := 0; i < len(methods); {
		resp, err := http.ReadResponse(br, &http.Request{Method: string(methods[i][1])})
		if err != nil {
			out = append(out, "error reading the answer: "+class(err))
			break
		}
		if resp.StatusCode >= 100 && resp.StatusCode < 200 {
			out = append(out, resp.Status) // an interim answer: the final one follows
			continue
		}
		i++
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		resp.Header.Del("Date")
		var b strings.Builder
		fmt.Fprintf(&b, "%s %s chunked=%v\n", resp.Proto, resp.Status, len(resp.TransferEncoding) > 0)
		resp.Header.Write(&b)
		fmt.Fprintf(&b, "\n%s", body)
		if err != nil {
			fmt.Fprintf(&b, "\nbody error: %s", class(err))
		}
		out = append(out, b.String())
		if resp.Close {
			break
		}
	}
	return out
}

func errorClassOrEOF(err error) string {
	if err == nil {
		return "EOF"
	}
	return errorClass(err)
}

// firstLine is what identifies an unexpected answer: its status line (the rest has a
// Date that differs between runs).
func firstLine(b []byte) []byte {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return b[:i]
	}
	return b
}

// requestLine finds the methods of the requests in a conversation, to read their answers.
var requestLine = regexp.MustCompile("([!#$%&'*+\\-.^_`|~0-9A-Za-z]+) \\S+ HTTP/1\\.")

func errorClass(err error) string {
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		return "timeout"
	case err == io.EOF, strings.Contains(err.Error(), "EOF"):
		return "EOF"
	case strings.Contains(err.Error(), "reset"):
		return "reset"
	}
	return err.Error()
}

// comparable is a record without what differs between any two runs.
func comparable(recs []faultproxy.Record) []faultproxy.Record {
	out := make([]faultproxy.Record, len(recs))
	for i, r := range recs {
		r.Seq, r.Time, r.UpstreamMillis, r.Note = 0, time.Time{}, 0, ""
		if r.ForwardedAfterMillis > 0 {
			r.ForwardedAfterMillis = 1 // when it differs; that it is there does not
		}
		out[i] = r
	}
	return out
}

func journalOf(t testing.TB, p *faultproxy.Proxy) []faultproxy.Record {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	require.NoError(t, p.WaitIdle(ctx))
	recs, err := p.Journal(ctx, faultproxy.JournalQuery{})
	require.NoError(t, err)
	return recs
}

var pathCases = []struct{ name, raw string }{
	{"keyed POST", "POST /v1/refunds HTTP/1.1\r\nHost: x\r\nidempotency-KEY: k1\r\nAuthorization: Bearer s\r\nContent-Length: 13\r\n\r\n{\"amount\":10}"},
	{"two on one connection", "GET /a?b=c HTTP/1.1\r\nHost: x\r\nX-Twice: 1\r\nx-twice: 2\r\n\r\nPOST /b HTTP/1.1\r\nHost: x\r\nIdempotency-Key: k2\r\nContent-Length: 2\r\n\r\n{}"},
	{"connection close", "POST /v1/refunds HTTP/1.1\r\nHost: x\r\nConnection: close\r\nIdempotency-Key: k3\r\nContent-Length: 2\r\n\r\n{}"},
	{"keep-alive named", "GET / HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n"},
	{"escaped path", "GET /a%2Fb/%41;x=1?q=%20&r=[1] HTTP/1.1\r\nHost: x\r\n\r\n"},
	{"HEAD", "HEAD /head HTTP/1.1\r\nHost: x\r\n\r\n"},
	{"chunked answer", "GET /chunked HTTP/1.1\r\nHost: x\r\n\r\nGET /after HTTP/1.1\r\nHost: x\r\n\r\n"},
	{"event stream", "POST /sse HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 46\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\"}"},
	{"early hints", "GET /early-hints HTTP/1.1\r\nHost: x\r\n\r\n"},
	{"204 then more", "DELETE /no-content HTTP/1.1\r\nHost: x\r\n\r\nGET /after HTTP/1.1\r\nHost: x\r\n\r\n"},
	{"304", "GET /not-modified HTTP/1.1\r\nHost: x\r\nIf-None-Match: \"a\"\r\n\r\n"},
	{"upstream closes", "GET /close HTTP/1.1\r\nHost: x\r\n\r\nGET /after HTTP/1.1\r\nHost: x\r\n\r\n"},
	{"no content type", "GET /no-type HTTP/1.1\r\nHost: x\r\n\r\n"},
	{"big answer", "GET /big HTTP/1.1\r\nHost: x\r\n\r\n"},
	{"keyed POST, no body, no length", "POST /v1/refunds HTTP/1.1\r\nHost: x\r\nIdempotency-Key: k4\r\n\r\n"},
	{"GET with a zero length", "GET /a HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n"},
	{"DELETE with a padded length", "DELETE /a HTTP/1.1\r\nHost: x\r\nContent-Length: 002\r\n\r\n{}"},
	{"no user agent kept", "GET /ua HTTP/1.1\r\nHost: x\r\nUser-Agent: curl/8\r\n\r\n"},
	{"empty user agent", "GET /ua HTTP/1.1\r\nHost: x\r\nUser-Agent:\r\n\r\n"},
	{"two user agents", "GET /ua HTTP/1.1\r\nHost: x\r\nUser-Agent: a\r\nUser-Agent: b\r\n\r\n"},
	{"empty query", "GET /q? HTTP/1.1\r\nHost: x\r\n\r\n"},
	// Left to net/http by the fast path: they must come out the same all the same.
	{"chunked request", "POST /v1/refunds HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"},
	{"CL and TE", "POST /v1/refunds HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"},
	{"two lengths", "POST /v1/refunds HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}x"},
	{"obs-fold", "GET / HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n 2\r\n\r\n"},
	{"space before colon", "GET / HTTP/1.1\r\nHost : x\r\n\r\n"},
	{"bare LF", "GET / HTTP/1.1\nHost: x\n\n"},
	{"no host", "GET / HTTP/1.1\r\nX-A: 1\r\n\r\n"},
	{"HTTP/1.0", "GET / HTTP/1.0\r\nHost: x\r\n\r\n"},
	{"expect continue", "POST /v1/refunds HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n{}"},
	{"connect", "CONNECT x:443 HTTP/1.1\r\nHost: x:443\r\n\r\n"},
	{"upgrade", "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"},
	{"fast then unusual", "GET /a HTTP/1.1\r\nHost: x\r\n\r\nPOST /b HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /c HTTP/1.1\r\nHost: x\r\n\r\n"},
}

func TestFastAndNetHTTPPathsAgree(t *testing.T) {
	up := echoUpstream(t)
	served := map[string]uint64{}
	for _, tc := range pathCases {
		t.Run(tc.name, func(t *testing.T) {
			paths := newTwoPaths(t, up.URL)
			want := exchange(t, paths.slowURL, []byte(tc.raw), 20*time.Second)
			got := exchange(t, paths.fastURL, []byte(tc.raw), 20*time.Second)
			require.Equal(t, want, got, "what the client read")
			require.Equal(t, comparable(journalOf(t, paths.slow)), comparable(journalOf(t, paths.fast)), "the journal")
			served[tc.name] = faultproxy.FastServed(paths.fast)
		})
	}
	// The comparison means something only if the fast path took the everyday cases and
	// left the odd ones to net/http.
	require.Equal(t, uint64(1), served["keyed POST"])
	require.Equal(t, uint64(2), served["two on one connection"])
	require.Equal(t, uint64(1), served["fast then unusual"])
	require.Zero(t, served["CL and TE"])
	require.Zero(t, served["obs-fold"])
}

// A rule the fast path picks moves the connection to net/http with the decision taken:
// the attempt is numbered once, the rule fires once, and the journal is the same.
func TestFastPathHandsFaultedAttemptsToNetHTTP(t *testing.T) {
	up := echoUpstream(t)
	rules := []faultproxy.Rule{
		{Name: "lose-first", Match: faultproxy.Match{Key: "*", Attempts: &faultproxy.Range{From: 1, To: 1}},
			Fault: faultproxy.FaultSpec{Type: "after-status", Status: 503}},
		{Name: "reset-once", Count: 1, Match: faultproxy.Match{Headers: map[string]string{"x-reset": "yes"}},
			Fault: faultproxy.FaultSpec{Type: "after-reset"}},
	}
	paths := newTwoPaths(t, up.URL, rules...)
	post := func(key string, extra string) string {
		return "POST /v1/refunds HTTP/1.1\r\nHost: x\r\nIdempotency-Key: " + key + "\r\n" + extra + "Content-Length: 2\r\n\r\n{}"
	}
	conversations := [][]byte{
		[]byte(post("a", "") + post("a", "") + post("b", "")),
		[]byte(post("b", "") + post("c", "X-Reset: yes\r\n")),
		[]byte(post("d", "X-Reset: yes\r\n") + post("d", "")),
	}
	for i, raw := range conversations {
		want := exchange(t, paths.slowURL, raw, 20*time.Second)
		got := exchange(t, paths.fastURL, raw, 20*time.Second)
		require.Equal(t, want, got, "conversation %d", i)
	}
	slow, fast := journalOf(t, paths.slow), journalOf(t, paths.fast)
	require.Equal(t, comparable(slow), comparable(fast))
	require.Len(t, fast, 7)
	require.Equal(t, paths.slow.Rules(), paths.fast.Rules())
	require.NotZero(t, faultproxy.FastServed(paths.fast), "the fast path forwarded none")
	require.NotZero(t, faultproxy.HandedOff(paths.fast), "no faulted attempt was handed to net/http")
}

// With the key in a JSON-RPC body (--key-field, an MCP tool call), both paths read the
// same key, id and method, fault the same attempts and answer the same.
func TestFastAndNetHTTPPathsAgreeOnKeyFields(t *testing.T) {
	up := echoUpstream(t)
	paths := newTwoPathsWith(t, faultproxy.Config{Upstream: up.URL, Seed: 7, KeyField: "params._meta.idempotency_key",
		Rules: []faultproxy.Rule{{Name: "lose-first", Match: faultproxy.Match{Key: "*", Attempts: &faultproxy.Range{From: 1, To: 1}},
			Fault: faultproxy.FaultSpec{Type: "after-status", Status: 503}}}})
	call := func(path, body string) string {
		return fmt.Sprintf("POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", path, len(body), body)
	}
	tool := func(id, key string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"refund","_meta":{"idempotency_key":` + key + `}}}`
	}
	for i, raw := range []string{
		call("/mcp", tool("1", `"k1"`)) + call("/mcp", tool("2", `"k1"`)),
		call("/sse", tool(`"a"`, `"k2"`)) + call("/sse", tool(`"b"`, `"k2"`)),
		call("/mcp", tool("3", "42")) + call("/mcp", tool("4", "42")),
		call("/mcp", `{"jsonrpc":"2.0","id":5,"method":"tools/list"}`),
		call("/mcp", `not json`) + call("/mcp", tool("6", "null")),
	} {
		want := exchange(t, paths.slowURL, []byte(raw), 20*time.Second)
		got := exchange(t, paths.fastURL, []byte(raw), 20*time.Second)
		require.Equal(t, want, got, "conversation %d", i)
	}
	fast := journalOf(t, paths.fast)
	require.Equal(t, comparable(journalOf(t, paths.slow)), comparable(fast))
	require.Equal(t, "k1", fast[0].Key)
	require.Equal(t, "tools/call", fast[0].RPCMethod)
	require.Equal(t, "1", fast[0].RPCID)
}

// A client that gives up while the upstream works ends the fast path's upstream call,
// as net/http's background read does on the other path, and the attempt is journaled.
func TestFastPathNoticesAClientThatLeaves(t *testing.T) {
	released, arrived := make(chan struct{}), make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Go's server watches for the client closing only once the body was read.
		io.ReadAll(r.Body)
		close(arrived)
		select {
		case <-r.Context().Done(): // the proxy closed the upstream call
			close(released)
		case <-time.After(30 * time.Second):
		}
	}))
	t.Cleanup(up.Close)
	srv, err := faultproxy.Start(context.Background(), faultproxy.Config{Upstream: up.URL})
	require.NoError(t, err)
	t.Cleanup(func() { srv.Close() })
	conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL(), "http://"))
	require.NoError(t, err)
	_, err = conn.Write([]byte("POST /slow HTTP/1.1\r\nHost: x\r\nIdempotency-Key: gone\r\nContent-Length: 2\r\n\r\n{}"))
	require.NoError(t, err)
	<-arrived
	conn.Close()
	select {
	case <-released:
	case <-time.After(20 * time.Second):
		t.Fatal("the upstream call outlived its client")
	}
	recs := journalOf(t, srv.Proxy())
	require.Len(t, recs, 1)
	require.Equal(t, faultproxy.ClientTimedOut, recs[0].ClientResult)
	require.True(t, recs[0].ReachedUpstream)
	require.Equal(t, 1, recs[0].Attempt)
}

// Shutdown lets an attempt in flight on the fast path finish and closes idle connections.
func TestFastPathShutdownFinishesInFlight(t *testing.T) {
	release, arrived := make(chan struct{}), make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(arrived)
		<-release
		w.Write([]byte("done"))
	}))
	t.Cleanup(up.Close)
	srv, err := faultproxy.Start(context.Background(), faultproxy.Config{Upstream: up.URL})
	require.NoError(t, err)
	addr := strings.TrimPrefix(srv.URL(), "http://")
	idle, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer idle.Close()
	busy, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer busy.Close()
	_, err = busy.Write([]byte("GET /wait HTTP/1.1\r\nHost: x\r\n\r\n"))
	require.NoError(t, err)
	<-arrived

	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		done <- srv.Shutdown(ctx)
	}()
	idle.SetReadDeadline(time.Now().Add(20 * time.Second))
	_, err = idle.Read(make([]byte, 1))
	require.ErrorIs(t, err, io.EOF, "an idle connection is closed at once")
	close(release)
	busy.SetReadDeadline(time.Now().Add(20 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(busy), nil)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	require.Equal(t, "done", string(body))
	require.NoError(t, <-done)
}

// The fast path keeps the client-side timeouts of net/http's server: a connection that
// sends nothing is closed after ReadHeaderTimeout, an idle keep-alive one after
// IdleTimeout, each once the answer before it went out.
func TestFastPathTimesOutQuietConnections(t *testing.T) {
	up := echoUpstream(t)
	srv, err := faultproxy.Start(context.Background(), faultproxy.Config{
		Upstream: up.URL, ReadHeaderTimeout: 300 * time.Millisecond, IdleTimeout: 300 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(func() { srv.Close() })
	addr := strings.TrimPrefix(srv.URL(), "http://")

	silent, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer silent.Close()
	silent.SetReadDeadline(time.Now().Add(20 * time.Second))
	_, err = silent.Read(make([]byte, 1))
	require.ErrorIs(t, err, io.EOF, "a connection that never sends a request is closed")

	idle, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer idle.Close()
	idle.SetDeadline(time.Now().Add(20 * time.Second))
	br := bufio.NewReader(idle)
	for range 3 { // requests well within the idle timeout keep it open
		_, err = idle.Write([]byte("GET /a HTTP/1.1\r\nHost: x\r\n\r\n"))
		require.NoError(t, err)
		resp, err := http.ReadResponse(br, nil)
		require.NoError(t, err)
		io.Copy(io.Discard, resp.Body)
		require.Equal(t, http.StatusCreated, resp.StatusCode)
	}
	_, err = br.ReadByte()
	require.ErrorIs(t, err, io.EOF, "an idle keep-alive connection is closed")
}
