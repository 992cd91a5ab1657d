//go:build linux

package faultproxy_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/faultproxy"
)

// FuzzFastAndNetHTTPPathsAgree sends arbitrary bytes down both paths — a proxy served as
// Start serves it (the fast path first) and the same configuration served by net/http
// alone — and requires the same answers to the client and the same journal.
//
// The harness is built to run thousands of inputs a second. Both servers are started
// once; each input gets a socket pair per path (a connected pair of Unix sockets: no
// port, no handshake, the kernel's buffers on both sides, the fast path's non-blocking
// peeks intact). It does not wait for a timeout to end an input: an input is over once
// the server closed its side, or once it settled — it read every byte sent and waits
// for more with nothing left to do: a read of the connection is pending while no request
// is being served (the fast path waits for its next request; net/http's connection is
// new or idle, its answers written), or while a request is served but waits for body
// bytes that will not come. The client side then ends its bytes (a half-close), the
// server closes, and what the client got is compared.
func FuzzFastAndNetHTTPPathsAgree(f *testing.F) {
	for _, tc := range pathCases {
		f.Add([]byte(tc.raw))
	}
	// Inputs that leave the server waiting: a head not ended, a body shorter than its
	// length (the handler waits for the rest), a complete request and then half a head.
	f.Add([]byte("GET /a HTTP/1.1\r\nHost: x\r\n"))
	f.Add([]byte("POST /v1/refunds HTTP/1.1\r\nHost: x\r\nIdempotency-Key: k\r\nContent-Length: 10\r\n\r\n{}"))
	f.Add([]byte("POST /v1/refunds HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{}"))
	f.Add([]byte("GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHo"))
	up := echoUpstream(f)
	cfg := faultproxy.Config{Upstream: up.URL, Seed: 7}
	fast, slow := newPathTarget(f, cfg, true), newPathTarget(f, cfg, false)
	f.Fuzz(func(t *testing.T, raw []byte) {
		if len(raw) > 16<<10 {
			return
		}
		ctx := context.Background()
		slow.p.Reset(ctx)
		fast.p.Reset(ctx)
		want := slow.exchange(t, raw)
		got := fast.exchange(t, raw)
		require.Equal(t, want, got)
		require.Equal(t, comparable(journalOf(t, slow.p)), comparable(journalOf(t, fast.p)))
	})
}

// pathTarget is one proxy served on socket pairs, fast path first or net/http alone.
type pathTarget struct {
	p    *faultproxy.Proxy
	ln   *pairListener
	fast *faultproxy.FastServer // nil: net/http alone
}

func newPathTarget(f *testing.F, cfg faultproxy.Config, fastFirst bool) *pathTarget {
	p, err := faultproxy.New(cfg)
	require.NoError(f, err)
	t := &pathTarget{p: p, ln: newPairListener()}
	connState := func(nc net.Conn, s http.ConnState) {
		if u, ok := nc.(interface{ NetConn() net.Conn }); ok {
			nc = u.NetConn()
		}
		nc.(*watchedConn).state.Store(int32(s) + 1)
	}
	if fastFirst {
		t.fast = faultproxy.ServeFast(p, t.ln, nil, connState)
		f.Cleanup(func() { t.fast.Close() })
		return t
	}
	srv := &http.Server{Handler: p, ConnState: connState}
	go srv.Serve(t.ln)
	f.Cleanup(func() { srv.Close() })
	return t
}

// exchange sends raw on a new connection and returns the answers, as exchange (over
// TCP) renders them, once the server closed or settled.
func (t *pathTarget) exchange(tb testing.TB, raw []byte) []string {
	client, srv := t.ln.dial(tb)
	defer client.Close()
	var out bytes.Buffer
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		io.Copy(&out, client)
	}()
	client.Write(raw) // the server may close before it read all of it
	serverClosed := false
	deadline := time.Now().Add(30 * time.Second) // bounds a broken proxy, not a slow one
	for !serverClosed && !t.settled(srv, len(raw)) {
		select {
		case <-closed:
			serverClosed = true
			continue
		case <-time.After(50 * time.Microsecond):
		}
		if time.Now().After(deadline) {
			tb.Fatalf("the server neither closed nor settled: read %d of %d bytes, a read of %d bytes pending, state %d",
				srv.read.Load(), len(raw), srv.waiting.Load(), srv.state.Load()-1)
		}
	}
	if !serverClosed {
		// The end of the client's bytes: the server closes its side (what it wrote before
		// is read to the end, not cut off by a close of ours).
		client.(*net.UnixConn).CloseWrite()
		select {
		case <-closed:
		case <-time.After(time.Until(deadline)):
			tb.Fatalf("the server did not close after the client's end (read %d of %d bytes)", srv.read.Load(), len(raw))
		}
	}
	<-closed
	return answers(raw, out.Bytes(), serverClosed)
}

// settled: the server read all of raw and waits for more, with nothing left to do.
func (t *pathTarget) settled(srv *watchedConn, sent int) bool {
	waiting := srv.waiting.Load()
	if srv.read.Load() < int64(sent) || waiting == 0 {
		return false
	}
	if t.fast != nil {
		if idle, ok := t.fast.OnFastPath(srv); ok {
			return idle
		}
	}
	switch state := srv.state.Load(); {
	case state == 0:
		return false // net/http has not taken the connection yet
	case http.ConnState(state-1) == http.StateActive:
		// A request is served. net/http's server reads one byte in the background
		// while the handler works (to notice a client leaving): that read is no wait
		// for input. Any other read is the request's body, waiting for bytes that will
		// not come.
		return waiting > 1
	}
	return true // new or idle: waiting for a request
}

// answers renders what the client got for the requests in raw as exchange does;
// serverClosed tells an answer cut by the server's close from one the server still owed.
func answers(raw, out []byte, serverClosed bool) []string {
	ended := "waiting"
	if serverClosed {
		ended = "EOF"
	}
	got := readAnswers(bufio.NewReader(bytes.NewReader(out)), raw, func(err error) string { return endClass(err, ended) })
	if len(got) == 0 && (len(out) > 0 || serverClosed) {
		// Bytes with no request line this test recognises may still be one to the server.
		got = append(got, fmt.Sprintf("unexpected answer (%s): %q", ended, firstLine(out)))
	}
	return got
}

// endClass names a read error at the end of what the client got: the server closed, or
// still owed the rest when the client closed.
func endClass(err error, ended string) string {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return ended
	}
	return errorClass(err)
}

// pairListener accepts the server ends of socket pairs its dial makes.
type pairListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newPairListener() *pairListener {
	return &pairListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

// dial connects a new client to the listener: the client's end, and the server's as
// the server accepted it.
func (l *pairListener) dial(tb testing.TB) (net.Conn, *watchedConn) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	require.NoError(tb, err)
	ends := make([]net.Conn, 2)
	for i, fd := range fds {
		f := os.NewFile(uintptr(fd), "socketpair")
		ends[i], err = net.FileConn(f)
		f.Close()
		require.NoError(tb, err)
	}
	srv := &watchedConn{Conn: ends[1]}
	select {
	case l.conns <- srv:
	case <-l.done:
		tb.Fatal("listener closed")
	}
	return ends[0], srv
}

func (l *pairListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pairListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *pairListener) Addr() net.Addr { return &net.UnixAddr{Name: "socketpair", Net: "unix"} }

// watchedConn is a server's end of a socket pair that counts what the server read and
// the size of the read it has pending, and keeps the state net/http's server gave it.
type watchedConn struct {
	net.Conn
	read    atomic.Int64
	waiting atomic.Int32 // the pending read's buffer size; 0: none pending
	state   atomic.Int32 // http.ConnState + 1; 0: none yet
}

func (c *watchedConn) Read(b []byte) (int, error) {
	c.waiting.Store(int32(max(len(b), 1)))
	n, err := c.Conn.Read(b)
	// The read ends before its bytes count: whoever sees them counted sees this read over
	// (a pending read is then another one, waiting for more).
	c.waiting.Store(0)
	c.read.Add(int64(n))
	return n, err
}

// SyscallConn keeps the fast path's non-blocking peeks at the connection working.
func (c *watchedConn) SyscallConn() (syscall.RawConn, error) {
	return c.Conn.(syscall.Conn).SyscallConn()
}
