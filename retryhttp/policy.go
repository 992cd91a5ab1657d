package retryhttp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"time"
)

// CheckRetry decides, after one attempt, whether to try again. resp is nil when err is
// a transport error. Returning a non-nil error stops the retries and Do returns that
// error (wrapped as unknown when an attempt may have reached the server). It must not
// read or close resp.Body.
type CheckRetry func(ctx context.Context, resp *http.Response, err error) (bool, error)

// Backoff returns how long to wait before the next attempt, given the number of the
// attempt that just failed (1-based) and its response (nil after a transport error).
type Backoff func(attempt int, resp *http.Response) time.Duration

// KeyFunc mints the idempotency key of one logical operation. Do calls it once, before
// the first attempt, and only when the Operation has no key of its own.
type KeyFunc func() (string, error)

// SleepFunc waits d or until ctx ends, returning ctx.Err() in that case. Tests inject
// one that records the waits instead of sleeping.
type SleepFunc func(ctx context.Context, d time.Duration) error

// DefaultCheckRetry retries transport errors, 409 (a request with this key is in
// flight), 429 and 5xx except 501; it never retries 422 or another 4xx, and stops when
// the context is done.
func DefaultCheckRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return false, ctxErr
	}
	if err != nil {
		return true, nil
	}
	switch s := resp.StatusCode; {
	case s == http.StatusConflict, s == http.StatusTooManyRequests:
		return true, nil
	case s == http.StatusNotImplemented:
		return false, nil
	case s >= 500:
		return true, nil
	}
	return false, nil
}

// Default backoff bounds: exponential from DefaultMinWait, doubled per attempt, capped at
// DefaultMaxWait; a Retry-After is honoured up to DefaultMaxRetryAfter.
const (
	DefaultMinWait       = 100 * time.Millisecond
	DefaultMaxWait       = 5 * time.Second
	DefaultMaxRetryAfter = 60 * time.Second
)

// DefaultBackoff is Exponential(DefaultMinWait, DefaultMaxWait) that honours Retry-After.
var DefaultBackoff = HonourRetryAfter(Exponential(DefaultMinWait, DefaultMaxWait), DefaultMaxRetryAfter)

// Exponential waits min after the first attempt, doubling per attempt, never more than max.
func Exponential(min, max time.Duration) Backoff {
	return func(attempt int, _ *http.Response) time.Duration {
		d := min
		for i := 1; i < attempt && d < max; i++ {
			d *= 2
		}
		return clamp(d, min, max)
	}
}

// HonourRetryAfter waits at least the response's Retry-After (delta-seconds or an HTTP
// date), capped at limit so a hostile header cannot park the client; otherwise base.
func HonourRetryAfter(base Backoff, limit time.Duration) Backoff {
	return func(attempt int, resp *http.Response) time.Duration {
		d := base(attempt, resp)
		if ra, ok := RetryAfter(resp, time.Now()); ok && ra > d {
			d = min(ra, limit)
		}
		return d
	}
}

// RetryAfter parses the response's Retry-After header relative to now.
func RetryAfter(resp *http.Response, now time.Time) (time.Duration, bool) {
	if resp == nil {
		return 0, false
	}
	v := resp.Header.Get("Retry-After")
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.Atoi(v); err == nil && secs >= 0 {
		return time.Duration(secs) * time.Second, true
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(at.Sub(now), 0), true
	}
	return 0, false
}

// RandomKey mints a 128-bit random key in hex: unique per operation, not derived from
// time or position, so neither a restart nor two operations in the same instant share one.
func RandomKey() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", errors.New("mint idempotency key: " + err.Error())
	}
	return hex.EncodeToString(b[:]), nil
}

// SleepContext is the real SleepFunc.
func SleepContext(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func clamp(d, lo, hi time.Duration) time.Duration {
	return min(max(d, lo), hi)
}
