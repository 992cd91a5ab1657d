// Command mcp-gosdk-refunds serves the refunds package's MCP tool server (the official Go
// SDK, the key in _meta, deduplicated correctly; README.md), over Streamable HTTP or stdio:
//
//	go run . -addr 127.0.0.1:8091            # then idemproof check --profile profile.yaml
//	go run . -stdio -state refunds.json      # an agent host's server command; idemproof check --profile stdio-profile.yaml
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/idemproof/idemproof/examples/mcp-gosdk-refunds/refunds"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8091", "listen address; 127.0.0.1:0 picks a free port (the URL is printed)")
	retention := flag.Duration("retention", 3*time.Second, "how long a completed key replays its result")
	stdio := flag.Bool("stdio", false, "serve one MCP client over stdin and stdout instead (logs to stderr)")
	stateFile := flag.String("state", "", "keep the keys and the ledger in this file: they survive a restart and every server process shares them (default: in memory)")
	flag.Parse()

	app := refunds.NewApp(refunds.Config{Retention: *retention, StateFile: *stateFile})
	if *stdio {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		if err := app.ServeStdio(ctx); err != nil && ctx.Err() == nil {
			log.Fatalf("mcp-gosdk-refunds: %v", err)
		}
		return
	}

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatalf("mcp-gosdk-refunds: %v", err)
	}
	srv := &http.Server{Handler: app.Handler(), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(os.Stderr, "mcp-gosdk-refunds: listening on http://%s (MCP endpoint /mcp)\n", ln.Addr())

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(shutdown)
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		log.Fatalf("mcp-gosdk-refunds: %v", err)
	}
}
