package transport

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// LedgerStatusError is a ledger read the target answered with a status other than 2xx.
// RetryAfter is its Retry-After (delta-seconds or an HTTP-date), HasRetryAfter whether
// it had a valid one, so a caller can wait out a rate limit before reading again.
type LedgerStatusError struct {
	Method, URI   string
	Status        int
	RetryAfter    time.Duration
	HasRetryAfter bool
	// Body is the start of the answer, one line, for the error: what the target said.
	Body string
	// RateLimited: the profile's outcome rules call the answer throttled (an API whose
	// rate limit answers 400 ThrottlingException, as AWS's JSON protocol does).
	RateLimited bool
}

func (e *LedgerStatusError) Error() string {
	msg := fmt.Sprintf("read ledger: %s %s answered %d", e.Method, e.URI, e.Status)
	if e.RateLimited && e.Status != http.StatusTooManyRequests {
		msg += " (a rate limit's refusal, by the profile's throttled: rule)"
	}
	if e.Body != "" {
		msg += ": " + e.Body
	}
	return msg
}

// Throttled reports whether a rate limit refused the read (429, or an answer the
// profile's throttled: rule recognises), or an overloaded server or gateway named when to
// come back (503 with Retry-After, RFC 9110 §15.6.4): nothing is wrong with it but the
// moment, so reading again later is the fix. A 503 without Retry-After names no moment
// and may be a ledger that is down: it is not waited out.
func (e *LedgerStatusError) Throttled() bool {
	return e.RateLimited || e.Status == http.StatusTooManyRequests || e.Status == http.StatusServiceUnavailable && e.HasRetryAfter
}

// Wait is how long the answer asked to wait before reading again (its Retry-After).
func (e *LedgerStatusError) Wait() (time.Duration, bool) { return e.RetryAfter, e.HasRetryAfter }

// ThrottledRead is a ledger read error a caller may wait out: a rate limit refused it.
// Wait is what the answer asked for, ok false when it named no time.
type ThrottledRead interface {
	error
	Throttled() bool
	Wait() (d time.Duration, ok bool)
}

// RateLimitedError is a ledger read answered with an error that the profile's outcome
// rules call throttled (over MCP: a JSON-RPC error such as a "too many requests" code).
type RateLimitedError struct {
	What, Detail string
}

func (e *RateLimitedError) Error() string {
	return fmt.Sprintf("read ledger: %s answered a rate limit's refusal: %s", e.What, e.Detail)
}

// Throttled is always true: the rules said so.
func (e *RateLimitedError) Throttled() bool { return true }

// Wait names no time: a JSON-RPC error has no Retry-After.
func (e *RateLimitedError) Wait() (time.Duration, bool) { return 0, false }

// RetryAfter reads a Retry-After value relative to now (RFC 9110 §10.2.3); ok is false
// when there is none or it does not parse.
func RetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}
