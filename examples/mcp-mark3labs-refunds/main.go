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

	"github.com/mark3labs/mcp-go/server"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8092", "listen address; 127.0.0.1:0 picks a free port (the URL is printed)")
	retention := flag.Duration("retention", 3*time.Second, "how long a completed key replays its result")
	stdio := flag.Bool("stdio", false, "serve one MCP client over stdin and stdout instead (logs to stderr)")
	flag.Parse()

	app := NewApp(Config{Retention: *retention})
	if *stdio {
		if err := server.ServeStdio(app.MCPServer()); err != nil {
			log.Fatalf("mcp-mark3labs-refunds: %v", err)
		}
		return
	}

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatalf("mcp-mark3labs-refunds: %v", err)
	}
	srv := &http.Server{Handler: app.Handler(), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(os.Stderr, "mcp-mark3labs-refunds: listening on http://%s (MCP endpoint /mcp)\n", ln.Addr())

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(shutdown)
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		log.Fatalf("mcp-mark3labs-refunds: %v", err)
	}
}
