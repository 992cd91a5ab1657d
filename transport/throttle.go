package transport

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"
)

// A request a rate limit refused (429, or what a throttled: rule recognises; for a ledger
// read also a 503 with Retry-After) that the harness makes for itself — a ledger read,
// entity_setup, the preflight's operation — is made again after the refusal's
// Retry-After, for at most ThrottleBudget in all.
const (
	ThrottleBudget      = 20 * time.Second
	ThrottleMaxWait     = 5 * time.Second // the longest single wait, whatever Retry-After asks
	ThrottleDefaultWait = time.Second     // without a Retry-After
)

// ThrottleWait is how long to wait before the next try: what Retry-After asked for (d,
// when ok), at most ThrottleMaxWait, plus a little jitter so parallel scenarios do not
// come back together.
func ThrottleWait(d time.Duration, ok bool) time.Duration {
	if !ok {
		d = ThrottleDefaultWait
	}
	return min(d, ThrottleMaxWait) + rand.N(250*time.Millisecond)
}

// Sleep waits d, or until ctx ends (false).
func Sleep(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

// StillThrottled is the error of a request the rate limit refused for the whole budget.
func StillThrottled(err error) error {
	return fmt.Errorf("%w: still refused by a rate limit or an overload after %s of waiting it out; lower --concurrency, or raise the target's rate limit for the harness", err, ThrottleBudget)
}
