package faultproxy

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/idemproof/idemproof/faultproxy/internal/h1"
)

// The fast path forwards a pass-through attempt without net/http's server: the request
// head is recognised in the connection's read buffer (internal/h1), journaled from
// substrings of one copy of it, written upstream with its fields as the client sent them
// (Host set to the upstream's, hop-by-hop fields dropped), and the upstream's answer is
// copied back; an answer of the common shape (a Content-Length, or none needed) is
// copied through byte for byte but for its hop-by-hop fields, anything else is read by
// net/http's ReadResponse and written by a small ResponseWriter (fastResponseWriter)
// through the same streaming code as the net/http path.
//
// What it keeps of the net/http path, so a record and what the upstream sees do not
// depend on which path served an attempt: one journal record per attempt, appended
// before the client can have the last byte of its answer; the upstream call made once,
// never resent; the upstream's status and fields passed through as they came (no Date,
// no sniffed Content-Type added on either path); a client that goes away while the
// upstream works ends the call (found within 2×fastWatchSlice, by a non-blocking peek);
// 502 for an upstream that fails. What differs, by design: the client's field names keep
// their case and order upstream (net/http canonicalises and sorts them).

// fastRequest is a fast-path connection's reusable parse state.
type fastRequest struct {
	req     h1.Request
	resp    h1.Response
	attempt attemptRecord
}

type fastResult int

const (
	fastKeep    fastResult = iota // serve the next request on the fast path
	fastClose                     // close the connection
	fastHandOff                   // the connection went to net/http
)

// fastDecision is what the fast path decided for a request it hands to net/http because
// a rule picked a fault: the attempt ordinal was counted and the rule fired, so the net/http
// path must take them over rather than decide again.
type fastDecision struct {
	epoch       *journalEpoch
	record      *Record // as journaled should net/http never serve it
	headerBytes int
	rule        *activeRule
}

// fastWatchSlice is how often the fast path checks that the clients of attempts waiting
// on the upstream are still there (connServer.watch).
const fastWatchSlice = 100 * time.Millisecond

// fastEligible is fixed when the proxy is built: the fast path needs the direct client
// for every upstream and no Classify hook (which needs the answer's body).
func (p *Proxy) fastEligible() bool {
	if p.direct == nil || p.cfg.Classify != nil {
		return false
	}
	for _, u := range p.upstreams {
		if p.direct.pools[u] == nil || u.RawPath != "" || strings.ContainsAny(u.Path, "%?#") {
			return false
		}
	}
	return true
}

// serveFast serves the request at the head of c's buffer, or hands the connection off.
func (p *Proxy) serveFast(s *connServer, c *fastConn, st *fastRequest) fastResult {
	buf, _ := c.br.Peek(c.br.Buffered())
	req := &st.req
	if !p.fast || h1.ParseRequest(buf, fastReadBuffer, req) != h1.Complete ||
		int64(len(buf)-req.HeadLen) < max(req.ContentLength, 0) ||
		(p.cfg.KeyField != "" && req.ContentLength > p.cfg.BufferLimit) {
		return p.handOffResult(s, c, nil)
	}
	start := time.Now()
	total := req.HeadLen + int(max(req.ContentLength, 0))
	// One copy of the head: the record's method, path and fields are substrings of it.
	a := &st.attempt
	*a = attemptRecord{epoch: p.journal.current(), buf: buf, head: string(buf[:req.HeadLen]), body: buf[req.HeadLen:total]}
	a.rec = &Record{Time: start, Method: a.sub(req.Method), Path: a.sub(req.Target)}
	if p.cfg.KeyField != "" && !p.readKeyField(a) {
		// A body whose key cannot be read unambiguously is refused; net/http's path
		// answers it, reading it from its first byte.
		return p.handOffResult(s, c, nil)
	}
	p.inFlight.Add(1)
	if l := p.rules.list.Load(); len(l.rules) > 0 {
		p.identify(a, req)
		info := &attemptInfo{method: a.rec.Method, path: targetPath(a.rec.Path),
			key: a.rec.Key, hasKey: a.rec.HasKey, attempt: a.rec.Attempt}
		if l.matchesHeaders {
			info.header = fastHeader(req.Fields, a.sub)
		}
		if ar := p.rules.choose(info); ar != nil {
			p.describe(a, req)
			return p.handOffResult(s, c, &fastDecision{epoch: a.epoch, record: a.rec, headerBytes: a.headerBytes, rule: ar})
		}
	}

	result, final := p.forwardFast(s, c, st, a)
	p.describe(a, req) // if the upstream was not reached
	if req.Close && result == fastKeep {
		result = fastClose
	}
	rec := a.rec
	rec.Outcome = outcomeOf(rec.ClientResult, rec.ClientStatus)
	p.journal.append(a.epoch, rec, a.headerBytes)
	p.fastServed.Add(1)
	p.inFlight.Add(-1)
	if final != nil {
		if _, err := final.flush(); err != nil {
			result = fastClose
		}
	}
	if result == fastKeep {
		c.br.Discard(total)
	}
	return result
}

// attemptRecord builds a fast-path attempt's journal record from the request in the
// read buffer. What a rule can match on (method, path, key, attempt) is read before the
// rules are asked (identify); the rest — the fields' map, the body's hash, and with no
// rules installed the key and attempt too — once the request is written upstream
// (describe), so it is done while the upstream works instead of before the upstream
// sees the request. Measured at one connection, that work was 5-6 µs of the 10 µs
// between a request's arrival and its write upstream.
type attemptRecord struct {
	epoch       *journalEpoch
	rec         *Record
	buf         []byte // the read buffer the head was copied from
	head        string
	body        []byte
	rpc         rpcExchange
	headerBytes int
	// identified: key, attempt and rpc are set; described: the whole record is.
	identified, described bool
}

// sub is the copy of the head's substring b, a slice of the read buffer.
func (a *attemptRecord) sub(b []byte) string {
	off := cap(a.buf) - cap(b)
	return a.head[off : off+len(b)]
}

// readKeyField reads the key from the JSON-RPC body (an MCP tool call), as the net/http
// path reads it, with the request's id and method; false: the request is to be refused.
// What the record keeps is copied, never a slice of the body.
func (p *Proxy) readKeyField(a *attemptRecord) bool {
	rec := a.rec
	a.rpc.parsed = true
	check := a.rpc.checked(a.body)
	a.rpc.id, _ = readJSONRPC(a.body, check, rec)
	k := readBodyKey(a.body, check, p.keySegs)
	rec.Key, rec.HasKey, rec.Note = k.key, k.ok, k.note
	return k.refuse == ""
}

// identify reads the attempt's key (from the head; a key field was read before) and
// counts the attempt.
func (p *Proxy) identify(a *attemptRecord, req *h1.Request) {
	if a.identified {
		return
	}
	a.identified = true
	rec := a.rec
	if p.cfg.KeyField == "" {
		for _, f := range req.Fields {
			if !f.Hop && equalFoldASCII(f.Name, p.cfg.KeyHeader) {
				// A copy: the attempt counters keep the key, and a substring would keep the head.
				rec.Key, rec.HasKey = string(f.Value), true
				break
			}
		}
	}
	if rec.HasKey {
		rec.Attempt = p.journal.nextAttempt(a.epoch, rec.Key)
	}
}

// describe completes the record: identify's part if not yet done, the fields and the
// body's hash.
func (p *Proxy) describe(a *attemptRecord, req *h1.Request) {
	if a.described {
		return
	}
	a.described = true
	p.identify(a, req)
	rec := a.rec
	rec.Headers, rec.HeadersClipped = p.recordFields(req.Fields, a.sub)
	// The fields alias the head: the record keeps all of it alive, so all of it counts.
	a.headerBytes = len(a.head) + len(rec.Headers)*headerEntryBytes
	if len(a.body) == 0 {
		rec.BodySHA256 = emptySHA256
	} else {
		sum := sha256.Sum256(a.body)
		rec.BodySHA256 = hex.EncodeToString(sum[:])
	}
}

func (p *Proxy) handOffResult(s *connServer, c *fastConn, d *fastDecision) fastResult {
	s.handOff(c, d)
	p.handedOff.Add(1)
	return fastHandOff
}

// targetPath is the decoded path of an origin-form target, as r.URL.Path is.
func targetPath(target string) string {
	path, _, _ := strings.Cut(target, "?")
	if strings.IndexByte(path, '%') < 0 {
		return path
	}
	if dec, err := url.PathUnescape(path); err == nil {
		return dec
	}
	return path
}

// fastHeader is the request's fields as net/http's header map, for rules that match on
// headers: canonical names, Host and hop-by-hop fields left out.
func fastHeader(fields []h1.Field, sub func([]byte) string) http.Header {
	h := make(http.Header, len(fields))
	values := make([]string, len(fields))
	for i, f := range fields {
		if f.Hop || equalFoldASCII(f.Name, "Host") {
			continue
		}
		k := http.CanonicalHeaderKey(sub(f.Name))
		values[i] = sub(f.Value)
		if vv, ok := h[k]; ok {
			h[k] = append(vv, values[i])
		} else {
			h[k] = values[i : i+1 : i+1]
		}
	}
	return h
}

// recordFields is recordHeaders for the fast path's fields: the same names, values,
// redaction and clipping.
func (p *Proxy) recordFields(fields []h1.Field, sub func([]byte) string) (map[string]string, int) {
	out := make(map[string]string, len(fields))
	total := 0
	for _, f := range fields {
		if f.Hop || equalFoldASCII(f.Name, "Host") {
			continue
		}
		k := http.CanonicalHeaderKey(sub(f.Name))
		v := sub(f.Value)
		if p.redacted[k] {
			v = "[redacted]"
		}
		if prev, ok := out[k]; ok {
			total -= len(prev)
			if !p.redacted[k] {
				v = prev + ", " + v
			}
		} else {
			total += len(k)
		}
		out[k] = v
		total += len(v)
	}
	clipped, _ := clipRecordHeaders(out, total, p.cfg.JournalHeaderLimit)
	return out, clipped
}

// equalFoldASCII compares a field name with a (canonical) name, ignoring ASCII case.
func equalFoldASCII(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range len(b) {
		x, y := b[i], s[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// fastOutput is the client's answer held back until the attempt is journaled.
type fastOutput struct {
	nc  net.Conn
	buf []byte
	put func()
}

func (o *fastOutput) flush() (int, error) {
	defer o.put()
	return o.nc.Write(o.buf)
}

// forwardFast makes the upstream call and writes the answer, all but the last bytes,
// which it returns to be written once the attempt is journaled.
func (p *Proxy) forwardFast(s *connServer, c *fastConn, st *fastRequest, a *attemptRecord) (fastResult, *fastOutput) {
	req, rec, body := &st.req, a.rec, a.body
	target := p.pick()
	pool := p.direct.pools[target]
	start := time.Now()
	up, err := pool.get(s.ctx, &p.direct.dialer)
	if err != nil {
		return p.fastUpstreamFailed(c, req, rec, fmt.Errorf("dial upstream: %w", err))
	}
	// The request, written once: the request line with the upstream's base path, Host,
	// the client's fields but Host and the hop-by-hop ones, the body.
	bw := up.bw
	bw.Write(req.Method)
	bw.WriteByte(' ')
	bw.WriteString(target.Path)
	bw.Write(req.Target)
	bw.WriteString(" HTTP/1.1\r\nHost: ")
	bw.WriteString(target.Host)
	bw.WriteString("\r\n")
	userAgent := false
	for _, f := range req.Fields {
		if f.Hop || equalFoldASCII(f.Name, "Host") || equalFoldASCII(f.Name, "Content-Length") {
			continue
		}
		if equalFoldASCII(f.Name, "User-Agent") {
			// As Go's client (the net/http path's) writes it: the first value only, and
			// none when that is empty.
			if userAgent || len(f.Value) == 0 {
				userAgent = true
				continue
			}
			userAgent = true
		}
		bw.Write(f.Name)
		bw.WriteString(": ")
		bw.Write(f.Value)
		bw.WriteString("\r\n")
	}
	// The length as Go's client (the net/http path's) writes it: the body's, and for an
	// empty body only on the methods that carry one.
	switch m := string(req.Method); {
	case len(body) > 0:
		bw.WriteString("Content-Length: ")
		bw.Write(strconv.AppendInt(up.num[:0], int64(len(body)), 10))
		bw.WriteString("\r\n")
	case m == http.MethodPost || m == http.MethodPut || m == http.MethodPatch:
		bw.WriteString("Content-Length: 0\r\n")
	}
	bw.WriteString("\r\n")
	bw.Write(body)
	rec.ReachedUpstream, rec.UpstreamCalls = true, 1
	rec.ForwardedAfterMillis = max(millis(start.Sub(rec.Time)), minForwardedAfter)
	err = bw.Flush()
	p.describe(a, req) // while the upstream works
	if err != nil {
		up.nc.Close()
		return p.fastUpstreamFailed(c, req, rec, fmt.Errorf("write request: %w", err))
	}

	bodyless := string(req.Method) == http.MethodHead
	resp := &st.resp
	c.await(up, start)
	for {
		b, _ := up.br.Peek(up.br.Buffered())
		v := h1.ParseResponse(b, up.br.Size(), bodyless, resp)
		if v == h1.Complete && !announcesEventStream(resp.Fields) {
			break
		}
		if v != h1.Incomplete {
			// Not of the common shape, or an event stream (passed on event by event
			// whatever its length says): net/http reads it, stream writes it.
			if !c.done() {
				up.nc.Close()
				return p.fastUpstreamFailed(c, req, rec, errClientGone)
			}
			return p.forwardGeneral(s, c, req, rec, body, a.rpc, pool, up, start)
		}
		if err := p.fillUpstream(s, up); err != nil {
			c.done()
			up.nc.Close()
			if errors.Is(err, io.EOF) {
				err = fmt.Errorf("upstream closed the connection before answering: %w", io.ErrUnexpectedEOF)
			}
			return p.fastUpstreamFailed(c, req, rec, fmt.Errorf("read response: %w", err))
		}
	}
	rec.UpstreamStatus = resp.Status
	bp := p.bufs.Get().(*[]byte)
	out := &fastOutput{nc: c.nc, buf: (*bp)[:0], put: func() { p.bufs.Put(bp) }}
	out.buf = appendStatusLine(out.buf, resp.Status)
	for _, f := range resp.Fields {
		if f.Hop {
			continue
		}
		out.buf = append(out.buf, f.Name...)
		out.buf = append(out.buf, ": "...)
		out.buf = append(out.buf, f.Value...)
		out.buf = append(out.buf, "\r\n"...)
	}
	if req.Close {
		out.buf = append(out.buf, "Connection: close\r\n"...)
	}
	out.buf = append(out.buf, "\r\n"...)
	reuse := !resp.Close
	up.br.Discard(resp.HeadLen)
	rec.ClientStatus, rec.ClientResult = resp.Status, ClientDelivered
	for left := resp.BodyLength(bodyless); left > 0; {
		if len(out.buf) == cap(out.buf) {
			if _, err := c.nc.Write(out.buf); err != nil {
				c.done()
				up.nc.Close()
				out.put()
				rec.UpstreamMillis = millis(time.Since(start))
				rec.ClientResult = ClientTimedOut
				rec.Note = "client went away during the response body: " + err.Error()
				return fastClose, nil
			}
			out.buf = out.buf[:0]
		}
		if up.br.Buffered() == 0 {
			if err := p.fillUpstream(s, up); err != nil {
				c.done()
				up.nc.Close()
				rec.UpstreamMillis = millis(time.Since(start))
				rec.ClientResult = ClientTruncated
				rec.Note = "upstream body failed: " + err.Error()
				// The connection ends after what was sent, so the client cannot take
				// the short body as complete.
				return fastClose, out
			}
		}
		n := int(min(left, int64(cap(out.buf)-len(out.buf)), int64(up.br.Buffered())))
		chunk, _ := up.br.Peek(n)
		out.buf = append(out.buf, chunk...)
		up.br.Discard(n)
		left -= int64(n)
	}
	rec.UpstreamMillis = millis(time.Since(start))
	if c.done() && reuse && up.br.Buffered() == 0 {
		pool.put(up)
	} else {
		up.nc.Close()
	}
	return fastKeep, out
}

// announcesEventStream: a Content-Type field of text/event-stream.
func announcesEventStream(fields []h1.Field) bool {
	for _, f := range fields {
		if equalFoldASCII(f.Name, "Content-Type") && len(f.Value) >= len(eventStreamType) &&
			equalFoldASCII(f.Value[:len(eventStreamType)], eventStreamType) {
			return true
		}
	}
	return false
}

// fillUpstream reads more of the upstream's answer into its buffer. A read the watchdog
// (connServer.watch) or close ended is the client's going away or the proxy's closing.
func (p *Proxy) fillUpstream(s *connServer, up *upConn) error {
	_, err := up.br.Peek(up.br.Buffered() + 1)
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		if s.ctx.Err() != nil {
			return fmt.Errorf("the proxy is closing: %w", s.ctx.Err())
		}
		return errClientGone
	}
	return err
}

var errClientGone = errors.New("the client went away")

// fastUpstreamFailed answers 502 as upstreamFailed does, or records a client that went
// away while the upstream worked.
func (p *Proxy) fastUpstreamFailed(c *fastConn, req *h1.Request, rec *Record, err error) (fastResult, *fastOutput) {
	if errors.Is(err, errClientGone) {
		rec.ClientResult = ClientTimedOut
		rec.Note = "client went away before the upstream answered: " + err.Error()
		return fastClose, nil
	}
	rec.Note = "upstream: " + err.Error()
	msg := "faultproxy: upstream failed: " + err.Error() + "\n"
	bp := p.bufs.Get().(*[]byte)
	out := &fastOutput{nc: c.nc, buf: (*bp)[:0], put: func() { p.bufs.Put(bp) }}
	out.buf = appendStatusLine(out.buf, http.StatusBadGateway)
	out.buf = append(out.buf, "Content-Length: "...)
	out.buf = strconv.AppendInt(out.buf, int64(len(msg)), 10)
	out.buf = append(out.buf, "\r\nContent-Type: text/plain; charset=utf-8\r\n"...)
	if req.Close {
		out.buf = append(out.buf, "Connection: close\r\n"...)
	}
	out.buf = append(out.buf, "\r\n"...)
	out.buf = append(out.buf, msg...)
	rec.ClientStatus, rec.ClientResult = http.StatusBadGateway, ClientError
	return fastKeep, out
}

// appendStatusLine writes the status line as net/http's server does for code.
func appendStatusLine(b []byte, code int) []byte {
	b = append(b, "HTTP/1.1 "...)
	b = strconv.AppendInt(b, int64(code), 10)
	b = append(b, ' ')
	if text := http.StatusText(code); text != "" {
		b = append(b, text...)
	} else {
		b = append(b, "status code "...)
		b = strconv.AppendInt(b, int64(code), 10)
	}
	return append(b, "\r\n"...)
}

// forwardGeneral finishes an attempt whose upstream answer is not of the common shape
// (no Content-Length, 1xx interim answers, an event stream, a large head): net/http's
// ReadResponse reads it and Exchange.stream writes it, as on the net/http path, through
// a fastResponseWriter.
func (p *Proxy) forwardGeneral(s *connServer, c *fastConn, req *h1.Request, rec *Record, body []byte, rpc rpcExchange, pool *connPool, up *upConn, start time.Time) (fastResult, *fastOutput) {
	r := (&http.Request{Method: rec.Method, Header: http.Header{}, Body: http.NoBody}).WithContext(s.ctx)
	w := &fastResponseWriter{nc: c.nc, header: http.Header{}, method: rec.Method, close: req.Close}
	ex := &Exchange{p: p, w: w, r: r, rec: rec, body: &requestBody{complete: true, eof: true, buf: body}, rpc: rpc}
	// A client that goes away while the upstream answers ends the call, as on the
	// net/http path (whose server watches the connection in the background).
	watch, stopWatch := watchPeer(s.ctx, c.nc)
	defer stopWatch()
	defer c.disarm() // stopWatch moves the client's read deadline
	unwatch := context.AfterFunc(watch, func() { up.nc.SetDeadline(time.Unix(1, 0)) })
	resp, err := readFinalResponse(up, r)
	if err != nil {
		unwatch()
		up.nc.Close()
		if watch.Err() != nil {
			err = errClientGone
		}
		return p.fastUpstreamFailed(c, req, rec, err)
	}
	db := &directBody{rc: resp.Body, c: up, pool: pool, stop: unwatch, reuse: !resp.Close}
	if resp.Body == http.NoBody {
		db.finish(true)
	} else {
		resp.Body = db
	}
	ex.stream(&sendResult{resp: resp, start: start})
	if ex.hijacked != nil || rec.ClientResult != ClientDelivered {
		w.Flush()
		return fastClose, nil
	}
	return fastKeep, &fastOutput{nc: c.nc, buf: w.finish(), put: func() {}}
}

// fastResponseWriter is the http.ResponseWriter forwardGeneral streams through: it
// frames the answer as net/http's server would (the Content-Length given, none for a
// bodyless answer, chunked otherwise) and keeps the last bytes for fastOutput.
type fastResponseWriter struct {
	nc          net.Conn
	header      http.Header
	method      string
	buf         []byte
	wroteHeader bool
	bodyless    bool
	chunked     bool
	hijacked    bool
	close       bool // the client asked to close: say so, as net/http's server does
}

// fastResponseFlushAt is how much the writer holds before it writes to the client.
const fastResponseFlushAt = 4 << 10

func (w *fastResponseWriter) Header() http.Header { return w.header }

func (w *fastResponseWriter) WriteHeader(code int) {
	if w.wroteHeader {
		return
	}
	w.wroteHeader = true
	w.buf = appendStatusLine(w.buf, code)
	w.bodyless = w.method == http.MethodHead || code == http.StatusNoContent || code == http.StatusNotModified
	if _, err := strconv.ParseInt(w.header.Get("Content-Length"), 10, 64); err != nil && !w.bodyless {
		w.header.Del("Content-Length")
		w.chunked = true
		w.buf = append(w.buf, "Transfer-Encoding: chunked\r\n"...)
	}
	w.header.Write((*appendWriter)(&w.buf))
	if w.close {
		w.buf = append(w.buf, "Connection: close\r\n"...)
	}
	w.buf = append(w.buf, "\r\n"...)
}

func (w *fastResponseWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	if w.bodyless || len(p) == 0 {
		return len(p), nil
	}
	if w.chunked {
		w.buf = strconv.AppendInt(w.buf, int64(len(p)), 16)
		w.buf = append(w.buf, "\r\n"...)
		w.buf = append(w.buf, p...)
		w.buf = append(w.buf, "\r\n"...)
	} else {
		w.buf = append(w.buf, p...)
	}
	if len(w.buf) >= fastResponseFlushAt {
		if err := w.write(); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

func (w *fastResponseWriter) write() error {
	_, err := w.nc.Write(w.buf)
	w.buf = w.buf[:0]
	return err
}

// Flush writes what is held (event streams flush every chunk).
func (w *fastResponseWriter) Flush() { w.write() }

// Hijack hands the connection to the fault path that ends it (an upstream body that
// failed): it is closed once the attempt is journaled.
func (w *fastResponseWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	w.hijacked = true
	return w.nc, bufio.NewReadWriter(bufio.NewReader(w.nc), bufio.NewWriter(w.nc)), nil
}

// finish is what is left to write: the held bytes and the last chunk.
func (w *fastResponseWriter) finish() []byte {
	w.WriteHeader(http.StatusOK)
	if w.chunked {
		w.buf = append(w.buf, "0\r\n\r\n"...)
	}
	return w.buf
}

type appendWriter []byte

func (a *appendWriter) Write(p []byte) (int, error) {
	*a = append(*a, p...)
	return len(p), nil
}
