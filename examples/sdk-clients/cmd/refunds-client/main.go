// Command refunds-client refunds three orders with one SDK at its default retry
// settings, as a program under idemproof client-check: it calls $IDEMPROOF_BASE_URL,
// records each order's outcome in $IDEMPROOF_OUTCOME_FILE and the orders that are done
// in $IDEMPROOF_STATE_DIR.
//
//	refunds-client --sdk stripe|openai|retryablehttp [--caller-key]
//
// --caller-key sends an Idempotency-Key the program chose ("refund-" + the order's id)
// instead of the SDK's own (stripe-go) or none (openai-go, go-retryablehttp).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"

	"github.com/idemproof/idemproof/examples/sdk-clients/openaiclient"
	"github.com/idemproof/idemproof/examples/sdk-clients/orders"
	"github.com/idemproof/idemproof/examples/sdk-clients/retryclient"
	"github.com/idemproof/idemproof/examples/sdk-clients/stripeclient"
)

func main() {
	sdk := flag.String("sdk", "", "the SDK: stripe, openai or retryablehttp")
	callerKey := flag.Bool("caller-key", false, "send a key the program chose, derived from the order")
	flag.Parse()
	base := os.Getenv("IDEMPROOF_BASE_URL")
	if base == "" {
		fmt.Fprintln(os.Stderr, "refunds-client: run me under idemproof client-check (IDEMPROOF_BASE_URL is not set)")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := Run(ctx, *sdk, base, *callerKey, orders.FromEnv()); err != nil {
		fmt.Fprintln(os.Stderr, "refunds-client:", err)
		os.Exit(1)
	}
}

// Run refunds the orders with the SDK named.
func Run(ctx context.Context, sdk, base string, callerKey bool, cfg orders.Config) error {
	c := orders.Client{Config: cfg, BaseURL: base, CallerKey: callerKey}
	switch sdk {
	case "stripe":
		return stripeclient.Run(ctx, c)
	case "openai":
		return openaiclient.Run(ctx, c)
	case "retryablehttp":
		return retryclient.Run(ctx, c)
	}
	return fmt.Errorf("--sdk %q: want stripe, openai or retryablehttp", sdk)
}
