package faultproxy

import (
	"net"
	"net/http"
)

// FastServed is how many attempts p's fast path forwarded itself, and HandedOff how many
// connections it moved to net/http: the tests check which path served what.
func FastServed(p *Proxy) uint64 { return p.fastServed.Load() }
func HandedOff(p *Proxy) uint64  { return p.handedOff.Load() }

// ReadKeyField is what the proxy reads of the key field at field in a buffered request
// body: the key, whether there was one, and the refusal (empty: none).
func ReadKeyField(body []byte, field string) (string, bool, string) {
	k := readBodyKey(body, checkJSON(body), SplitKeyField(field))
	return k.key, k.ok, k.refuse
}

// FastServer is a Proxy served as Start serves it — each connection on the fast path
// first, moved to net/http's server at the first request the fast path does not take —
// on a listener the test provides.
type FastServer struct{ s *connServer }

// ServeFast serves p on ln. wrap wraps the handler of its net/http side (nil: none), and
// connState, when set, gets that side's connection states (a handed-off connection
// reaches it wrapped; its NetConn method returns the connection ln accepted).
func ServeFast(p *Proxy, ln net.Listener, wrap func(http.Handler) http.Handler, connState func(net.Conn, http.ConnState)) *FastServer {
	s := newConnServer(p, p.cfg, ln)
	if wrap != nil {
		s.slow.Handler = wrap(s.slow.Handler)
	}
	s.slow.ConnState = connState
	go s.serve()
	return &FastServer{s}
}

// Close closes the listener and every connection.
func (f *FastServer) Close() error { return f.s.close() }

// OnFastPath reports whether nc, a connection ln accepted, is still served by the fast
// path (ok) and, if so, whether it waits for its next request (idle) rather than serving
// one.
func (f *FastServer) OnFastPath(nc net.Conn) (idle, ok bool) {
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	for c := range f.s.conns {
		if c.nc == nc {
			return !c.busy.Load(), true
		}
	}
	return false, false
}
