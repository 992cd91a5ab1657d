package faultproxy

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// connServer serves Start's client connections. Each connection begins on the fast path
// (fast_exchange.go), which forwards the everyday exchange itself; at the first request
// the fast path does not take — anything internal/h1 calls Unsupported, a head or body
// not wholly arrived, a request a rule picked a fault for — the connection moves for
// good to net/http's server, with the bytes read so far put back in front of it, so
// net/http parses that request from its first byte and serves the rest of the
// connection. Faults, malformed input, slow clients and every limit of net/http's server
// therefore stay where they were.
type connServer struct {
	p       *Proxy
	cfg     Config
	ln      net.Listener
	slow    *http.Server
	handoff *handoffListener
	ctx     context.Context // ends when the server closes: upstream calls in flight end
	cancel  context.CancelFunc

	mu      sync.Mutex
	conns   map[*fastConn]struct{}
	closing atomic.Bool // set under mu; read without it on every request
}

// fastConn is a client connection on the fast path.
type fastConn struct {
	nc   net.Conn
	br   *bufio.Reader
	busy atomic.Bool // a request is being served: Shutdown lets it finish
	// armedFor and armedAt are the read deadline last set, re-armed only when it changes
	// or has aged (armRead): a deadline costs a timer update, and keep-alive requests
	// come far more often than IdleTimeout needs renewing.
	armedFor time.Duration
	armedAt  time.Time

	// The upstream call the connection waits on, for the watchdog (watch) and close.
	mu        sync.Mutex
	waiting   *upConn
	waitSince time.Time
	aborted   bool // the wait was ended from outside: the upstream conn is not reusable
}

// await registers the upstream call c is about to wait on.
func (c *fastConn) await(up *upConn, since time.Time) {
	c.mu.Lock()
	c.waiting, c.waitSince, c.aborted = up, since, false
	c.mu.Unlock()
}

// done ends the wait; false when it was aborted (the upstream conn must be closed).
func (c *fastConn) done() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.waiting = nil
	return !c.aborted
}

// abortWait wakes the upstream read c waits on (a deadline in the past).
func (c *fastConn) abortWait(olderThan time.Time, clientGone func() bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.waiting == nil || c.aborted || c.waitSince.After(olderThan) || !clientGone() {
		return
	}
	c.aborted = true
	c.waiting.nc.SetReadDeadline(time.Unix(1, 0))
}

// armRead sets the read deadline for the next request's first byte.
func (c *fastConn) armRead(wait time.Duration) {
	now := time.Now()
	// At most an eighth of the wait (and a second) is lost, so a short timeout holds too.
	if wait == c.armedFor && now.Sub(c.armedAt) < min(time.Second, wait/8) {
		return
	}
	c.nc.SetReadDeadline(now.Add(wait))
	c.armedFor, c.armedAt = wait, now
}

// disarm notes that the read deadline was changed elsewhere.
func (c *fastConn) disarm() { c.armedFor = 0 }

// fastReadBuffer is a fast-path connection's read buffer, the size of net/http's: a
// request whose head and body do not arrive within it goes to net/http.
const fastReadBuffer = 4 << 10

func newConnServer(p *Proxy, cfg Config, ln net.Listener) *connServer {
	ctx, cancel := context.WithCancel(context.Background())
	s := &connServer{
		p: p, cfg: cfg, ln: ln, ctx: ctx, cancel: cancel,
		handoff: newHandoffListener(ln.Addr()),
		conns:   make(map[*fastConn]struct{}),
	}
	s.slow = newHTTPServer(p, cfg)
	s.slow.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		if hc, ok := c.(*handoffConn); ok && hc.held.Load() {
			return context.WithValue(ctx, handoffKey{}, hc)
		}
		return ctx
	}
	return s
}

// serve accepts until the listener closes.
func (s *connServer) serve() {
	go serve(s.slow, s.handoff)
	go s.watch()
	var backoff time.Duration
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() && !s.isClosing() {
				// Out of file descriptors and the like: wait as net/http's server does.
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				time.Sleep(backoff)
				continue
			}
			return
		}
		backoff = 0
		c := &fastConn{nc: nc}
		if !s.track(c) {
			nc.Close()
			return
		}
		go s.serveConn(c)
	}
}

// watch ends the upstream calls of clients that went away: every fastWatchSlice it checks
// the clients of calls waiting longer than that, with a non-blocking peek. The fast path
// itself sets no timer per request; net/http's server does this with a read it keeps
// pending on every connection.
func (s *connServer) watch() {
	t := time.NewTicker(fastWatchSlice)
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case now := <-t.C:
			s.mu.Lock()
			conns := make([]*fastConn, 0, len(s.conns))
			for c := range s.conns {
				if c.busy.Load() {
					conns = append(conns, c)
				}
			}
			s.mu.Unlock()
			for _, c := range conns {
				c.abortWait(now.Add(-fastWatchSlice), func() bool { return peerGone(c.nc) })
			}
		}
	}
}

func (s *connServer) isClosing() bool { return s.closing.Load() }

func (s *connServer) track(c *fastConn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing.Load() {
		return false
	}
	s.conns[c] = struct{}{}
	return true
}

func (s *connServer) untrack(c *fastConn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}

// serveConn runs one connection's fast path until it closes or moves to net/http.
func (s *connServer) serveConn(c *fastConn) {
	handedOff := false
	defer func() {
		s.untrack(c)
		if !handedOff {
			c.nc.Close()
		}
	}()
	c.br = bufio.NewReaderSize(c.nc, fastReadBuffer)
	var req fastRequest
	// The first request must start within ReadHeaderTimeout, as on net/http's server;
	// between requests the connection may idle for IdleTimeout, and, as net/http's
	// server does there, the next request is read only once 4 of its bytes arrived: a
	// client that sends fewer and ends the connection gets no answer (net/http would
	// answer 400 to the same bytes as a first request).
	wait, need := s.cfg.ReadHeaderTimeout, 1
	for {
		c.armRead(wait)
		if _, err := c.br.Peek(need); err != nil {
			return // the client closed, idled out, or the server closed the connection
		}
		c.busy.Store(true)
		if s.isClosing() {
			return
		}
		switch s.p.serveFast(s, c, &req) {
		case fastHandOff:
			handedOff = true
			return
		case fastClose:
			return
		}
		c.busy.Store(false)
		wait, need = s.cfg.IdleTimeout, 4
	}
}

// handOff moves c to net/http's server, the bytes read but not consumed put back in
// front of it; d is the decision already taken for the first request, if any.
func (s *connServer) handOff(c *fastConn, d *fastDecision) {
	buffered, _ := c.br.Peek(c.br.Buffered())
	hc := &handoffConn{Conn: c.nc, pending: bytes.Clone(buffered), p: s.p}
	switch {
	case d != nil:
		// The decided attempt is in flight already; net/http's handler takes it over.
		hc.decision.Store(d)
		hc.held.Store(true)
	case bytes.Contains(hc.pending, []byte("\n\r\n")) || bytes.Contains(hc.pending, []byte("\n\n")):
		// A whole head arrived: an attempt is coming that WaitIdle must wait for, though
		// net/http's handler has not started yet.
		s.p.inFlight.Add(1)
		hc.held.Store(true)
	}
	// net/http sets its own read deadlines per request.
	c.nc.SetReadDeadline(time.Time{})
	if !s.handoff.push(hc) {
		hc.Close()
	}
}

// close stops accepting, closes every connection at once and ends upstream calls in
// flight.
func (s *connServer) close() error {
	s.mu.Lock()
	s.closing.Store(true)
	conns := make([]*fastConn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	err := s.ln.Close()
	s.cancel()
	for _, c := range conns {
		c.abortWait(time.Now(), func() bool { return true })
		c.nc.Close()
	}
	return errors.Join(ignoreClosed(err), s.slow.Close())
}

// shutdown stops accepting, closes idle connections, waits for those serving a request
// until ctx ends (then closes them), and shuts net/http's side down the same way.
func (s *connServer) shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closing.Store(true)
	s.mu.Unlock()
	lnErr := ignoreClosed(s.ln.Close())
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		s.mu.Lock()
		for c := range s.conns {
			if !c.busy.Load() {
				c.nc.Close()
			}
		}
		left := len(s.conns)
		s.mu.Unlock()
		if left == 0 {
			break
		}
		select {
		case <-ctx.Done():
			return errors.Join(lnErr, s.close(), ctx.Err())
		case <-tick.C:
		}
	}
	err := s.slow.Shutdown(ctx)
	s.cancel()
	return errors.Join(lnErr, err)
}

func ignoreClosed(err error) error {
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

// handoffListener is the listener net/http's server accepts handed-off connections from.
type handoffListener struct {
	addr net.Addr
	ch   chan net.Conn
	done chan struct{}
	once sync.Once
}

func newHandoffListener(addr net.Addr) *handoffListener {
	return &handoffListener{addr: addr, ch: make(chan net.Conn), done: make(chan struct{})}
}

func (l *handoffListener) push(c net.Conn) bool {
	select {
	case l.ch <- c:
		return true
	case <-l.done:
		return false
	}
}

func (l *handoffListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ch:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *handoffListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *handoffListener) Addr() net.Addr { return l.addr }

// handoffConn is a client connection handed to net/http: it reads the bytes the fast
// path had read first, then the connection.
type handoffConn struct {
	net.Conn
	pending  []byte
	p        *Proxy
	decision atomic.Pointer[fastDecision]
	// held: the connection holds one count of Proxy.inFlight for its first request,
	// given back when a handler takes it over (takeHandoff) or the connection closes.
	held atomic.Bool
}

func (c *handoffConn) Read(b []byte) (int, error) {
	if len(c.pending) > 0 {
		n := copy(b, c.pending)
		c.pending = c.pending[n:]
		return n, nil
	}
	return c.Conn.Read(b)
}

// NetConn is the client's connection (a reset fault sets SO_LINGER on it).
func (c *handoffConn) NetConn() net.Conn { return c.Conn }

// CloseWrite lets net/http half-close the connection as it does a *net.TCPConn's.
func (c *handoffConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// Close journals a decided request net/http never served (the client went away before
// it was read), so that it still has its one record, then closes.
func (c *handoffConn) Close() error {
	if d := c.decision.Swap(nil); d != nil {
		rec := d.record
		rec.ClientResult = ClientClosed
		rec.Outcome = outcomeOf(rec.ClientResult, 0)
		rec.Note = "the connection closed before the request was served"
		c.p.journal.append(d.epoch, rec, d.headerBytes)
	}
	if c.held.Swap(false) {
		c.p.inFlight.Add(-1)
	}
	return c.Conn.Close()
}

type handoffKey struct{}

// takeHandoff counts a handler's attempt in flight. On the first request of a handed-off
// connection it returns the fast path's decision, if any: that attempt is counted
// already, and the handler takes the count over. A count the connection held for a
// request not yet read is given back once the handler's own is taken.
func (p *Proxy) takeHandoff(r *http.Request) *fastDecision {
	hc, ok := r.Context().Value(handoffKey{}).(*handoffConn)
	if ok {
		if d := hc.decision.Swap(nil); d != nil {
			if !hc.held.Swap(false) {
				p.inFlight.Add(1) // a racing Close gave the count back
			}
			return d
		}
	}
	p.inFlight.Add(1)
	if ok && hc.held.Swap(false) {
		p.inFlight.Add(-1)
	}
	return nil
}
