package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/idemproof/idemproof/reference"
	"github.com/idemproof/idemproof/reference/idempotency"
	"github.com/idemproof/idemproof/reference/mcpserver"
	"github.com/idemproof/idemproof/reference/memstore"
	"github.com/idemproof/idemproof/reference/pgstore"
)

// repeated is a flag that may be given several times.
type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, ",") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

// runServe runs the reference keyed refund server until ctx ends (SIGINT/SIGTERM), then
// shuts it down gracefully.
func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("serve", "[flags]", "Runs the reference keyed refund server (POST /v1/refunds, POST /v1/invoices, GET ledgers, GET /healthz)\nuntil interrupted; with --mcp, the same refund as an MCP tool server (Streamable HTTP at /mcp, or --stdio).", stderr)
	listen := fs.String("listen", "127.0.0.1:8080", "address to listen on (port 0 picks a free port)")
	storeSpec := fs.String("store", "memory", "memory | postgres://user:pass@host:port/db")
	storeWait := fs.Duration("store-wait", defaultStoreWait, "how long to wait at start for a PostgreSQL --store to accept connections (0: try once)")
	memoryLimit := fs.Int64("memory-limit", memstore.DefaultMaxBytes, "bytes the memory store may hold, keys and ledger (at least 1048576); past it new keys are answered 507")
	retention := fs.Duration("retention", idempotency.DefaultRetention, "how long a key lives, from its first record")
	lockTimeout := fs.Duration("lock-timeout", idempotency.DefaultLockTimeout, "when a held key's lock goes stale and a retry may take over")
	testHooks := fs.Bool("test-hooks", false, "enable the X-Test-Delay, X-Test-Fail and X-Test-Crash request headers")
	var flaws repeated
	fs.Var(&flaws, "flaw", "switch on a known-bad variant by name (repeatable; see --list-flaws)")
	tokens := fs.String("tokens", "", "comma-separated bearer tokens to accept (empty: open mode, the token names the principal)")
	keysOptional := fs.Bool("keys-optional", false, "execute requests without Idempotency-Key unkeyed instead of answering 400")
	crashExits := fs.Bool("crash-exits", false, fmt.Sprintf("make X-Test-Crash exit the process (status %d) instead of abandoning the request", reference.CrashExitCode))
	listFlaws := fs.Bool("list-flaws", false, "print the flaw catalogue and exit")
	vendorURL := fs.String("vendor-url", os.Getenv("VENDOR_URL"), "notify this vendor of every refund (POST /v1/notifications, keyed, from a job committed with the refund; default $VENDOR_URL)")
	headerTimeout := fs.Duration("read-header-timeout", serveReadHeaderTimeout, "time a client has to send its request headers")
	bodyTimeout := fs.Duration("body-timeout", reference.DefaultBodyTimeout, "time a client has to send a whole request body (past it: 408, nothing recorded)")
	idleTimeout := fs.Duration("idle-timeout", serveIdleTimeout, "time an idle keep-alive connection stays open")
	mcpMode := fs.Bool("mcp", false, "serve the refund as an MCP tool server instead (the fixture for agent harnesses): Streamable HTTP at /mcp, or --stdio")
	stdioMode := fs.Bool("stdio", false, "with --mcp: serve one MCP client over stdin and stdout (logs go to stderr), for an agent host to start as its server command")
	keyIn := fs.String("key-in", mcpserver.KeyInMeta, "with --mcp: where the refund tool reads the key: meta (_meta.idempotency_key), argument (arguments.idempotency_key) or params (params.idempotencyKey, SEP-3182: initialize then advertises capabilities.tools.idempotency)")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q: serve takes flags only", fs.Arg(0))
	}
	if *listFlaws {
		return printFlaws(stdout)
	}
	if *retention <= 0 || *lockTimeout <= 0 {
		return errors.New("--retention and --lock-timeout must be positive durations, e.g. 24h, 30s")
	}
	if *headerTimeout <= 0 || *bodyTimeout <= 0 || *idleTimeout <= 0 {
		return errors.New("--read-header-timeout, --body-timeout and --idle-timeout must be positive durations, e.g. 10s, 60s, 2m")
	}
	if !*mcpMode && (*stdioMode || *keyIn != mcpserver.KeyInMeta) {
		return errors.New("--stdio and --key-in serve the MCP tool server: add --mcp")
	}

	if *memoryLimit < 1<<20 {
		return fmt.Errorf("--memory-limit must be at least 1048576 bytes (1 MiB), got %d", *memoryLimit)
	}
	if *storeWait < 0 {
		return fmt.Errorf("--store-wait must be 0 or a positive duration, e.g. 15s, got %s", *storeWait)
	}
	store, err := openStore(ctx, *storeSpec, *memoryLimit, *storeWait, stderr)
	if err != nil {
		return err
	}
	defer store.Close()

	opts := []reference.Option{
		reference.WithStore(store),
		reference.WithRetention(*retention),
		reference.WithLockTimeout(*lockTimeout),
		reference.WithTestHooks(*testHooks),
		reference.WithCrashExits(*crashExits),
		reference.WithKeysOptional(*keysOptional),
		reference.WithFlaws(flaws...),
		reference.WithBodyTimeout(*bodyTimeout),
	}
	if *vendorURL != "" {
		opts = append(opts, reference.WithVendorURL(*vendorURL))
	}
	if *tokens != "" {
		opts = append(opts, reference.WithTokens(strings.Split(*tokens, ",")...))
	}
	var handler http.Handler
	what := ""
	if *mcpMode {
		srv, err := mcpserver.New(mcpserver.Config{KeyIn: *keyIn, TestHooks: *testHooks, Reference: opts})
		if err != nil {
			return err
		}
		defer srv.Close()
		if *stdioMode {
			fmt.Fprintln(stderr, "idemproof serve: MCP tool server on stdin and stdout (tools refund, list_refunds)")
			return srv.ServeStdio(ctx, os.Stdin, os.Stdout)
		}
		handler, what = srv.Handler(), " (MCP endpoint /mcp: tools refund, list_refunds)"
	} else {
		srv, err := reference.New(opts...)
		if err != nil {
			return err
		}
		defer srv.Close()
		handler = srv
	}

	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", *listen, err)
	}
	hs := &http.Server{Handler: handler, ReadHeaderTimeout: *headerTimeout, IdleTimeout: *idleTimeout}
	fmt.Fprintf(stderr, "idemproof serve: listening on http://%s%s\n", ln.Addr(), what)

	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := hs.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shut down: %w", err)
	}
	return nil
}

// Defaults of serve's listener timeouts (the body timeout is the server's own).
const (
	serveReadHeaderTimeout = 10 * time.Second
	serveIdleTimeout       = 2 * time.Minute
)

// openStore opens the store a --store value names; memoryLimit is the memory store's
// byte budget.
func openStore(ctx context.Context, spec string, memoryLimit int64, wait time.Duration, stderr io.Writer) (idempotency.Store, error) {
	switch {
	case spec == "memory":
		return memstore.New(memstore.WithMaxBytes(memoryLimit)), nil
	case strings.HasPrefix(spec, "postgres://"), strings.HasPrefix(spec, "postgresql://"):
		return openPostgres(ctx, spec, wait, stderr)
	}
	return nil, fmt.Errorf("--store %q: use memory or a postgres://user:pass@host:port/db DSN", spec)
}

// defaultStoreWait is --store-wait's default: a replica started with its database, or
// restarted while the database still holds the dead process's connections, finds it up
// within that.
const defaultStoreWait = 15 * time.Second

// storeTryTimeout bounds one try to open the store.
const storeTryTimeout = 15 * time.Second

// openPostgres opens the PostgreSQL store, trying again every 250 ms for up to wait
// while the error is one that may pass (not up yet, too many connections); a malformed
// DSN or an earlier schema is said at once. The first failure is said on stderr, so a
// wait is never silent.
func openPostgres(ctx context.Context, dsn string, wait time.Duration, stderr io.Writer) (idempotency.Store, error) {
	deadline := time.Now().Add(wait)
	for tries := 1; ; tries++ {
		tryCtx, cancel := context.WithTimeout(ctx, storeTryTimeout)
		s, err := pgstore.Open(tryCtx, dsn)
		cancel()
		if err == nil {
			return s, nil
		}
		left := time.Until(deadline)
		switch {
		case pgstore.Permanent(err), wait == 0:
			return nil, fmt.Errorf("open store: %w", err)
		case left <= 0 || ctx.Err() != nil:
			return nil, fmt.Errorf("open store (%d tries in %s, --store-wait): %w", tries, wait, err)
		case tries == 1:
			fmt.Fprintf(stderr, "idemproof serve: the store is not ready (%v); trying again for up to %s (--store-wait)\n", err, wait)
		}
		select {
		case <-ctx.Done():
		case <-time.After(min(250*time.Millisecond, left)):
		}
	}
}

func printFlaws(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FLAW\tCAUGHT BY\tMODELS")
	for _, f := range reference.Flaws() {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", f.Name, f.CaughtBy, f.Description)
	}
	return tw.Flush()
}
