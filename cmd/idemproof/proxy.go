package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/idemproof/idemproof/faultproxy"
)

// upstreamFlags collects the repeatable --upstream flag.
type upstreamFlags []string

func (u *upstreamFlags) String() string     { return strings.Join(*u, ",") }
func (u *upstreamFlags) Set(v string) error { *u = append(*u, v); return nil }

// proxyShutdownGrace is how long SIGINT/SIGTERM waits for attempts in flight (a held
// response may be among them) before cutting connections.
const proxyShutdownGrace = 10 * time.Second

// runProxy runs the fault proxy and its admin API until ctx ends, then shuts down
// gracefully.
func runProxy(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("proxy", "--upstream URL [flags]", "Runs the fault-injecting HTTP proxy; rules are added with --rules or the admin API (POST /rules).", stderr)
	listen := fs.String("listen", "127.0.0.1:8081", "address for client traffic (port 0 picks a free port)")
	var upstreams upstreamFlags
	fs.Var(&upstreams, "upstream", "upstream base URL, http:// or https:// (required; repeat for round-robin replicas)")
	admin := fs.String("admin", "127.0.0.1:8474", "address of the admin API (port 0 picks a free port)")
	token := fs.String("admin-token", "", "bearer token the admin API requires (default: none)")
	rulesFile := fs.String("rules", "", "YAML file with a list of rules to load at start")
	seed := fs.Int64("seed", 0, "seed of the random source behind rule probabilities (same seed, same fault sequence)")
	capacity := fs.Int("journal-capacity", faultproxy.DefaultJournalCapacity, "journal records kept in memory; older ones are dropped and counted")
	bufferLimit := fs.Int64("buffer-limit", faultproxy.DefaultBufferLimit, "bytes of one body the proxy may buffer; larger responses pass unfaulted")
	keyHeader := fs.String("key-header", faultproxy.DefaultKeyHeader, "header carrying the idempotency key")
	keyField := fs.String("key-field", "", "dotted JSON path of the key in the request body, used instead of the header (e.g. params.arguments.idempotency_key)")
	insecure := fs.Bool("insecure-upstream", false, "accept any TLS certificate from an https upstream (self-signed test servers)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q: proxy takes flags only", fs.Arg(0))
	}
	if len(upstreams) == 0 {
		return errors.New("--upstream URL is required, e.g. --upstream http://127.0.0.1:8080")
	}
	if *capacity <= 0 {
		return fmt.Errorf("--journal-capacity must be positive, got %d", *capacity)
	}
	if *bufferLimit <= 0 {
		return fmt.Errorf("--buffer-limit must be positive, got %d", *bufferLimit)
	}
	cfg := faultproxy.Config{
		Upstreams:          upstreams,
		KeyHeader:          *keyHeader,
		KeyField:           *keyField,
		Seed:               *seed,
		JournalCapacity:    *capacity,
		BufferLimit:        *bufferLimit,
		InsecureSkipVerify: *insecure,
		ListenAddr:         *listen,
		AdminAddr:          *admin,
		AdminToken:         *token,
	}
	if *rulesFile != "" {
		rules, err := faultproxy.ReadRulesFile(*rulesFile)
		if err != nil {
			return err
		}
		cfg.Rules = rules
	}
	srv, err := faultproxy.Start(ctx, cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "idemproof proxy: listening on %s, admin %s\n", srv.URL(), srv.AdminURL())
	<-ctx.Done()
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), proxyShutdownGrace)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		srv.Close()
		return fmt.Errorf("shut down: %w", err)
	}
	return nil
}
