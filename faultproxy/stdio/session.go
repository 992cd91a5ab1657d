package stdio

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/faultproxy/stdio/jsonl"
)

// recordMethod is a stdio record's Method: a line has none of HTTP's.
const recordMethod = "stdio"

// session is one client's connection and the server process started for it.
type session struct {
	l           *Layer
	proc        server
	toServer    *jsonl.Writer
	toClient    *jsonl.Writer
	closeClient func()

	mu      sync.Mutex
	pending map[string]*exchange   // requests the server has, by id (compact JSON)
	copies  map[string]chan []byte // duplicates' copies the server has, by the layer's id
	gone    bool                   // the server's output ended: nothing more is forwarded
	wg      sync.WaitGroup         // exchanges running
	exit    string                 // how the server ended, once gone
	copyIDs atomic.Int64

	clientEnded atomic.Bool // the client's input ended before the server did

	dead     chan struct{} // closed once the server's output ended and exit is set
	finished chan struct{} // closed once the session is over: server reaped, client closed
	stopOnce sync.Once
}

func newSession(l *Layer, proc server, client io.Writer, closeClient func()) *session {
	s := &session{
		l: l, proc: proc, toServer: jsonl.NewWriter(proc.Stdin()), toClient: jsonl.NewWriter(client), closeClient: closeClient,
		pending: map[string]*exchange{}, copies: map[string]chan []byte{},
		dead: make(chan struct{}), finished: make(chan struct{}),
	}
	go s.readServer()
	return s
}

// readServer passes the server's lines on: an answer to its exchange, anything else to
// the client. When the output ends the session does.
func (s *session) readServer() {
	r := jsonl.NewReader(s.proc.Stdout(), s.l.cfg.MaxLine)
	for {
		line, err := r.Next()
		if errors.Is(err, jsonl.ErrLineTooLong) {
			s.l.engine.Log(&faultproxy.Record{Method: recordMethod, ClientResult: faultproxy.ClientDropped,
				Note: fmt.Sprintf("from the server: a line over %d bytes (%.40q…), not passed on", s.l.cfg.MaxLine, line)})
			continue
		}
		if err != nil {
			if len(line) > 0 {
				s.l.engine.Log(&faultproxy.Record{Method: recordMethod, ClientResult: faultproxy.ClientDropped,
					Note: fmt.Sprintf("from the server: a last line cut off without its newline (%.80q), not passed on", line)})
			}
			break
		}
		s.fromServer(line)
	}
	s.serverGone()
}

func (s *session) fromServer(line []byte) {
	m := jsonl.Parse(line)
	if m.Kind == jsonl.Response && m.ID != nil {
		s.mu.Lock()
		x, ok := s.pending[string(m.ID)]
		delete(s.pending, string(m.ID))
		cp, isCopy := s.copies[string(m.ID)]
		delete(s.copies, string(m.ID))
		s.mu.Unlock()
		switch {
		case ok && x.inline:
			// Without a fault the answer goes on here, in the server's order, as it would
			// without the layer.
			x.gotAnswer(line)
			x.deliver(line)
			close(x.delivered)
			return
		case ok:
			x.answer <- line
			return
		case isCopy:
			cp <- line
			return
		}
	}
	rec := &faultproxy.Record{Method: recordMethod, RPCID: string(m.ID), RPCMethod: m.Method, BodySHA256: sum(line)}
	switch m.Kind {
	case jsonl.Invalid:
		rec.Note = fmt.Sprintf("from the server: a line that is not a JSON-RPC message (%.80q)", line)
	case jsonl.Response:
		rec.Note = "from the server: an answer to no request it has"
	default:
		rec.Note = "from the server: a " + m.Kind.String()
	}
	s.toClientRecorded(rec, line)
	s.l.engine.Log(rec)
}

func (s *session) toClientRecorded(rec *faultproxy.Record, line []byte) {
	if err := s.toClient.WriteLine(line); err != nil {
		rec.ClientResult = faultproxy.ClientClosed
		rec.Note += "; the client had gone"
		return
	}
	rec.ClientResult, rec.ClientStatus = faultproxy.ClientDelivered, http.StatusOK
}

// fromClient handles one line a client sent. attrs, when given, are the request's
// attributes; without them Config.Annotate is asked.
func (s *session) fromClient(line []byte, attrs map[string]string, given bool) {
	m := jsonl.Parse(line)
	if m.Kind == jsonl.Request {
		s.request(line, m, attrs, given)
		return
	}
	rec := &faultproxy.Record{Method: recordMethod, RPCID: string(m.ID), RPCMethod: m.Method, BodySHA256: sum(line), Headers: canonical(attrs)}
	switch m.Kind {
	case jsonl.Response:
		rec.Note = "an answer to the server's request"
	case jsonl.Invalid:
		rec.Note = fmt.Sprintf("a line that is not a JSON-RPC message (%.80q), passed on", line)
	}
	if s.isGone() {
		rec.ClientResult = faultproxy.ClientClosed
		rec.Note = strings.TrimPrefix(rec.Note+"; the server had exited: not passed on", "; ")
	} else if err := s.toServer.WriteLine(line); err != nil {
		rec.ClientResult = faultproxy.ClientClosed
		rec.Note = strings.TrimPrefix(rec.Note+"; could not write it to the server: "+err.Error(), "; ")
	} else {
		rec.ReachedUpstream, rec.UpstreamCalls = true, 1
		// A notification has no answer; passed on is all a client can know of it.
		rec.ClientResult = faultproxy.ClientDelivered
	}
	s.l.engine.Log(rec)
}

func (s *session) request(line []byte, m jsonl.Message, attrs map[string]string, given bool) {
	if !given && s.l.cfg.Annotate != nil {
		attrs = s.l.cfg.Annotate(line, m)
	}
	attrs = canonical(attrs)
	key, hasKey := keyOf(line, s.l.keyPath)
	hdr := http.Header{}
	for k, v := range attrs {
		hdr[k] = []string{v}
	}
	t := s.l.engine.Begin(faultproxy.Attempt{Path: m.Method, Header: hdr, Key: key, HasKey: hasKey})
	x := &exchange{s: s, line: line, msg: m, attrs: attrs, ticket: t, answer: make(chan []byte, 1),
		rec: &faultproxy.Record{Time: time.Now(), Method: recordMethod, Key: key, HasKey: hasKey, Headers: attrs,
			RPCID: string(m.ID), RPCMethod: m.Method, BodySHA256: sum(line)}}
	var f fault = passThrough{}
	x.inline, x.delivered = true, make(chan struct{})
	if t.Rule != nil {
		x.inline = false
		built, err := build(t.Rule.Fault)
		if err != nil { // checked when the rule was added: cannot happen
			x.note("fault not applied: " + err.Error())
		} else {
			f = built
		}
	}
	s.mu.Lock()
	if s.gone {
		s.mu.Unlock()
		x.note("the server had exited: not passed on")
		x.rec.ClientResult = faultproxy.ClientClosed
		x.finish()
		return
	}
	s.wg.Add(1)
	s.mu.Unlock()
	// In the order the client sent them: a fault that lets the request through unchanged
	// forwards it here, before the next line is read.
	if f.forwardsAtOnce() && !x.forward(line, m.ID) {
		s.wg.Done()
		x.finish()
		return
	}
	go func() {
		defer s.wg.Done()
		f.apply(x)
		x.finish()
	}()
}

func (s *session) isGone() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gone
}

// serverGone ends the session once the server's output has ended: the process is
// reaped (killed if it lingers without an output), the exchanges waiting for answers
// learn it, and the client's end is closed.
func (s *session) serverGone() {
	select {
	case <-s.proc.Done():
	case <-time.After(s.l.cfg.StopGrace):
	}
	s.proc.reap()
	s.mu.Lock()
	s.gone = true
	s.exit = s.describeExit()
	s.mu.Unlock()
	close(s.dead)
	// An answer the server wrote just before it ended is still delivered, within bounds:
	// a client that no longer reads must not hold the session open.
	waited := make(chan struct{})
	go func() { s.wg.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(s.l.cfg.StopGrace):
	}
	s.closeClient()
	<-waited
	s.l.forget(s)
	close(s.finished)
}

func (s *session) describeExit() string {
	how := "the server exited (" + s.proc.Exit() + ")"
	if s.proc.Killed() {
		how = "the server was killed"
	}
	if tail := s.proc.Stderr(); tail != "" {
		how += "; its stderr: " + tail
	}
	return how
}

// exitNote says how the server ended ("" while it runs).
func (s *session) exitNote() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.exit
}

// kill ends the server at once (after-kill).
func (s *session) kill() { s.proc.Kill() }

// stop ends the session from the client's side: the server is stopped as MCP asks, and
// stop returns once the session is over.
func (s *session) stop() {
	s.stopOnce.Do(func() { s.proc.Stop(s.l.cfg.StopGrace) })
	<-s.finished
}

// readClient reads a network client's lines until it ends, then stops the session.
func (s *session) readClient(r io.Reader) {
	lr := jsonl.NewReader(r, s.l.cfg.MaxLine)
	for {
		line, err := lr.Next()
		if errors.Is(err, jsonl.ErrLineTooLong) {
			s.l.engine.Log(&faultproxy.Record{Method: recordMethod, ClientResult: faultproxy.ClientDropped,
				Note: fmt.Sprintf("from the client: a line over %d bytes (%.40q…), not passed on", s.l.cfg.MaxLine, line)})
			continue
		}
		if err != nil {
			break
		}
		s.fromClient(line, nil, false)
	}
	if !s.isGone() {
		s.clientEnded.Store(true)
	}
	s.stop()
}

// exchange is one request in flight: its line, its record, and the server's answer.
type exchange struct {
	s      *session
	line   []byte
	msg    jsonl.Message
	attrs  map[string]string
	ticket faultproxy.Ticket
	rec    *faultproxy.Record
	answer chan []byte
	// inline: no fault; the server's reader delivers the answer itself (keeping the
	// server's order) and closes delivered.
	inline    bool
	delivered chan struct{}
	sentAt    time.Time
	got       []byte // the line the client got, for Classify
	told      bool   // Config.Delivered was called
}

func (x *exchange) note(s string) {
	if x.rec.Note != "" {
		x.rec.Note += "; "
	}
	x.rec.Note += s
}

// forward writes line to the server and registers the exchange for its answer (id);
// false when the server is gone or its stdin broke, the record saying so.
func (x *exchange) forward(line, id []byte) bool {
	s := x.s
	s.mu.Lock()
	if s.gone {
		s.mu.Unlock()
		x.note("the server had exited: not passed on")
		x.rec.ClientResult = faultproxy.ClientClosed
		return false
	}
	if id != nil {
		s.pending[string(id)] = x
	}
	s.mu.Unlock()
	x.sentAt = time.Now()
	if err := s.toServer.WriteLine(line); err != nil {
		s.mu.Lock()
		delete(s.pending, string(id))
		s.mu.Unlock()
		x.note("could not write the request to the server: " + err.Error())
		x.rec.ClientResult = faultproxy.ClientClosed
		return false
	}
	x.rec.ReachedUpstream = true
	x.rec.UpstreamCalls++
	return true
}

// await returns the server's answer; false when the server ended first (the record
// then says so).
func (x *exchange) await() ([]byte, bool) {
	select {
	case a := <-x.answer:
		x.gotAnswer(a)
		return a, true
	case <-x.s.dead:
		select {
		case a := <-x.answer:
			x.gotAnswer(a)
			return a, true
		default:
		}
		x.note(x.s.exitNote() + " before it answered")
		x.rec.ClientResult = faultproxy.ClientClosed
		return nil, false
	}
}

func (x *exchange) gotAnswer(a []byte) {
	x.rec.UpstreamStatus = http.StatusOK
	x.rec.UpstreamMillis = millis(time.Since(x.sentAt))
	if x.ticket.Rule != nil {
		// What the server committed, kept where a fault may hide it from the client.
		limit := x.s.l.cfg.JournalBodyLimit
		x.rec.UpstreamBody = bytes.Clone(a[:min(len(a), limit)])
		x.rec.UpstreamBodyClipped = len(a) - len(x.rec.UpstreamBody)
	}
	if h := x.s.l.cfg.Answered; h != nil {
		h(x.attrs)
	}
}

// wait waits d; false when the server ended first.
func (x *exchange) wait(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-x.s.dead:
		return false
	}
}

// deliver writes a whole answer line to the client.
func (x *exchange) deliver(line []byte) {
	sent := time.Now()
	if err := x.s.toClient.WriteLine(line); err != nil {
		x.note("the client had gone: " + err.Error())
		x.rec.ClientResult = faultproxy.ClientClosed
		return
	}
	x.rec.ClientResult, x.rec.ClientStatus, x.got = faultproxy.ClientDelivered, http.StatusOK, line
	x.tell(line, sent)
}

// deliverCut writes a damaged line as it is.
func (x *exchange) deliverCut(b []byte) {
	sent := time.Now()
	if err := x.s.toClient.WriteRaw(b); err != nil {
		x.note("the client had gone: " + err.Error())
		x.rec.ClientResult = faultproxy.ClientClosed
		return
	}
	x.rec.ClientResult = faultproxy.ClientTruncated
	x.tell(bytes.TrimSuffix(b, []byte{'\n'}), sent)
}

// drop leaves the client without the answer.
func (x *exchange) drop() {
	x.rec.ClientResult = faultproxy.ClientDropped
	x.note("the answer line never reached the client")
}

func (x *exchange) tell(line []byte, sent time.Time) {
	if h := x.s.l.cfg.Delivered; h != nil && !x.told {
		x.told = true
		h(x.attrs, line, sent)
	}
}

// answering is a status fault's body with the request's id, as the client matches
// answers by it (null for a request whose id could not be read).
func (x *exchange) answering(body []byte) []byte {
	id := x.msg.ID
	if id == nil {
		id = []byte("null")
	}
	out, err := sjson.SetRawBytes(bytes.Clone(body), "id", id)
	if err != nil {
		return body
	}
	return out
}

// copyLine is a duplicate's second copy: the request under an id of the layer's own.
type copyLine struct {
	line, id []byte
	answer   chan []byte
}

func (x *exchange) copyOf() (copyLine, bool) {
	id := []byte(strconv.Quote("idemproof-copy-" + strconv.FormatInt(x.s.copyIDs.Add(1), 10)))
	line, err := sjson.SetRawBytes(bytes.Clone(x.line), "id", id)
	if err != nil {
		x.note("duplicate: the request's id could not be replaced: sent once")
		return copyLine{}, false
	}
	return copyLine{line: line, id: id, answer: make(chan []byte, 1)}, true
}

func (x *exchange) forwardCopy(c copyLine) bool {
	s := x.s
	s.mu.Lock()
	if s.gone {
		s.mu.Unlock()
		return false
	}
	s.copies[string(c.id)] = c.answer
	s.mu.Unlock()
	if err := s.toServer.WriteLine(c.line); err != nil {
		x.note("duplicate: could not write the copy: " + err.Error())
		return false
	}
	x.rec.UpstreamCalls++
	x.note("the request was written twice, the copy with id " + string(c.id))
	return true
}

func (x *exchange) awaitCopy(c copyLine) {
	select {
	case a := <-c.answer:
		what := "answered"
		if cl := x.s.l.cfg.Classify; cl != nil {
			what += " (" + cl(a) + ")"
		}
		x.note("the copy was " + what + ", kept from the client")
	case <-x.s.dead:
		x.note("the server ended before it answered the copy")
	}
}

// finish journals the exchange once.
func (x *exchange) finish() {
	if x.rec.ClientResult == "" {
		x.rec.ClientResult = faultproxy.ClientClosed
		x.note("no answer was given")
	}
	if cl := x.s.l.cfg.Classify; cl != nil {
		x.rec.Class = faultproxy.OutcomeInfo
		if x.rec.ClientResult == faultproxy.ClientDelivered {
			x.rec.Class = cl(x.got)
		}
	}
	x.tell(nil, time.Now())
	x.s.l.engine.Finish(x.ticket, x.rec)
}

// keyOf reads the idempotency key at the gjson path: a string as it is, a number by its
// spelling; anything else is no key.
func keyOf(line []byte, path string) (string, bool) {
	if path == "" {
		return "", false
	}
	v := gjson.GetBytes(line, path)
	switch v.Type {
	case gjson.String:
		return v.Str, true
	case gjson.Number:
		return v.Raw, true
	}
	return "", false
}

func canonical(attrs map[string]string) map[string]string {
	if len(attrs) == 0 {
		return nil
	}
	out := make(map[string]string, len(attrs))
	for k, v := range attrs {
		out[http.CanonicalHeaderKey(k)] = v
	}
	return out
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}
