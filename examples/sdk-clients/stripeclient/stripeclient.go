// Package stripeclient refunds orders with stripe-go v82 at its default retry settings
// (what its source does, stripe.go: up to 2 retries, 500 ms × (1 + n²) with jitter, at
// most 5 s; a transport error, a 409 or a 5xx retried, a Stripe error object never, a 429
// only as a lock_timeout; Stripe-Should-Retry obeyed; Retry-After never read; one
// Idempotency-Key per call, minted in memory; an 80 s timeout per attempt).
package stripeclient

import (
	"context"

	"github.com/stripe/stripe-go/v82"

	"github.com/idemproof/idemproof/clientcheck/outcome"
	"github.com/idemproof/idemproof/examples/sdk-clients/orders"
)

// Config is one run.
type Config struct {
	orders.Config
	// BaseURL is the API (client-check's proxy).
	BaseURL string
	// CallerKey sends a key the caller chose, derived from the order ("refund-" + its
	// id), instead of the one stripe-go mints per call: it survives a restart.
	CallerKey bool
}

// Run refunds the orders.
func Run(ctx context.Context, cfg Config) error {
	backend := stripe.GetBackendWithConfig(stripe.APIBackend, &stripe.BackendConfig{
		URL:           stripe.String(cfg.BaseURL),
		LeveledLogger: &stripe.LeveledLogger{Level: stripe.LevelNull},
	})
	sc := stripe.NewClient("sk_test_idemproof", stripe.WithBackends(&stripe.Backends{API: backend}))
	return orders.Each(ctx, cfg.Config, func(ctx context.Context, order string) outcome.Result {
		params := &stripe.RefundCreateParams{
			PaymentIntent: stripe.String("pi_idemproof"),
			Amount:        stripe.Int64(4900),
			Metadata:      map[string]string{"order_id": order},
		}
		key := ""
		if cfg.CallerKey {
			key = "refund-" + order
			params.IdempotencyKey = stripe.String(key)
		}
		_, err := sc.V1Refunds.Create(ctx, params)
		return outcome.Of(err).WithKey(key)
	})
}
