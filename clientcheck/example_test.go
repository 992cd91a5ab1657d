package clientcheck_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/idemproof/idemproof/clientcheck"
)

// A Go harness's retry loop under test: one key per refund, minted before the first
// attempt. Every first attempt gets a 503 after the refund committed; the retry with the
// same key gets the stored 201.
func ExampleRun() {
	harness := func(ctx context.Context, env clientcheck.Env) error {
		key := "refund-order-1" // the operation's own id: minted once
		for attempt := 1; attempt <= 3; attempt++ {
			req, err := http.NewRequestWithContext(ctx, "POST", env.BaseURL+"/v1/refunds",
				strings.NewReader(`{"order_id":"order-1","amount":4900}`))
			if err != nil {
				return err
			}
			req.Header.Set(env.KeyHeader, key)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				continue // unknown outcome: retry with the same key
			}
			resp.Body.Close()
			if resp.StatusCode < 500 {
				return nil
			}
		}
		return fmt.Errorf("refund order-1: outcome unknown")
	}

	res, err := clientcheck.Run(context.Background(), clientcheck.Config{FaultSpec: "503", Seed: 1}, harness)
	if err != nil {
		fmt.Println("harness:", err)
		return
	}
	fmt.Println("findings:", len(res.Findings()))
	fmt.Println("refunds of order-1:", res.Observation.Ledger["order-1"])
	fmt.Println("attempts:", len(res.Observation.Attempts))
	// Output:
	// findings: 0
	// refunds of order-1: 1
	// attempts: 2
}

// The code under test may be just a function of the proxy's base URL. Here every first
// attempt of a key is answered 409 with Retry-After: 1, and the loop honours it.
func ExampleRun_baseURL() {
	refund := func(baseURL string) error {
		for attempt := 1; attempt <= 3; attempt++ {
			req, err := http.NewRequest("POST", baseURL+"/v1/refunds", strings.NewReader(`{"order_id":"order-7","amount":4900}`))
			if err != nil {
				return err
			}
			req.Header.Set("Idempotency-Key", "refund-order-7")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return err
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusConflict {
				return nil
			}
			time.Sleep(time.Second) // its Retry-After
		}
		return fmt.Errorf("still in flight")
	}
	res, err := clientcheck.Run(context.Background(), clientcheck.Config{FaultSpec: "409=1"}, refund)
	if err != nil {
		fmt.Println("harness:", err)
		return
	}
	for _, a := range res.Attempts("order-7") {
		fmt.Println(a.Delivered, a.Class, a.RetryAfter)
	}
	fmt.Println("findings:", len(res.Findings()))
	// Output:
	// 409 in_flight 1s
	// 201 success 0s
	// findings: 0
}
