// Command openapi-refunds serves the notes package: the reference refund server with a
// notes API that takes no key, described by openapi.yaml, for idemproof scan (README.md):
//
//	go run ./examples/openapi-refunds -addr 127.0.0.1:8094
//	idemproof scan --openapi examples/openapi-refunds/openapi.yaml --base-url http://127.0.0.1:8094 --yes
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

	"github.com/idemproof/idemproof/examples/openapi-refunds/notes"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8094", "listen address; 127.0.0.1:0 picks a free port (the URL is printed)")
	flag.Parse()

	s, err := notes.New()
	if err != nil {
		log.Fatalf("openapi-refunds: %v", err)
	}
	defer s.Close()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatalf("openapi-refunds: %v", err)
	}
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(os.Stderr, "openapi-refunds: listening on http://%s\n", ln.Addr())

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(shutdown)
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		log.Fatalf("openapi-refunds: %v", err)
	}
}
