// Command refunds-api serves a refunds API for the SDK examples (package refundsapi):
// --shape stripe (form-encoded, Stripe's error objects; for stripe-go) or json (for
// openai-go and go-retryablehttp).
//
//	refunds-api --shape stripe --listen 127.0.0.1:8097 [--retention 24h] [--lifetime 10m]
package main

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/idemproof/idemproof/examples/sdk-clients/refundsapi"
)

func main() {
	shape := flag.String("shape", refundsapi.ShapeJSON, "json or stripe")
	listen := flag.String("listen", "127.0.0.1:8097", "address to listen on")
	retention := flag.Duration("retention", refundsapi.DefaultRetention, "how long a key is kept")
	lifetime := flag.Duration("lifetime", 0, "stop after this long (0: run until killed)")
	flag.Parse()
	api, stop, err := refundsapi.New(*shape, *retention)
	if err != nil {
		fmt.Fprintln(os.Stderr, "refunds-api:", err)
		os.Exit(2)
	}
	defer stop()
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "refunds-api:", err)
		os.Exit(1)
	}
	srv := &http.Server{Handler: api, ReadHeaderTimeout: 10 * time.Second}
	if *lifetime > 0 {
		time.AfterFunc(*lifetime, func() { srv.Close() })
	}
	fmt.Fprintf(os.Stderr, "refunds-api: %s refunds on http://%s\n", *shape, ln.Addr())
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(os.Stderr, "refunds-api:", err)
		os.Exit(1)
	}
}
