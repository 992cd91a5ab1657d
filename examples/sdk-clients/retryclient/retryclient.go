// Package retryclient refunds orders with hashicorp/go-retryablehttp v0.7.8 at its
// default retry settings (what its source does, client.go: up to 4 retries, 1 s × 2ⁿ up
// to 30 s; a transport error, a 429 and a 5xx but 501 retried, a 409 not; Retry-After in
// seconds or as an HTTP date honoured on a 429 and a 503 only, at any length; no
// idempotency key, the caller's headers re-sent as set; no per-attempt timeout).
package retryclient

import (
	"bytes"
	"context"
	"encoding/json"
	"io"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/idemproof/idemproof/clientcheck/outcome"
	"github.com/idemproof/idemproof/examples/sdk-clients/orders"
)

// Run refunds the orders.
func Run(ctx context.Context, cfg orders.Client) error {
	client := retryablehttp.NewClient()
	client.Logger = nil
	return orders.Each(ctx, cfg.Config, func(ctx context.Context, order string) outcome.Result {
		body, _ := json.Marshal(map[string]any{"order_id": order, "amount": 4900})
		req, err := retryablehttp.NewRequestWithContext(ctx, "POST", cfg.BaseURL+"/v1/refunds", bytes.NewReader(body))
		if err != nil {
			return outcome.Unknown(err)
		}
		req.Header.Set("Content-Type", "application/json")
		key := cfg.CallerKeyOf(order)
		if key != "" {
			req.Header.Set("Idempotency-Key", key) // every retry re-sends the request's headers
		}
		resp, err := client.Do(req)
		if resp != nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		return outcome.OfResponse(resp, err).WithKey(key)
	})
}
