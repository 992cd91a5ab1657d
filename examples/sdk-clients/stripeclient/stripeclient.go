// Package stripeclient refunds orders with stripe-go v82 at its default retry settings.
// What its source does (stripe.go, shouldRetry and sleepTime; error.go, canRetry): up to
// 2 retries, 500 ms × (1 + n²) with jitter, at most 5 s; a transport error and any error
// answer whose body is no Stripe error object (a gateway's 503) are retried, a Stripe
// error object never, whatever its status, but a 429 lock_timeout; Stripe-Should-Retry is
// read only for an answer that is no error, so it decides no retry of an error status;
// Retry-After is never read; one Idempotency-Key per call, minted in memory and re-sent
// on the call's retries; an 80 s timeout per attempt.
package stripeclient

import (
	"context"

	"github.com/stripe/stripe-go/v82"

	"github.com/idemproof/idemproof/clientcheck/outcome"
	"github.com/idemproof/idemproof/examples/sdk-clients/orders"
)

// Run refunds the orders.
func Run(ctx context.Context, cfg orders.Client) error {
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
		key := cfg.CallerKeyOf(order)
		if key != "" {
			params.IdempotencyKey = stripe.String(key) // else stripe-go mints one per call
		}
		_, err := sc.V1Refunds.Create(ctx, params)
		return outcome.Of(err).WithKey(key)
	})
}
