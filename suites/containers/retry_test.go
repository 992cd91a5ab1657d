package containers_test

import (
	"context"
	"math/rand/v2"
	"net/http"
	"time"
)

// retryPolicy is the correct client the storm and the outage scenarios model: the key is
// minted once per logical operation and re-sent unchanged; 409 (in flight), 429, every
// 5xx and every transport error are retried with capped, jittered exponential backoff.
// Retries are bounded in time, not in count, so a wedged key shows up as a failed
// operation, not a hang, and a slow machine never turns a correct server's outage into
// one: a count of fast failures is a time in disguise, and how long an outage lasts is
// the machine's speed (how fast Docker stops and starts a container under load).
type retryPolicy struct {
	// Budget is how long an operation keeps retrying. It must outlast every disruption
	// a scenario causes, each bounded by its own deadline: PostgreSQL's stop (10 s) and
	// readiness (60 s), a replica's start (60 s).
	Budget      time.Duration
	BaseBackoff time.Duration
	MaxBackoff  time.Duration
}

var defaultRetryPolicy = retryPolicy{Budget: 3 * time.Minute, BaseBackoff: 20 * time.Millisecond, MaxBackoff: time.Second}

// retryable says whether an attempt's outcome may be retried with the same key.
func retryable(a answer) bool {
	return a.Err != nil || a.Status == http.StatusConflict || a.Status == http.StatusTooManyRequests || a.Status >= 500
}

// opResult is one logical operation as its client saw it.
type opResult struct {
	Order    string
	Key      string
	Final    answer
	Attempts int
	Statuses map[int]int // status (0 = transport error) → attempts that got it
	Started  time.Time
	Latency  time.Duration
}

// OK reports that the client saw the operation succeed.
func (r opResult) OK() bool {
	return r.Final.Err == nil && r.Final.Status >= 200 && r.Final.Status < 300
}

// refund performs one logical refund for order through base, retrying per the policy.
func (p retryPolicy) refund(ctx context.Context, hc *http.Client, base func() string, order string) opResult {
	r := opResult{Order: order, Key: fresh("key"), Statuses: map[int]int{}}
	r.Started = time.Now()
	backoff := p.BaseBackoff
	for ctx.Err() == nil && (r.Attempts == 0 || time.Since(r.Started) < p.Budget) {
		r.Attempts++
		r.Final = postRefund(ctx, hc, base(), r.Key, order, nil)
		r.Statuses[r.Final.Status]++
		if !retryable(r.Final) {
			break
		}
		// Full jitter: concurrent clients that failed together do not retry together.
		wait := time.Duration(rand.Int64N(int64(backoff)) + 1)
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
		backoff = min(2*backoff, p.MaxBackoff)
	}
	r.Latency = time.Since(r.Started)
	return r
}
