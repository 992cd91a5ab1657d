// Package embedded runs the reference server in-process as a target for the harness:
// `idemproof check` without --profile, and the conformance and flaw suites.
//
// Start listens on 127.0.0.1:0 (never a fixed port), configures the server exactly as the
// reference profile declares it — retention, lock timeout, test hooks on — optionally
// with flaws and a PostgreSQL store, and returns the profile with BaseURL pointing at it.
// On PostgreSQL the reference's key store is reached through a store fault point
// (package storefault; the profile's store:, so the store/* scenarios run) and its
// ledger through a connection of its own (openPostgres).
// The server is ready when Start returns: the listener is bound before the profile is
// handed out, so no readiness wait is needed.
//
// What it does not do: start a fault proxy (the runner starts its own in front of
// BaseURL), or isolate runs from each other inside one store. Every scenario run uses
// fresh keys and entities, so a shared PostgreSQL database is safe to reuse.
package embedded

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/idemproof/idemproof/downstream"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/reference"
	"github.com/idemproof/idemproof/reference/pgstore"
	"github.com/idemproof/idemproof/storefault"
)

// StoreMemory selects the in-memory store (the default).
const StoreMemory = "memory"

// Config selects the reference server to embed. The zero value is the correct reference
// server on the memory store, described by the built-in "reference" profile.
type Config struct {
	// Profile describes the server; nil means profile.Builtin("reference"). Its
	// Retention and LockTimeout configure the server; BaseURL is replaced.
	Profile *profile.Profile
	// Flaws switches on known-bad variants by name (reference.Flaws); each is added to
	// the target's name, so reports tell the variants apart.
	Flaws []string
	// Store is "" or "memory", or a PostgreSQL DSN (postgres://… or postgresql://…).
	Store string
	// Logger receives the server's store warnings; nil discards them, so a flawed or
	// crashing server does not garble the console.
	Logger *slog.Logger
	// NoVendor leaves the vendor boundary out: by default the reference notifies a
	// recording sink (the profile's downstream:) of every refund, and the boundary
	// scenarios run.
	NoVendor bool
}

// Target is a running embedded reference server.
type Target struct {
	// Profile is a copy of the configured profile with BaseURL set to the server and Name
	// naming the variant: "reference", "reference+no-fingerprint", "reference@postgres".
	Profile *profile.Profile
	server  *reference.Server
	http    *http.Server
	closers []func() error
	served  chan error
}

// Start starts the server. On error everything already started is stopped again.
func Start(ctx context.Context, cfg Config) (*Target, error) {
	p, err := profileFor(cfg)
	if err != nil {
		return nil, err
	}
	t := &Target{Profile: p, served: make(chan error, 1)}
	ok := false
	defer func() {
		if !ok {
			t.Close()
		}
	}()

	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	opts := []reference.Option{
		reference.WithTestHooks(true),
		reference.WithLogger(logger),
	}
	if p.Retention > 0 {
		opts = append(opts, reference.WithRetention(time.Duration(p.Retention)))
	}
	if p.LockTimeout > 0 {
		opts = append(opts, reference.WithLockTimeout(time.Duration(p.LockTimeout)))
	}
	if len(cfg.Flaws) > 0 {
		opts = append(opts, reference.WithFlaws(cfg.Flaws...))
	}
	if p.Downstream != nil {
		d := *p.Downstream // the caller's profile keeps its own
		p.Downstream = &d
	}
	if p.Downstream == nil && !cfg.NoVendor {
		// The reference notifies a vendor of every refund: a recording sink stands in
		// for it, so the boundary scenarios can watch the calls.
		p.Downstream = &profile.Downstream{Listen: "127.0.0.1:0", Env: "VENDOR_URL", KeyHeader: "Idempotency-Key", Entity: "order_id"}
	}
	if d := p.Downstream; d != nil && d.Sink == nil {
		sink, err := downstream.Start(d.SinkConfig())
		if err != nil {
			return nil, fmt.Errorf("start vendor sink: %w", err)
		}
		t.closers = append(t.closers, sink.Close)
		d.Sink = sink
	}
	if d := p.Downstream; d != nil {
		opts = append(opts, reference.WithVendorURL(d.Sink.URL()))
	}
	if dsn := cfg.Store; dsn != "" && dsn != StoreMemory {
		if !IsPostgresDSN(dsn) {
			return nil, fmt.Errorf("store %q: want %q or a postgres:// DSN", dsn, StoreMemory)
		}
		storeOpts, err := t.openPostgres(ctx, dsn)
		if err != nil {
			return nil, err
		}
		opts = append(opts, storeOpts...)
	}
	t.server, err = reference.New(opts...)
	if err != nil {
		return nil, fmt.Errorf("start reference: %w", err)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	t.http = &http.Server{
		Handler:           t.server,
		ReadHeaderTimeout: 10 * time.Second,
		// The crash hooks abort requests on purpose; the standard logger would print a
		// line for each.
		ErrorLog: slogToLog(logger),
	}
	go func() { t.served <- t.http.Serve(ln) }()
	t.Profile.BaseURL = "http://" + ln.Addr().String()
	ok = true
	return t, nil
}

// Close stops the HTTP server (in-flight requests get a few seconds), the reference
// server and its store. Safe to call more than once.
func (t *Target) Close() error {
	var errs []error
	if t.http != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		if err := t.http.Shutdown(ctx); err != nil {
			// Held requests (slow hooks) outlived the grace period: cut them.
			t.http.Close()
		}
		cancel()
		if err := <-t.served; err != nil && !errors.Is(err, http.ErrServerClosed) {
			errs = append(errs, fmt.Errorf("serve: %w", err))
		}
		t.http = nil
	}
	if t.server != nil {
		errs = append(errs, t.server.Close())
		t.server = nil
	}
	for i := len(t.closers) - 1; i >= 0; i-- {
		errs = append(errs, t.closers[i]())
	}
	t.closers = nil
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close embedded reference: %w", err)
	}
	return nil
}

// StoreTimeout is how long the embedded reference on PostgreSQL waits for its key store
// to record a key on the two-phase path (the flaws' path) before it refuses the request
// (reference.WithStoreTimeout): shorter than the hang the store scenarios hold.
const StoreTimeout = time.Second

// openPostgres opens the reference's two connections to the database: its key store
// through a store fault point in front of PostgreSQL (the profile's store:, so the
// store/* scenarios cut and hang it), and the application's own connection straight to
// the database, for the ledger and the work done without a key
// (reference.WithAppStore). The keys' connection is what a store outage hits; the
// ledger stays readable through it.
func (t *Target) openPostgres(ctx context.Context, dsn string) ([]reference.Option, error) {
	u, err := url.Parse(dsn)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("store %q: not a postgres:// URL with a host", dsn)
	}
	upstream := u.Host
	if u.Port() == "" {
		upstream = net.JoinHostPort(u.Hostname(), "5432")
	}
	app, err := pgstore.Open(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("open postgres store: %w", err)
	}
	t.closers = append(t.closers, app.Close)
	pt, err := storefault.Start(storefault.Config{Listen: "127.0.0.1:0", Upstream: upstream})
	if err != nil {
		return nil, fmt.Errorf("open postgres store: %w", err)
	}
	t.closers = append(t.closers, pt.Close)
	through := *u
	through.Host = pt.Addr()
	keys, err := pgstore.Open(ctx, through.String())
	if err != nil {
		return nil, fmt.Errorf("open postgres store through the store fault point %s: %w", pt.Addr(), err)
	}
	t.closers = append(t.closers, keys.Close)
	t.Profile.Store = &profile.Store{Listen: pt.Addr(), Upstream: upstream, Point: pt}
	// The database keeps its keys across an outage of the connection.
	t.Profile.Expect.DurableKeys = true
	return []reference.Option{reference.WithStore(keys), reference.WithAppStore(app), reference.WithStoreTimeout(StoreTimeout)}, nil
}

// IsPostgresDSN reports whether s looks like a PostgreSQL URL DSN.
func IsPostgresDSN(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// profileFor copies the configured (or built-in) profile and names the variant.
func profileFor(cfg Config) (*profile.Profile, error) {
	src := cfg.Profile
	if src == nil {
		var err error
		src, err = profile.Builtin("reference")
		if err != nil {
			return nil, fmt.Errorf("load reference profile: %w", err)
		}
	}
	p := *src
	if p.Name == "" {
		p.Name = "reference"
	}
	for _, f := range cfg.Flaws {
		p.Name += "+" + strings.TrimSpace(f)
	}
	if IsPostgresDSN(cfg.Store) {
		p.Name += "@postgres"
	}
	return &p, nil
}
