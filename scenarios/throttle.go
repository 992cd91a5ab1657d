package scenarios

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"
)

// A request a rate limit refused (429, or what a throttled: rule recognises; for a ledger
// read also a 503 with Retry-After) that the
// harness makes for itself — a ledger read, entity_setup, the preflight's operation — is
// made again after the refusal's Retry-After, for at most ledgerThrottleBudget in all.
const (
	ledgerThrottleBudget  = 20 * time.Second
	ledgerThrottleWait    = 5 * time.Second // the longest single wait, whatever Retry-After asks
	ledgerThrottleDefault = time.Second     // without a Retry-After
)

// throttleWait is how long to wait before the next try: what Retry-After asked for (d,
// when ok), at most ledgerThrottleWait, plus a little jitter so parallel scenarios do not
// come back together.
func throttleWait(d time.Duration, ok bool) time.Duration {
	if !ok {
		d = ledgerThrottleDefault
	}
	return min(d, ledgerThrottleWait) + rand.N(250*time.Millisecond)
}

// sleepCtx waits d, or until ctx ends (false).
func sleepCtx(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

// stillThrottled is the error of a request the rate limit refused for the whole budget.
func stillThrottled(err error) error {
	return fmt.Errorf("%w: still refused by a rate limit or an overload after %s of waiting it out; lower --concurrency, or raise the target's rate limit for the harness", err, ledgerThrottleBudget)
}
