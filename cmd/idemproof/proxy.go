package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/faultproxy/stdio"
	"github.com/idemproof/idemproof/profile"
)

// upstreamFlags collects the repeatable --upstream flag.
type upstreamFlags []string

func (u *upstreamFlags) String() string     { return strings.Join(*u, ",") }
func (u *upstreamFlags) Set(v string) error { *u = append(*u, v); return nil }

// proxyShutdownGrace is how long SIGINT/SIGTERM waits for attempts in flight (a held
// response may be among them) before cutting connections.
const proxyShutdownGrace = 10 * time.Second

// adminTokenEnv names the environment variable an admin token may come from, so that
// it need not be on the command line (where ps shows it).
const adminTokenEnv = "IDEMPROOF_ADMIN_TOKEN"

// adminTokenFrom picks the admin token: --admin-token, else --admin-token-file, else
// $IDEMPROOF_ADMIN_TOKEN; giving both flags is an error.
func adminTokenFrom(flagValue, file string) (string, error) {
	switch {
	case flagValue != "" && file != "":
		return "", errors.New("give the admin token once: --admin-token or --admin-token-file, not both")
	case flagValue != "":
		return flagValue, nil
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("--admin-token-file: %w", err)
		}
		tok := strings.TrimSpace(string(b))
		if tok == "" {
			return "", fmt.Errorf("--admin-token-file %s: the file is empty", file)
		}
		return tok, nil
	}
	return os.Getenv(adminTokenEnv), nil
}

// runProxy runs the fault proxy and its admin API until ctx ends, then shuts down
// gracefully.
func runProxy(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("proxy", "--upstream URL [flags]", "Runs the fault-injecting HTTP proxy; rules are added with --rules or the admin API (POST /rules).", stderr)
	listen := fs.String("listen", "127.0.0.1:8081", "address for client traffic (port 0 picks a free port)")
	var upstreams upstreamFlags
	fs.Var(&upstreams, "upstream", "upstream base URL, http:// or https:// (required; repeat for round-robin replicas)")
	admin := fs.String("admin", "127.0.0.1:8474", "address of the admin API (port 0 picks a free port)")
	token := fs.String("admin-token", "", "bearer token the admin API requires (default: $"+adminTokenEnv+", else none; visible in ps, prefer --admin-token-file or the variable)")
	tokenFile := fs.String("admin-token-file", "", "file holding the admin API's bearer token (surrounding whitespace ignored)")
	var allowHosts, redact upstreamFlags
	fs.Var(&allowHosts, "admin-allow-host", "host name the admin API answers to besides loopback names, IP literals and the --admin host (repeatable; * allows any)")
	fs.Var(&redact, "redact", "request header the journal records as [redacted], besides Authorization, Proxy-Authorization, Cookie, Set-Cookie, X-Api-Key, Api-Key, X-Auth-Token, X-Amz-Security-Token, X-Goog-Api-Key, Private-Token (repeatable)")
	rulesFile := fs.String("rules", "", "YAML file with a list of rules to load at start")
	seed := fs.Int64("seed", 0, "seed of the random source behind rule probabilities (same seed, same fault sequence)")
	capacity := fs.Int64("journal-capacity", faultproxy.DefaultJournalCapacity, fmt.Sprintf("journal records kept in memory (1 to %d); older ones are dropped and counted", faultproxy.MaxJournalCapacity))
	journalBytes := fs.Int64("journal-bytes", faultproxy.DefaultJournalBytes, "bytes of journal records kept in memory (at least 65536); the oldest are dropped and counted")
	attemptBytes := fs.Int64("attempt-key-bytes", faultproxy.DefaultAttemptKeyBytes, "bytes of per-key attempt counters (at least 65536); the least recently used keys are forgotten and counted")
	bufferLimit := fs.Int64("buffer-limit", faultproxy.DefaultBufferLimit, fmt.Sprintf("bytes of one body the proxy may buffer (1 to %d); larger responses pass unfaulted", faultproxy.MaxBufferLimit))
	headerTimeout := fs.Duration("read-header-timeout", faultproxy.DefaultReadHeaderTimeout, "time a client has to send its request headers")
	bodyTimeout := fs.Duration("body-timeout", faultproxy.DefaultBodyTimeout, "time a client has to send a whole request body (past it: 408, journaled)")
	idleTimeout := fs.Duration("idle-timeout", faultproxy.DefaultIdleTimeout, "time an idle keep-alive client connection stays open")
	streamWait := fs.Duration("stream-wait", faultproxy.DefaultStreamWait, "time an after-* fault waits on an event stream for its JSON-RPC response (past it, the fault applies to what arrived)")
	upstreamIdle := fs.Duration("upstream-idle-timeout", faultproxy.DefaultUpstreamIdleTimeout, "time an idle upstream connection stays pooled")
	keyHeader := fs.String("key-header", faultproxy.DefaultKeyHeader, "header carrying the idempotency key")
	keyField := fs.String("key-field", "", "dotted JSON path of the key in the request body, used instead of the header (e.g. params.arguments.idempotency_key)")
	insecure := fs.Bool("insecure-upstream", false, "accept any TLS certificate from an https upstream (self-signed test servers)")
	upstreamCA := fs.String("upstream-ca-file", "", "PEM file of a CA (a test CA) an https upstream is verified against, besides the system's roots")
	stdioMode := fs.Bool("stdio", false, "front a stdio MCP server instead: idemproof proxy --stdio [flags] -- SERVER-CMD ARGS…, a drop-in for the server's command (admin API on a free loopback port unless --admin is given)")
	attach := fs.String("attach", "", "with --stdio: relay stdin and stdout to the fault layer listening at this address (client-check gives it) instead of starting a server")
	journalFile := fs.String("journal", "", "with --stdio: append the journal to this file (JSON lines) when the shim ends, as it ends with its server")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if *stdioMode {
		explicit := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { explicit[f.Name] = true })
		for _, name := range []string{"upstream", "listen", "key-header", "insecure-upstream", "upstream-ca-file", "redact", "buffer-limit", "read-header-timeout", "body-timeout", "idle-timeout"} {
			if explicit[name] {
				return fmt.Errorf("--%s is a flag of the HTTP proxy: --stdio fronts a server's stdin and stdout", name)
			}
		}
		adminAddr := "127.0.0.1:0"
		if explicit["admin"] {
			adminAddr = *admin
		}
		adminToken, err := adminTokenFrom(*token, *tokenFile)
		if err != nil {
			return err
		}
		shim := stdioShim{command: fs.Args(), attach: *attach, admin: adminAddr, adminToken: adminToken, allowHosts: allowHosts,
			keyField: *keyField, seed: *seed, journalFile: *journalFile, capacity: int(*capacity), journalB: *journalBytes, attemptB: *attemptBytes}
		if *rulesFile != "" {
			if shim.rules, err = faultproxy.ReadRulesFileFor(*rulesFile, stdio.CheckFault); err != nil {
				return err
			}
		}
		return shim.run(ctx, os.Stdin, stdout, stderr)
	}
	if *attach != "" || *journalFile != "" {
		return errors.New("--attach and --journal go with --stdio")
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q: proxy takes flags only", fs.Arg(0))
	}
	if len(upstreams) == 0 {
		return errors.New("--upstream URL is required, e.g. --upstream http://127.0.0.1:8080")
	}
	if *capacity < 1 || *capacity > faultproxy.MaxJournalCapacity {
		return fmt.Errorf("--journal-capacity must be 1 to %d records, got %d", faultproxy.MaxJournalCapacity, *capacity)
	}
	if *journalBytes < 64<<10 {
		return fmt.Errorf("--journal-bytes must be at least 65536, got %d", *journalBytes)
	}
	if *attemptBytes < 64<<10 {
		return fmt.Errorf("--attempt-key-bytes must be at least 65536, got %d", *attemptBytes)
	}
	if *bufferLimit < 1 || *bufferLimit > faultproxy.MaxBufferLimit {
		return fmt.Errorf("--buffer-limit must be 1 to %d bytes, got %d", faultproxy.MaxBufferLimit, *bufferLimit)
	}
	for name, d := range map[string]time.Duration{"read-header-timeout": *headerTimeout, "body-timeout": *bodyTimeout, "idle-timeout": *idleTimeout,
		"stream-wait": *streamWait, "upstream-idle-timeout": *upstreamIdle} {
		if d <= 0 {
			return fmt.Errorf("--%s must be a positive duration such as 30s, got %v", name, d)
		}
	}
	adminToken, err := adminTokenFrom(*token, *tokenFile)
	if err != nil {
		return err
	}
	upstreamTLS, err := profile.CAFileTLSConfig(*upstreamCA)
	if err != nil {
		return fmt.Errorf("--upstream-ca-file: %w", err)
	}
	cfg := faultproxy.Config{
		Upstreams:           upstreams,
		KeyHeader:           *keyHeader,
		KeyField:            *keyField,
		Seed:                *seed,
		JournalCapacity:     int(*capacity),
		JournalBytes:        *journalBytes,
		AttemptKeyBytes:     *attemptBytes,
		BufferLimit:         *bufferLimit,
		InsecureSkipVerify:  *insecure,
		TLSClientConfig:     upstreamTLS,
		ReadHeaderTimeout:   *headerTimeout,
		BodyTimeout:         *bodyTimeout,
		IdleTimeout:         *idleTimeout,
		StreamWait:          *streamWait,
		UpstreamIdleTimeout: *upstreamIdle,
		Redact:              redact,
		ListenAddr:          *listen,
		AdminAddr:           *admin,
		AdminToken:          adminToken,
		AdminAllowHosts:     allowHosts,
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
