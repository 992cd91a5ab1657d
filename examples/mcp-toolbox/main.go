// Command mcp-toolbox serves the toolbox package's MCP server: seven tools that behave
// differently under a retry, for idemproof scan (README.md):
//
//	go run ./examples/mcp-toolbox -addr 127.0.0.1:8093
//	idemproof scan --mcp http://127.0.0.1:8093/mcp --args examples/mcp-toolbox/args.yaml --yes
//
// With -stdio it serves one client over its stdin and stdout instead, as an agent host
// starts a server (logs go to stderr):
//
//	go build -o /tmp/mcp-toolbox ./examples/mcp-toolbox
//	idemproof scan --args examples/mcp-toolbox/args.yaml --yes --mcp-command -- /tmp/mcp-toolbox -stdio
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

	"github.com/idemproof/idemproof/examples/mcp-toolbox/toolbox"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8093", "listen address; 127.0.0.1:0 picks a free port (the URL is printed)")
	work := flag.Duration("work", 200*time.Millisecond, "how long each tool's work takes")
	stdio := flag.Bool("stdio", false, "serve one MCP client over stdin and stdout instead of listening")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *stdio {
		fmt.Fprintln(os.Stderr, "mcp-toolbox: serving MCP on stdin and stdout")
		if err := toolbox.New(*work).ServeStdio(ctx, os.Stdin, os.Stdout); err != nil {
			log.Fatalf("mcp-toolbox: %v", err)
		}
		return
	}

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatalf("mcp-toolbox: %v", err)
	}
	srv := &http.Server{Handler: toolbox.New(*work).Handler(), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(os.Stderr, "mcp-toolbox: listening on http://%s/mcp\n", ln.Addr())
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(shutdown)
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		log.Fatalf("mcp-toolbox: %v", err)
	}
}
