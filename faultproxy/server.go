package faultproxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// Server is a Proxy listening for clients plus its admin API on a listener of its own,
// both on 127.0.0.1 by default. It is what tests and the scenario runner use in-process.
type Server struct {
	proxy    *Proxy
	proxySrv *http.Server // serves every client connection when fast is nil
	fast     *connServer  // else: fast path first, net/http for the rest
	adminSrv *http.Server
	proxyLn  net.Listener
	adminLn  net.Listener
}

// Start builds a Proxy from cfg and serves it on cfg.ListenAddr and its admin API on
// cfg.AdminAddr (both default 127.0.0.1:0). ctx bounds only the start; stop the server
// with Close or Shutdown.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	p, err := New(cfg)
	if err != nil {
		return nil, err
	}
	cfg = p.cfg
	var lc net.ListenConfig
	proxyLn, err := lc.Listen(ctx, "tcp", cfg.ListenAddr)
	if err != nil {
		return nil, fmt.Errorf("start proxy: listen on %s: %w", cfg.ListenAddr, err)
	}
	adminLn, err := lc.Listen(ctx, "tcp", cfg.AdminAddr)
	if err != nil {
		proxyLn.Close()
		return nil, fmt.Errorf("start proxy: admin listen on %s: %w", cfg.AdminAddr, err)
	}
	s := &Server{
		proxy:    p,
		adminSrv: newHTTPServer(adminBodyLimit(p.AdminHandler(cfg.AdminToken), cfg.BodyTimeout), cfg),
		proxyLn:  proxyLn,
		adminLn:  adminLn,
	}
	if p.fast {
		s.fast = newConnServer(p, cfg, proxyLn)
		go s.fast.serve()
	} else {
		s.proxySrv = newHTTPServer(p, cfg)
		go serve(s.proxySrv, proxyLn)
	}
	go serve(s.adminSrv, adminLn)
	return s, nil
}

func newHTTPServer(h http.Handler, cfg Config) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: cfg.ReadHeaderTimeout,
		IdleTimeout:       cfg.IdleTimeout,
		// Server-side errors (a client resetting a connection mid-request) are expected
		// under fault injection; they are journaled, not logged.
		ErrorLog: nil,
	}
}

// adminBodyLimit gives an admin request's body Config.BodyTimeout to arrive (the proxy
// side does the same in ServeHTTP, where the journal records it).
func adminBodyLimit(h http.Handler, d time.Duration) http.Handler {
	if d <= 0 {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength != 0 && r.Body != nil && r.Body != http.NoBody {
			http.NewResponseController(w).SetReadDeadline(time.Now().Add(d))
		}
		h.ServeHTTP(w, r)
	})
}

// serve runs until Close or Shutdown. Serve's error is ErrServerClosed then; any other
// error means the listener broke, which clients see as refused connections.
func serve(srv *http.Server, ln net.Listener) { _ = srv.Serve(ln) }

// URL is the proxy's base URL, e.g. http://127.0.0.1:41234.
func (s *Server) URL() string { return "http://" + s.proxyLn.Addr().String() }

// AdminURL is the admin API's base URL.
func (s *Server) AdminURL() string { return "http://" + s.adminLn.Addr().String() }

// Proxy is the running proxy, to add rules and read the journal in-process.
func (s *Server) Proxy() *Proxy { return s.proxy }

// Close stops both listeners at once, cutting connections in flight (held responses end
// as timed-out), and closes idle upstream connections.
func (s *Server) Close() error {
	var err error
	if s.fast != nil {
		err = s.fast.close()
	} else {
		err = s.proxySrv.Close()
	}
	err = errors.Join(err, s.adminSrv.Close())
	s.proxy.CloseIdleConnections()
	return err
}

// Shutdown stops accepting, waits for requests in flight until ctx ends, then closes.
func (s *Server) Shutdown(ctx context.Context) error {
	var err error
	if s.fast != nil {
		err = s.fast.shutdown(ctx)
	} else {
		err = s.proxySrv.Shutdown(ctx)
	}
	err = errors.Join(err, s.adminSrv.Shutdown(ctx))
	s.proxy.CloseIdleConnections()
	return err
}
