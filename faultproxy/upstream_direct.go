package faultproxy

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"
)

// directClient sends the common upstream call — plain http, a request body already in
// memory (or none), no "Expect: 100-continue" — on the handler's own goroutine over a
// pool of keep-alive connections. http.Transport hands every request to a per-connection
// writer goroutine and the response back from a reader goroutine (two wake-ups and
// channel handoffs per call); here the handler writes the request and parses the response
// itself, with the same serialisation (Request.Write) and parsing (ReadResponse).
// Everything else (https, streamed or unknown-length bodies, 100-continue, a Transport
// from Config) goes through http.Transport.
//
// It never resends a request: a call that fails is the caller's error, so the journal's
// upstream_calls stays what the upstream received. A pooled connection is checked
// without blocking before it is reused (one non-blocking peek): one the upstream closed
// while it sat idle, or that holds bytes nobody asked for, is discarded, as the
// Transport's reader goroutine would have done.
//
// The pool is a stack: the most recently used connection is handed out first, so under a
// steady load the same few connections carry the calls and the rest sit at the bottom.
// A timer, armed while connections are pooled, closes those idle for Config.
// UpstreamIdleTimeout in the background: after a burst, the pool shrinks back to what
// the calls of the last idle timeout needed at once (a flood of 2,000 client
// connections otherwise left up to 1,024 upstream connections open for good).
type directClient struct {
	pools  map[*url.URL]*connPool
	dialer net.Dialer
}

func newDirectClient(upstreams []*url.URL, idleTimeout time.Duration) *directClient {
	if !peekSupported {
		return nil
	}
	d := &directClient{
		pools:  make(map[*url.URL]*connPool, len(upstreams)),
		dialer: net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second},
	}
	for _, u := range upstreams {
		if u.Scheme == "http" {
			d.pools[u] = &connPool{addr: hostPort(u), max: DefaultMaxIdlePerHost, idleTimeout: idleTimeout}
		}
	}
	return d
}

// hostPort is u's host with the default http port when it names none.
func hostPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	return net.JoinHostPort(u.Hostname(), "80")
}

func (d *directClient) closeIdle() {
	for _, p := range d.pools {
		p.closeIdle()
	}
}

// connPool holds idle connections to one upstream, most recently used first out.
type connPool struct {
	addr        string
	max         int
	idleTimeout time.Duration
	mu          sync.Mutex
	idle        []*upConn   // oldest first: put appends, get takes from the end
	expiry      *time.Timer // armed while idle holds connections (expire); nil when not
}

type upConn struct {
	num    [20]byte // scratch for a number written to bw
	nc     net.Conn
	lim    *headerLimit
	br     *bufio.Reader
	bw     *bufio.Writer
	idleAt time.Time
}

// maxResponseHeader bounds what the upstream may send before its response body, as the
// Transport's default MaxResponseHeaderBytes does.
const maxResponseHeader = 10 << 20

var errHeaderTooLarge = fmt.Errorf("response headers exceed %d bytes", maxResponseHeader)

// headerLimit caps the bytes read from the connection while a response head is parsed;
// the body is not limited.
type headerLimit struct {
	r io.Reader
	n int64
}

func (l *headerLimit) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, errHeaderTooLarge
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	return n, err
}

func (p *connPool) get(ctx context.Context, d *net.Dialer) (*upConn, error) {
	for {
		p.mu.Lock()
		n := len(p.idle)
		if n == 0 {
			p.mu.Unlock()
			break
		}
		c := p.idle[n-1]
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		if time.Since(c.idleAt) < p.idleTimeout && c.br.Buffered() == 0 && connIdleAlive(c.nc) {
			return c, nil
		}
		c.nc.Close()
	}
	nc, err := d.DialContext(ctx, "tcp", p.addr)
	if err != nil {
		return nil, err
	}
	lim := &headerLimit{r: nc, n: math.MaxInt64}
	return &upConn{nc: nc, lim: lim, br: bufio.NewReaderSize(lim, 32<<10), bw: bufio.NewWriterSize(nc, 32<<10)}, nil
}

func (p *connPool) put(c *upConn) {
	c.idleAt = time.Now()
	p.mu.Lock()
	if len(p.idle) < p.max {
		p.idle = append(p.idle, c)
		if p.expiry == nil {
			p.expiry = time.AfterFunc(p.idleTimeout, p.expire)
		}
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	c.nc.Close()
}

// expire closes the connections idle for idleTimeout and arms the timer again for the
// next one to age (at least idleTimeout/8 from now, so a pool of connections put back a
// moment apart is swept in batches, each one closed within an eighth past its time).
func (p *connPool) expire() {
	now := time.Now()
	p.mu.Lock()
	n := 0
	for n < len(p.idle) && now.Sub(p.idle[n].idleAt) >= p.idleTimeout {
		n++
	}
	old := append([]*upConn(nil), p.idle[:n]...)
	rest := copy(p.idle, p.idle[n:])
	clear(p.idle[rest:])
	p.idle = p.idle[:rest]
	if len(p.idle) > 0 {
		p.expiry.Reset(max(p.idle[0].idleAt.Add(p.idleTimeout).Sub(now), p.idleTimeout/8))
	} else {
		p.expiry = nil
	}
	p.mu.Unlock()
	for _, c := range old {
		c.nc.Close()
	}
}

func (p *connPool) closeIdle() {
	p.mu.Lock()
	idle := p.idle
	p.idle = nil
	if p.expiry != nil {
		p.expiry.Stop()
		p.expiry = nil
	}
	p.mu.Unlock()
	for _, c := range idle {
		c.nc.Close()
	}
}

// direct reports whether a call can go through the direct client.
func (ex *Exchange) direct(target *url.URL, body io.Reader) (*connPool, bool) {
	d := ex.p.direct
	if d == nil {
		return nil, false
	}
	pool := d.pools[target]
	if pool == nil {
		return nil, false
	}
	if body != nil {
		if _, ok := body.(*bytes.Reader); !ok {
			return nil, false
		}
	}
	if _, ok := ex.outHeader["Expect"]; ok {
		return nil, false
	}
	return pool, true
}

var errUpgrade = errors.New("upstream switched protocols (101): upgrades are not proxied")

// sendDirect makes one upstream call on pool, never more than once.
func (ex *Exchange) sendDirect(ctx context.Context, pool *connPool, out *http.Request, res *sendResult) {
	c, err := pool.get(ctx, &ex.p.direct.dialer)
	if err != nil {
		res.err = fmt.Errorf("dial upstream: %w", err)
		return
	}
	if err := ctx.Err(); err != nil {
		// The client is gone: nothing is sent (the Transport does not send it either).
		pool.put(c)
		res.err = err
		return
	}
	// The client going away (or the server shutting down) ends the call: the deadline
	// wakes a blocked write or read.
	stop := context.AfterFunc(ctx, func() { c.nc.SetDeadline(time.Unix(1, 0)) })
	fail := func(err error) {
		stop()
		c.nc.Close()
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%v)", ctx.Err(), err)
		}
		res.err = err
	}
	// Once request bytes may have left (a flush was attempted), the upstream may act.
	res.wrote.Store(true)
	if err := out.Write(c.bw); err != nil {
		fail(fmt.Errorf("write request: %w", err))
		return
	}
	if err := c.bw.Flush(); err != nil {
		fail(fmt.Errorf("write request: %w", err))
		return
	}
	resp, err := readFinalResponse(c, out)
	if err != nil {
		fail(err)
		return
	}
	// out.Close: retired by the attempt (Exchange.retireUpstream) even if the upstream
	// would keep it alive.
	db := &directBody{rc: resp.Body, c: c, pool: pool, stop: stop, reuse: !resp.Close && !out.Close}
	if resp.Body == http.NoBody {
		db.finish(true)
	} else {
		resp.Body = db
	}
	res.resp = resp
}

// readFinalResponse reads the response head to out from c, skipping 1xx interim answers
// (100 Continue, 103 Early Hints) as the Transport does (at most 5); the head may be at
// most maxResponseHeader bytes, the body is not limited.
func readFinalResponse(c *upConn, out *http.Request) (*http.Response, error) {
	c.lim.n = maxResponseHeader - int64(c.br.Buffered())
	defer func() { c.lim.n = math.MaxInt64 }()
	for informational := 0; ; informational++ {
		resp, err := http.ReadResponse(c.br, out)
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = fmt.Errorf("upstream closed the connection before answering: %w", io.ErrUnexpectedEOF)
			}
			return nil, fmt.Errorf("read response: %w", err)
		}
		if resp.StatusCode == http.StatusSwitchingProtocols {
			return nil, errUpgrade
		}
		if resp.StatusCode >= 200 {
			return resp, nil
		}
		if informational == 5 {
			return nil, fmt.Errorf("read response: too many 1xx responses")
		}
	}
}

// directBody returns the connection to the pool once the response body was read to its
// end, and closes it when the body is abandoned or fails.
type directBody struct {
	rc    io.ReadCloser
	c     *upConn
	pool  *connPool
	stop  func() bool
	reuse bool
	done  atomic.Bool
}

func (b *directBody) Read(p []byte) (int, error) {
	if b.done.Load() {
		return 0, io.EOF
	}
	n, err := b.rc.Read(p)
	if err == io.EOF {
		b.finish(true)
	} else if err != nil {
		b.finish(false)
	}
	return n, err
}

func (b *directBody) Close() error {
	b.finish(false)
	return nil
}

// finish releases the connection once: back to the pool when the body ended cleanly, the
// upstream keeps it alive and the context did not fire; else closed.
func (b *directBody) finish(eof bool) {
	if b.done.Swap(true) {
		return
	}
	if b.stop() && eof && b.reuse {
		b.pool.put(b.c)
		return
	}
	b.c.nc.Close()
}
