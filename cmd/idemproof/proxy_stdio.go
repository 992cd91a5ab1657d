package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/faultproxy/stdio"
)

// stdioShim is `idemproof proxy --stdio`: a drop-in for a stdio MCP server's command in
// an agent host's configuration. Without --attach it starts the server (the arguments
// after --) behind the fault layer, on its own stdin and stdout, and serves the admin API
// (rules, journal) on a loopback port; with --attach it relays its stdin and stdout to a
// layer in another process (client-check's).
type stdioShim struct {
	command     []string
	attach      string
	admin       string
	adminToken  string
	allowHosts  []string
	rules       []faultproxy.Rule
	keyField    string
	seed        int64
	journalFile string
	capacity    int
	journalB    int64
	attemptB    int64
}

// errServerExited makes the shim exit 1 once it has said why: the server it stood for
// exited (or a fault killed it), which the agent host must see as its server's exit.
var errServerExited = fmt.Errorf("the server exited: %w", errExitFailure)

func (c stdioShim) run(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer) error {
	if c.attach != "" {
		if len(c.command) > 0 {
			return fmt.Errorf("--attach relays to a fault layer that starts the server itself: give no command after --")
		}
		err := stdio.Relay(ctx, c.attach, stdin, stdout)
		if errors.Is(err, stdio.ErrServerGone) {
			fmt.Fprintln(stderr, "idemproof proxy --stdio: the server exited (the fault layer closed the connection)")
			return errServerExited
		}
		return err
	}
	if len(c.command) == 0 {
		return errors.New("--stdio needs the server's command after --, e.g. idemproof proxy --stdio -- npx -y my-mcp-server")
	}
	layer, err := stdio.New(stdio.Config{
		Command: stdio.Command{Args: c.command}, KeyField: c.keyField, Seed: c.seed, Rules: c.rules,
		Stderr: stderr, JournalCapacity: c.capacity, JournalBytes: c.journalB, AttemptKeyBytes: c.attemptB,
		AdminAddr: c.admin, AdminAllowHosts: c.allowHosts,
	})
	if err != nil {
		return err
	}
	defer layer.Close()
	ln, err := net.Listen("tcp", c.admin)
	if err != nil {
		return fmt.Errorf("admin listen on %s: %w", c.admin, err)
	}
	admin := &http.Server{Handler: layer.Engine().AdminHandler(c.adminToken), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = admin.Serve(ln) }()
	defer admin.Close()
	// stderr is the agent host's log of its server: the one place to say where the admin
	// API listens without disturbing stdout, which belongs to the protocol.
	fmt.Fprintf(stderr, "idemproof proxy --stdio: %s behind the fault layer, admin http://%s\n", stdio.Command{Args: c.command}, ln.Addr())

	done := make(chan struct{})
	var exit string
	var clientEnded bool
	go func() {
		defer close(done)
		exit, clientEnded, err = layer.Run(stdin, stdout)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		layer.Close()
		<-done
	}
	if jerr := c.writeJournal(layer.Engine()); jerr != nil {
		fmt.Fprintln(stderr, "idemproof proxy --stdio:", jerr)
	}
	switch {
	case err != nil:
		return err
	case clientEnded || ctx.Err() != nil:
		return nil
	}
	fmt.Fprintln(stderr, "idemproof proxy --stdio:", exit)
	return errServerExited
}

// writeJournal writes every record, one JSON object per line, to --journal: the journal
// outlives the shim, which ends with its server.
func (c stdioShim) writeJournal(e *faultproxy.Engine) error {
	if c.journalFile == "" {
		return nil
	}
	recs, err := e.Journal(context.Background(), faultproxy.JournalQuery{})
	if err != nil {
		return err
	}
	f, err := os.OpenFile(c.journalFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("--journal: %w", err)
	}
	enc := json.NewEncoder(f)
	for i := range recs {
		if err := enc.Encode(&recs[i]); err != nil {
			f.Close()
			return fmt.Errorf("--journal: %w", err)
		}
	}
	return f.Close()
}
