package faultproxy

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Exchange is one attempt in flight: the client's request, the proxy's means to reach the
// upstream, and the journal record being filled. A Fault drives it through these methods;
// each one records what it did, so a fault never writes the journal itself.
//
// Exactly one of the answering methods (Forward, ForwardTwice, Deliver, Respond, Reset,
// Close, Truncate) should reach the client; Upstream and Wait report false when the
// exchange is already over (the upstream failed, the response was too large to hold and
// went through as is, or the client went away), and the fault must then just return.
type Exchange struct {
	p         *Proxy
	w         http.ResponseWriter
	r         *http.Request
	rec       *Record
	body      *requestBody
	outHeader http.Header
	answered  bool
	// headerBytes is the recorded headers' share of the journal's byte budget, counted
	// once when they were recorded.
	headerBytes int
	// hijacked is a client connection taken over to damage the answer; finish closes it
	// after journaling, so a client that retries as soon as it sees the close finds the
	// attempt it retries already in the journal (seq follows what clients observed).
	hijacked net.Conn
	rpc      rpcExchange // JSON-RPC id and the answer kept for Config.Classify (jsonrpc.go)
	// retireUpstream: every upstream connection this attempt's calls use is closed after
	// the call instead of going back to the pool (the request says "Connection: close").
	// Upstream and ForwardTwice set it: the client's retry of an answer the fault damaged,
	// or the second copy of a duplicate, must reach the upstream on another connection,
	// as it would through another proxy instance; a target that scoped its idempotency
	// state to a connection would otherwise pass.
	retireUpstream bool
}

func (p *Proxy) newExchange(w http.ResponseWriter, r *http.Request) *Exchange {
	removeHopHeaders(r.Header)
	headers, clipped, headerBytes := p.recordHeaders(r.Header, p.cfg.JournalHeaderLimit)
	rec := &Record{Time: time.Now(), Method: r.Method, Path: r.URL.RequestURI(), Headers: headers, HeadersClipped: clipped}
	rec.Path, rec.PathClipped = clipPath(rec.Path)
	return &Exchange{
		p: p, w: w, r: r,
		rec:         rec,
		headerBytes: headerBytes + len(headers)*headerEntryBytes,
		body:        newRequestBody(r.Body, r.ContentLength),
		outHeader:   r.Header,
	}
}

// clipPath keeps at most maxPathRecorded bytes of a request path for the journal, and
// says how many it cut.
func clipPath(path string) (string, int) {
	if len(path) <= maxPathRecorded {
		return path, 0
	}
	return strings.Clone(path[:maxPathRecorded]), len(path) - maxPathRecorded
}

// Context ends when the client goes away or the server shuts down.
func (ex *Exchange) Context() context.Context { return ex.r.Context() }

// Request is the client's request, read-only; its body belongs to the Exchange.
func (ex *Exchange) Request() *http.Request { return ex.r }

// Key returns the attempt's idempotency key, whether it had one, and its attempt ordinal.
func (ex *Exchange) Key() (key string, ok bool, attempt int) {
	return ex.rec.Key, ex.rec.HasKey, ex.rec.Attempt
}

// Note appends a remark to the journal record.
func (ex *Exchange) Note(s string) {
	if ex.rec.Note != "" {
		ex.rec.Note += "; "
	}
	ex.rec.Note += s
}

// UpstreamResponse is a complete, buffered upstream response.
type UpstreamResponse struct {
	Status int
	Header http.Header // end-to-end fields only
	Body   []byte
}

// Forward sends the request upstream and streams the response to the client unbuffered.
func (ex *Exchange) Forward() {
	if !ex.readAvailable() {
		return
	}
	body, n := ex.body.forwardBody()
	res := ex.send(ex.r.Context(), ex.p.pick(), body, n)
	ex.count(res)
	if res.err != nil {
		ex.upstreamFailed(res)
		return
	}
	ex.stream(res)
}

// Upstream sends the request upstream and buffers the complete response. It returns false
// when the exchange is already over: the upstream failed (the client got a 502), or the
// response exceeded Config.BufferLimit and was streamed to the client as is.
func (ex *Exchange) Upstream() (*UpstreamResponse, bool) {
	if !ex.readAvailable() {
		return nil, false
	}
	// Decided before the call: the connection is released when the body is read, before
	// the fault acts on the response (and after-delay's client may give up meanwhile).
	ex.retireUpstream = true
	// The call's own context: an event stream that outlasts Config.StreamWait is ended
	// through it (readUpstreamBody), the client's connection left alone.
	ctx, endCall := context.WithCancel(ex.r.Context())
	defer endCall()
	body, n := ex.body.forwardBody()
	res := ex.send(ctx, ex.p.pick(), body, n)
	ex.count(res)
	if res.err != nil {
		ex.upstreamFailed(res)
		return nil, false
	}
	resp := res.resp
	ex.rec.UpstreamStatus = resp.StatusCode
	limit := ex.p.cfg.BufferLimit
	data, err := ex.readUpstreamBody(resp, limit, endCall)
	if errors.Is(err, errStreamWaitOver) {
		ex.Note(fmt.Sprintf("event stream: no JSON-RPC response and no end within %v (the stream wait): the fault applies to the %d bytes that arrived", ex.p.cfg.StreamWait, len(data)))
		err = nil
	}
	if err != nil {
		resp.Body.Close()
		ex.rec.UpstreamMillis = millis(time.Since(res.start))
		ex.upstreamFailed(&sendResult{err: fmt.Errorf("read upstream body: %w", err)})
		return nil, false
	}
	if int64(len(data)) > limit {
		ex.Note(fmt.Sprintf("response over buffer limit (%d bytes): fault not applied", limit))
		res.resp.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(data), resp.Body), resp.Body}
		ex.stream(res)
		return nil, false
	}
	resp.Body.Close()
	ex.rec.UpstreamMillis = millis(time.Since(res.start))
	ex.rec.UpstreamContentEncoding = resp.Header.Get("Content-Encoding")
	if len(data) <= ex.p.cfg.JournalBodyLimit {
		ex.rec.UpstreamBody = data
	} else {
		ex.rec.UpstreamBody = append([]byte(nil), data[:ex.p.cfg.JournalBodyLimit]...)
		ex.rec.UpstreamBodyClipped = len(data) - ex.p.cfg.JournalBodyLimit
	}
	// Go's server notices a client that goes away only once the request body was read to
	// its end; holds and delays depend on that.
	ex.body.drain(ex.p.cfg.BufferLimit)
	removeHopHeaders(resp.Header)
	return &UpstreamResponse{Status: resp.StatusCode, Header: resp.Header, Body: data}, true
}

// readAvailable takes a small request body that already arrived, so it goes upstream
// with the request headers in one write (see requestBody.readAvailable). false: the
// client's body failed before anything went upstream, and the client got 408 or 400.
func (ex *Exchange) readAvailable() bool {
	_, expect := ex.r.Header["Expect"]
	ex.body.readAvailable(expect)
	if ex.body.failure() != nil {
		ex.bodyFailed()
		return false
	}
	return true
}

// bodyFailed answers a request whose body could not be read: 408 when it stalled past
// Config.BodyTimeout, 400 when it was malformed or cut (a bad chunked encoding), and
// closes the connection. When the body was streaming upstream, that call was aborted
// with it (the upstream saw an incomplete body, never a complete request).
func (ex *Exchange) bodyFailed() {
	err := ex.body.failure()
	where := "before the upstream call"
	if ex.rec.ReachedUpstream {
		where = "the upstream call was aborted, its body incomplete"
	}
	if clientWentAway(err) {
		// Nobody is left to read an answer (or the client half-closed mid-body): end the
		// connection without one rather than let the server send its default 200.
		ex.rec.ClientResult = ClientTimedOut
		ex.answered = true
		ex.Note(fmt.Sprintf("client went away in the middle of the request body (%v): %s", err, where))
		panic(http.ErrAbortHandler)
	}
	status := http.StatusBadRequest
	msg := "faultproxy: the request body could not be read: " + err.Error() + "\n"
	if isTimeout(err) {
		status = http.StatusRequestTimeout
		msg = fmt.Sprintf("faultproxy: the request body did not arrive within %v\n", ex.p.cfg.BodyTimeout)
	}
	ex.Note(fmt.Sprintf("client request body failed (%v): %s", err, where))
	ex.Respond(status, http.Header{"Content-Type": {"text/plain; charset=utf-8"}, "Connection": {"close"}}, []byte(msg))
}

// clientWentAway: the body ended early because the connection did (the client closed or
// reset it), not because of a timeout or a malformed encoding.
func clientWentAway(err error) bool {
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

// ForwardTwice delivers the request upstream twice — one copy after the other, or both at
// the same moment — to two different upstreams when there are several, and streams the
// second copy's response to the client. A request body over the buffer limit cannot be
// sent twice: it is forwarded once and the record says so.
func (ex *Exchange) ForwardTwice(concurrent bool) {
	if !ex.body.bufferAll(ex.p.cfg.BufferLimit) {
		if ex.body.failure() != nil {
			ex.bodyFailed()
			return
		}
		ex.Note(fmt.Sprintf("request body over buffer limit (%d bytes): duplicate not applied", ex.p.cfg.BufferLimit))
		ex.Forward()
		return
	}
	ex.retireUpstream = true // copy 2 must not follow copy 1 on its connection
	ctx := ex.r.Context()
	first, second := ex.p.pickPair()
	sendDrained := func() *sendResult {
		body, n := ex.body.forwardBody()
		res := ex.send(ctx, first, body, n)
		if res.err == nil {
			io.Copy(io.Discard, res.resp.Body)
			res.resp.Body.Close()
		}
		return res
	}
	var res1 *sendResult
	var wg sync.WaitGroup
	if concurrent {
		wg.Add(1)
		go func() { defer wg.Done(); res1 = sendDrained() }()
	} else {
		res1 = sendDrained()
	}
	body, n := ex.body.forwardBody()
	res2 := ex.send(ctx, second, body, n)
	ex.count(res2)
	if res2.err != nil {
		ex.upstreamFailed(res2)
	} else {
		ex.stream(res2)
	}
	wg.Wait()
	ex.count(res1)
	mode := ModeSequential
	if concurrent {
		mode = ModeConcurrent
	}
	ex.Note(fmt.Sprintf("duplicate %s: copy 1 to %s: %s; copy 2 to %s: %s", mode, first.Host, describe(res1), second.Host, describe(res2)))
}

func describe(res *sendResult) string {
	if res.err != nil {
		return "error: " + res.err.Error()
	}
	return strconv.Itoa(res.resp.StatusCode)
}

// Deliver writes a buffered upstream response to the client.
func (ex *Exchange) Deliver(resp *UpstreamResponse) {
	ex.Respond(resp.Status, resp.Header, resp.Body)
}

// Respond writes a complete response of the proxy's making. When the request never went
// upstream its body is read first, so the journal fingerprints it all the same.
func (ex *Exchange) Respond(status int, header http.Header, body []byte) {
	if !ex.rec.ReachedUpstream {
		ex.body.drain(ex.p.cfg.BufferLimit)
	}
	h := ex.w.Header()
	copyHeader(h, header)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	ex.w.WriteHeader(status)
	ex.w.Write(body)
	ex.capture(header).write(body)
	ex.delivered(status)
}

// Reset aborts the client connection with a TCP RST (SO_LINGER 0).
func (ex *Exchange) Reset() {
	ex.abort(ClientReset, true)
}

// Close closes the client connection without sending a byte (a FIN).
func (ex *Exchange) Close() {
	ex.abort(ClientClosed, false)
}

// Truncate sends the status line, the headers with the full Content-Length, and only the
// first n bytes of the body, then closes the connection. When n covers the whole body the
// response is delivered whole and the record says so.
func (ex *Exchange) Truncate(resp *UpstreamResponse, n int) {
	if n >= len(resp.Body) {
		ex.Note(fmt.Sprintf("truncate at %d bytes covers the whole %d-byte body: delivered whole", n, len(resp.Body)))
		ex.Deliver(resp)
		return
	}
	conn, brw, ok := ex.hijack()
	if !ok {
		return
	}
	ex.hijacked = conn
	fmt.Fprintf(brw, "HTTP/1.1 %03d %s\r\n", resp.Status, http.StatusText(resp.Status))
	h := resp.Header.Clone()
	h.Set("Content-Length", strconv.Itoa(len(resp.Body)))
	h.Del("Connection")
	h.Write(brw)
	brw.WriteString("\r\n")
	brw.Write(resp.Body[:n])
	brw.Flush()
	ex.rec.ClientStatus = resp.Status
	ex.rec.ClientResult = ClientTruncated
	ex.answered = true
}

// Wait pauses for d. It returns false, and records the client as timed out, when the
// client goes away first; the fault must then return without answering.
func (ex *Exchange) Wait(d time.Duration) bool {
	if !ex.rec.ReachedUpstream {
		// Buffering the (bounded) body lets the server notice a client that hangs up.
		ex.body.bufferAll(ex.p.cfg.BufferLimit)
	}
	start := time.Now()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ex.r.Context().Done():
		ex.rec.ClientResult = ClientTimedOut
		ex.answered = true
		ex.Note(fmt.Sprintf("client went away after %v of a %v wait", time.Since(start).Round(time.Millisecond), d))
		return false
	}
}

// count notes one upstream call that reached the upstream (it may have committed even if
// no response came back).
func (ex *Exchange) count(res *sendResult) {
	if !res.wrote.Load() {
		return
	}
	ex.rec.ReachedUpstream = true
	ex.rec.UpstreamCalls++
	if after := max(millis(res.start.Sub(ex.rec.Time)), minForwardedAfter); ex.rec.ForwardedAfterMillis == 0 || after < ex.rec.ForwardedAfterMillis {
		ex.rec.ForwardedAfterMillis = after // the earlier of a duplicate's two calls
	}
}

// minForwardedAfter keeps a forwarded request's ForwardedAfterMillis nonzero, so 0 means
// it never left.
const minForwardedAfter = 0.001

// upstreamFailed answers 502 for an upstream that could not be reached or failed, unless
// the client already went away.
func (ex *Exchange) upstreamFailed(res *sendResult) {
	if ex.body.failure() != nil {
		// The client's body failed first (Go's server then ends the request's context
		// too, so this comes before the "client went away" case): the client is still
		// there to read why.
		ex.bodyFailed()
		return
	}
	if ex.r.Context().Err() != nil {
		ex.rec.ClientResult = ClientTimedOut
		ex.answered = true
		ex.Note("client went away before the upstream answered: " + res.err.Error())
		return
	}
	ex.Note("upstream: " + res.err.Error())
	h := ex.w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	body := []byte("faultproxy: upstream failed: " + res.err.Error() + "\n")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	ex.w.WriteHeader(http.StatusBadGateway)
	ex.w.Write(body)
	ex.rec.ClientStatus = http.StatusBadGateway
	ex.rec.ClientResult = ClientError
	ex.answered = true
}

// stream copies an upstream response to the client with a pooled buffer, flushing after
// each chunk when the length is unknown or the answer is an event stream (events must
// not sit in a buffer).
func (ex *Exchange) stream(res *sendResult) {
	resp := res.resp
	defer resp.Body.Close()
	ex.rec.UpstreamStatus = resp.StatusCode
	removeHopHeaders(resp.Header)
	h := ex.w.Header()
	copyHeader(h, resp.Header)
	// The upstream's fields pass as they came: net/http's server would add a Date and a
	// sniffed Content-Type to an answer without them (nil values suppress that).
	for _, k := range [...]string{"Date", "Content-Type"} {
		if _, ok := resp.Header[k]; !ok {
			h[k] = nil
		}
	}
	ex.w.WriteHeader(resp.StatusCode)
	ex.delivered(resp.StatusCode)

	bp := ex.p.bufs.Get().(*[]byte)
	defer ex.p.bufs.Put(bp)
	buf := *bp
	answer := ex.capture(resp.Header)
	flusher, _ := ex.w.(http.Flusher)
	if resp.ContentLength >= 0 && !isEventStream(resp.Header) {
		flusher = nil
	}
	for {
		n, rerr := resp.Body.Read(buf)
		if n > 0 {
			if _, werr := ex.w.Write(buf[:n]); werr != nil {
				ex.rec.UpstreamMillis = millis(time.Since(res.start))
				if answer.answered() {
					ex.Note("client closed the event stream after its JSON-RPC response: " + werr.Error())
					return
				}
				ex.rec.ClientResult = ClientTimedOut
				ex.Note("client went away during the response body: " + werr.Error())
				return
			}
			if flusher != nil {
				flusher.Flush()
			}
			answer.write(buf[:n])
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			ex.rec.UpstreamMillis = millis(time.Since(res.start))
			if answer.answered() {
				ex.Note("event stream ended after its JSON-RPC response: " + rerr.Error())
				return
			}
			ex.rec.ClientResult = ClientTruncated
			ex.Note("upstream body failed: " + rerr.Error())
			// End the connection (in finish) so the client cannot take the short body
			// as complete.
			if conn, _, ok := ex.hijack(); ok {
				ex.hijacked = conn
			}
			return
		}
	}
	ex.rec.UpstreamMillis = millis(time.Since(res.start))
}

func (ex *Exchange) delivered(status int) {
	ex.rec.ClientStatus = status
	ex.rec.ClientResult = ClientDelivered
	ex.answered = true
}

// abort ends the client connection without a response: RST when reset, else FIN.
func (ex *Exchange) abort(result string, reset bool) {
	if !ex.rec.ReachedUpstream {
		ex.body.drain(ex.p.cfg.BufferLimit)
	}
	conn, _, ok := ex.hijack()
	if !ok {
		return
	}
	if reset {
		if tc, ok := underlyingTCP(conn); ok {
			tc.SetLinger(0)
		}
	}
	ex.hijacked = conn // closed by finish, once the attempt is journaled
	ex.rec.ClientResult = result
	ex.answered = true
}

// hijack takes over the client connection. Where that is impossible (HTTP/2, a test
// recorder) it aborts the handler, which closes the connection, and records it.
func (ex *Exchange) hijack() (net.Conn, *bufio.ReadWriter, bool) {
	conn, brw, err := http.NewResponseController(ex.w).Hijack()
	if err != nil {
		ex.Note("cannot take over the client connection: " + err.Error())
		ex.rec.ClientResult = ClientClosed
		ex.answered = true
		panic(http.ErrAbortHandler)
	}
	return conn, brw, true
}

func underlyingTCP(c net.Conn) (*net.TCPConn, bool) {
	if nc, ok := c.(interface{ NetConn() net.Conn }); ok {
		c = nc.NetConn()
	}
	tc, ok := c.(*net.TCPConn)
	return tc, ok
}

// finish completes the record and appends it to the journal of the epoch the attempt
// started in, then closes a taken-over client connection. It runs deferred, so an
// aborted handler is journaled too.
func (ex *Exchange) finish(epoch *journalEpoch) {
	p := recover()
	if ex.hijacked != nil {
		defer ex.hijacked.Close()
	}
	rec := ex.rec
	rec.BodySHA256 = ex.body.sum()
	if rec.ClientResult == "" {
		rec.ClientResult = ClientClosed
		ex.Note("handler ended without a response")
	}
	rec.Outcome = outcomeOf(rec.ClientResult, rec.ClientStatus)
	ex.classify()
	ex.p.journal.append(epoch, rec, ex.headerBytes)
	if p != nil {
		panic(p)
	}
}
