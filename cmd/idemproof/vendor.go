package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/idemproof/idemproof/downstream"
)

// runVendor runs the recording downstream sink as a process (a container a target under
// test is pointed at as its vendor), with its admin API on a second listener.
func runVendor(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("vendor", "[flags]", "Runs a recording vendor (the downstream sink) for a target to call: it records every call,\n"+
		"deduplicates keyed calls, and injects the faults its admin API is given.", stderr)
	listen := fs.String("listen", "127.0.0.1:9090", "where the target calls its vendor")
	adminListen := fs.String("admin-listen", "127.0.0.1:9091", "the sink's own API: GET /calls?entity=E, POST /rules, DELETE /rules?entity=E")
	keyHeader := fs.String("key-header", "Idempotency-Key", "the header carrying the downstream key")
	keyField := fs.String("key-field", "", "a JSON path into the call's body carrying the key instead")
	entity := fs.String("entity", "order_id", "a JSON path into the call's body naming the operation's entity")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q: vendor takes flags only", fs.Arg(0))
	}
	cfg := downstream.Config{Listen: *listen, KeyHeader: *keyHeader, KeyField: *keyField, EntityField: *entity}
	if *keyField != "" {
		cfg.KeyHeader = ""
	}
	sink, err := downstream.Start(cfg)
	if err != nil {
		return err
	}
	defer sink.Close()
	ln, err := net.Listen("tcp", *adminListen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", *adminListen, err)
	}
	admin := &http.Server{Handler: sink.AdminHandler(), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stderr, "idemproof vendor: calls on %s, admin on http://%s\n", sink.URL(), ln.Addr())
	served := make(chan error, 1)
	go func() { served <- admin.Serve(ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("serve admin: %w", err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := admin.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
