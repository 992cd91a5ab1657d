// Package openaiclient refunds orders through openai-go v3's generic client (Post on a
// path of its base URL) at its default retry settings (what its source does,
// internal/requestconfig: up to 2 retries, 0.5 s × 2ⁿ with jitter, at most 8 s; a
// transport error, 408, 409, 429 and 5xx retried; x-should-retry obeyed; Retry-After-Ms,
// then Retry-After in seconds or as an HTTP date, honoured up to 2 minutes, a longer one
// ending the retries; no idempotency key; no per-attempt timeout, only a 10-minute wait
// for response headers).
package openaiclient

import (
	"context"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/idemproof/idemproof/clientcheck/outcome"
	"github.com/idemproof/idemproof/examples/sdk-clients/orders"
)

// Run refunds the orders.
func Run(ctx context.Context, cfg orders.Client) error {
	client := openai.NewClient(option.WithBaseURL(cfg.BaseURL+"/"), option.WithAPIKey("sk-idemproof"))
	return orders.Each(ctx, cfg.Config, func(ctx context.Context, order string) outcome.Result {
		var opts []option.RequestOption
		key := cfg.CallerKeyOf(order)
		if key != "" {
			opts = append(opts, option.WithHeader("Idempotency-Key", key)) // on every attempt
		}
		var refund map[string]any
		err := client.Post(ctx, "v1/refunds", map[string]any{"order_id": order, "amount": 4900}, &refund, opts...)
		return outcome.Of(err).WithKey(key)
	})
}
