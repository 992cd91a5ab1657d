package clientcheck

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/faultproxy/stdio"
	"github.com/idemproof/idemproof/faultproxy/stdio/jsonl"
	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/reference/mcpserver"
	"github.com/idemproof/idemproof/transport/mcpstdio"
)

// An agent harness under client-check. Its tool calls are the attempts: the tools/call
// requests of the profile's operation.tool, each naming its operation in its arguments
// (the entity) and carrying its key where key_field says. Everything else it sends —
// initialize, tools/list, a read-only tool such as the ledger — passes untouched and is
// never judged: retried freely, as it may be.
//
//	over Streamable HTTP  agent ──IDEMPROOF_MCP_ENDPOINT──> front ──> fault proxy ──> server
//	over stdio            agent ──starts IDEMPROOF_MCP_COMMAND (the shim: idemproof proxy
//	                      --stdio --attach ADDR)──> this run's stdio fault layer ──> server
//
// Over stdio the agent starts the shim as it would start its server; each start is a
// server process of its own behind the one fault layer (one journal, one attempt count
// per key). The kill kind kills the server right after it answered: the shim exits as
// the server did, and the agent must start it again and retry under the same key. So
// the server's state must outlive its process (expect.durable_keys), as the fixture's,
// which runs in this process, does.

// Fault kinds of a stdio server, and the default schedule over stdio.
const (
	// DefaultStdioFaultSpec loses answers as a pipe can: held past the client's timeout,
	// dropped after the commit, and the server killed right after it answered.
	DefaultStdioFaultSpec = "hold=3s,reset,kill"
)

// openMCPFixture starts the MCP fixture (reference/mcpserver: the reference refund as
// the tool `refund`) for a run without a profile: in this process, over Streamable HTTP
// or, for stdio, as the in-process server of the run's fault layer. Its state lives in
// this process, so it survives the kill kind as a durable store would.
func openMCPFixture(cfg Config) (*profile.Profile, stdio.ServeFunc, func(), error) {
	srv, err := mcpserver.New(mcpserver.Config{TestHooks: true, Reference: cfg.Reference})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("start the MCP fixture: %w", err)
	}
	var p *profile.Profile
	switch cfg.MCP {
	case "stdio":
		if p, err = profile.Builtin("mcp-refunds-stdio"); err != nil {
			srv.Close()
			return nil, nil, nil, err
		}
		p.Expect.DurableKeys = true // its state lives in this process: a kill ends its session only
		return p, srv.ServeStdio, func() { srv.Close() }, nil
	case "http":
		hs, err := serve(srv.Handler())
		if err != nil {
			srv.Close()
			return nil, nil, nil, err
		}
		if p, err = profile.Builtin("mcp-refunds"); err != nil {
			hs.Close()
			srv.Close()
			return nil, nil, nil, err
		}
		p.BaseURL = "http://" + hs.Addr
		return p, nil, func() { hs.Close(); srv.Close() }, nil
	}
	srv.Close()
	return nil, nil, nil, fmt.Errorf("MCP fixture over %q: want stdio or http", cfg.MCP)
}

// openStdioSurface puts the stdio fault layer in front of the profile's server (or the
// in-process fixture), listening on a loopback port for the shims the client starts.
func openStdioSurface(ctx context.Context, cfg Config, p *profile.Profile, fixture stdio.ServeFunc, fr *front, rules []faultproxy.Rule, restarts *restarter, lifetime context.Context) (*surface, error) {
	shim, err := shimCommand(cfg.ShimCommand)
	if err != nil {
		return nil, err
	}
	classifier := p.Classifier()
	layer, err := stdio.New(stdio.Config{
		Command: p.StdioCommand(), Serve: fixture, KeyField: p.KeyField, Seed: cfg.Seed, Rules: rules,
		Classify: func(line []byte) string { return string(classifyLine(classifier, line)) },
		Annotate: func(line []byte, _ jsonl.Message) map[string]string {
			attrs, _ := fr.begin(lifetime, nil, line)
			return attrs
		},
		Answered: func(attrs map[string]string) {
			if attrs[headerRestart] == "1" {
				fr.restartAfter(lifetime, restarts, attrs)
			}
		},
		Delivered: fr.delivered,
	})
	if err != nil {
		return nil, fmt.Errorf("start the stdio fault layer: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		layer.Close()
		return nil, fmt.Errorf("listen on 127.0.0.1: %w", err)
	}
	go layer.Serve(ln) //nolint:errcheck // ends when ln is closed
	admin, err := serve(layer.Engine().AdminHandler(""))
	if err != nil {
		ln.Close()
		layer.Close()
		return nil, err
	}
	// The ledger is read in a connection of its own through the layer (a server process
	// of its own; the fixture's, in this process): no rule matches a keyless call.
	tr := p.NewStdioTransport(classifier)
	tr.Dial = func() (mcpstdio.Conn, error) { return layer.Connect() }
	ledger := ledgerReader{p.LedgerReaderOver(tr)}
	closeAll := func() {
		ln.Close()
		tr.Close()
		admin.Close()
		layer.Close()
	}
	if _, err := ledger.count(ctx, "idemproof-preflight-"+strconv.FormatInt(time.Now().UnixNano(), 36)); err != nil {
		closeAll()
		return nil, fmt.Errorf("preflight: the stdio server %s does not answer its ledger tool (side_effects): %w", p.StdioCommand(), err)
	}
	return &surface{
		ctl: layer.Engine(), admin: "http://" + admin.Addr, ledger: &ledger,
		command: append(append([]string(nil), shim...), "--attach", ln.Addr().String()),
		drain: func() {
			ln.Close()
			wctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = layer.Engine().WaitIdle(wctx)
		},
		close: closeAll,
	}, nil
}

// classifyLine is the outcome class of an answer line (info for a line that is not one).
func classifyLine(cl outcome.Classifier, line []byte) outcome.Class {
	if jsonl.Parse(line).Kind != jsonl.Response {
		return outcome.Info
	}
	return cl.Classify(outcome.Answer{Status: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}}, Body: line})
}

// delivered keeps what the client got for an attempt over stdio (Config.Delivered of the
// layer): the answer line, as the HTTP front's captureWriter keeps a response.
func (f *front) delivered(attrs map[string]string, line []byte, sent time.Time) {
	n, err := strconv.ParseUint(attrs[HeaderAttempt], 10, 64)
	if err != nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	a, ok := f.attempts[n]
	if !ok {
		return
	}
	a.end = time.Now()
	if line == nil {
		return
	}
	a.sent, a.wrote, a.status = sent, true, http.StatusOK
	a.header = http.Header{"Content-Type": {"application/json"}}
	room := min(maxDeliveredBody, maxDeliveredTotal-f.kept, len(line))
	if room > 0 {
		a.body = append(a.body[:0], line[:room]...)
		f.kept += room
	}
}

// restartAfter kills the client after the server answered the attempt the attributes
// name (the restart kind over stdio).
func (f *front) restartAfter(lifetime context.Context, r *restarter, attrs map[string]string) {
	n, err := strconv.ParseUint(attrs[HeaderAttempt], 10, 64)
	if err != nil {
		return
	}
	if a, ok := f.snapshot(n); ok {
		r.kill(lifetime, a.op, a.key, n)
	}
}

// shimCommand is the argv that starts the stdio shim: given, else idemproof itself.
func shimCommand(given []string) ([]string, error) {
	if len(given) > 0 {
		return given, nil
	}
	if exe, err := os.Executable(); err == nil && strings.TrimSuffix(filepath.Base(exe), ".exe") == "idemproof" {
		return []string{exe, "proxy", "--stdio"}, nil
	}
	if path, err := exec.LookPath("idemproof"); err == nil {
		return []string{path, "proxy", "--stdio"}, nil
	}
	return nil, errors.New("client-check over stdio gives the client `idemproof proxy --stdio --attach ADDR` as its server command, and no idemproof program is on the PATH: install it (go install ./cmd/idemproof) or set Config.ShimCommand")
}

// mcpEntity turns the entity inferred from an MCP operation's body (its tool's
// arguments) into a path in the JSON-RPC request, where the front reads it.
func mcpEntity(p *profile.Profile, e profile.EntityRef) profile.EntityRef {
	if p.IsMCP() && e.JSON != "" && !strings.HasPrefix(e.JSON, "params.") {
		e.JSON = "params.arguments." + e.JSON
	}
	return e
}
