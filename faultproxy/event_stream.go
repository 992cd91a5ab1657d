package faultproxy

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync/atomic"
	"time"
)

// Event streams (text/event-stream, the answer of an MCP Streamable HTTP server to a
// tools/call) are answers that arrive over time: progress notifications first, the
// JSON-RPC response last, then the server ends the stream.
//
//   - Pass-through streams them unbuffered, flushing every chunk as it arrives (stream in
//     exchange.go), whatever the Content-Length says.
//   - A fault that needs the complete answer (Upstream) reads until the stream ends —
//     the upstream closes it, or the JSON-RPC response to the request's id has arrived
//     (a server that keeps a request's stream open after its response has still answered
//     completely) — up to Config.BufferLimit and for at most Config.StreamWait (a server
//     that only sends keep-alive pings would hold the client for as long as it pings),
//     then applies the fault to what it read.
//
// The parser is hand-written because it must work on bytes as they pass through, keep
// at most one event in memory, and live in a package that depends on no MCP library; the
// SDKs' own readers are unexported and pull from an io.Reader.

// isEventStream reports whether a response header announces a text/event-stream.
func isEventStream(h http.Header) bool {
	ct := h.Get("Content-Type")
	// Every proxied response asks; most are not streams, and the prefix says so cheaply.
	if len(ct) < len(eventStreamType) || !strings.EqualFold(ct[:len(eventStreamType)], eventStreamType) {
		return false
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == eventStreamType
}

const eventStreamType = "text/event-stream"

// errStreamWaitOver: an event stream brought neither its JSON-RPC response nor its end
// within Config.StreamWait.
var errStreamWaitOver = errors.New("event stream wait over")

// readUpstreamBody reads a buffered upstream answer: to its end, or for an event stream
// until the JSON-RPC response to the request has arrived, for at most Config.StreamWait
// (then endCall ends the upstream call, and the bytes read come with errStreamWaitOver).
// It reads at most limit+1 bytes; more than limit means "over the buffer limit".
func (ex *Exchange) readUpstreamBody(resp *http.Response, limit int64, endCall func()) ([]byte, error) {
	if !isEventStream(resp.Header) {
		return io.ReadAll(io.LimitReader(resp.Body, limit+1))
	}
	var waitOver atomic.Bool
	if wait := ex.p.cfg.StreamWait; wait > 0 {
		t := time.AfterFunc(wait, func() { waitOver.Store(true); endCall() })
		defer t.Stop()
	}
	// Without a JSON-RPC request the proxy could read (id nil), only the end of the
	// stream ends it.
	id, _ := ex.jsonRPC()
	var sc *eventScanner
	if id != nil {
		sc = newEventScanner(id, limit)
	}
	var buf bytes.Buffer
	bp := ex.p.bufs.Get().(*[]byte)
	defer ex.p.bufs.Put(bp)
	chunk := *bp
	for int64(buf.Len()) <= limit {
		want := min(int64(len(chunk)), limit+1-int64(buf.Len()))
		n, err := resp.Body.Read(chunk[:want])
		buf.Write(chunk[:n])
		if sc != nil {
			sc.Write(chunk[:n])
			if sc.response != nil {
				return buf.Bytes(), nil
			}
		}
		switch {
		case err == io.EOF:
			return buf.Bytes(), nil
		case err != nil && waitOver.Load():
			return buf.Bytes(), errStreamWaitOver
		case err != nil:
			return buf.Bytes(), err
		}
	}
	return buf.Bytes(), nil
}

// eventScanner parses a text/event-stream fed in chunks and keeps the first JSON-RPC
// response it carries (to wantID, or any id when wantID is nil). It holds one line and
// one event's data at a time, each at most limit bytes; a longer event is skipped.
type eventScanner struct {
	wantID   []byte // compact JSON of the request's id
	limit    int64
	line     []byte
	lineOver bool
	afterCR  bool // the previous chunk ended with CR: a leading LF belongs to it
	data     []byte
	hasData  bool
	dataOver bool
	event    string
	response []byte
}

func newEventScanner(wantID []byte, limit int64) *eventScanner {
	return &eventScanner{wantID: wantID, limit: limit}
}

// Write consumes the next bytes of the stream; it never fails.
func (s *eventScanner) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		if s.afterCR {
			s.afterCR = false
			if p[0] == '\n' {
				p = p[1:]
				continue
			}
		}
		i := bytes.IndexAny(p, "\r\n")
		if i < 0 {
			s.appendLine(p)
			break
		}
		s.appendLine(p[:i])
		s.afterCR = p[i] == '\r'
		p = p[i+1:]
		s.endLine()
	}
	return n, nil
}

func (s *eventScanner) appendLine(p []byte) {
	if s.lineOver || int64(len(s.line)+len(p)) > s.limit {
		s.lineOver = true
		return
	}
	s.line = append(s.line, p...)
}

// endLine applies one complete line (the SSE field rules): a blank line dispatches the
// event, a leading colon is a comment, "data" lines accumulate, "event" names the event.
func (s *eventScanner) endLine() {
	line, over := s.line, s.lineOver
	s.line, s.lineOver = s.line[:0], false
	if over {
		s.dataOver = true // a field was cut: the event cannot be trusted
		return
	}
	if len(line) == 0 {
		s.dispatch()
		return
	}
	if line[0] == ':' {
		return
	}
	field, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		field, value = line[:i], bytes.TrimPrefix(line[i+1:], []byte(" "))
	}
	switch string(field) {
	case "data":
		if s.dataOver || int64(len(s.data)+len(value)+1) > s.limit {
			s.dataOver = true
			return
		}
		if s.hasData {
			s.data = append(s.data, '\n')
		}
		s.data = append(s.data, value...)
		s.hasData = true
	case "event":
		s.event = string(value)
	}
}

func (s *eventScanner) dispatch() {
	if s.response == nil && s.hasData && !s.dataOver && (s.event == "" || s.event == "message") {
		if id, ok := rpcResponseID(s.data); ok && (s.wantID == nil || bytes.Equal(id, s.wantID)) {
			s.response = append([]byte(nil), s.data...)
		}
	}
	s.data, s.hasData, s.dataOver, s.event = s.data[:0], false, false, ""
}
