package retryhttp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// DefaultKeyHeader is the header the key travels in.
const DefaultKeyHeader = "Idempotency-Key"

// DefaultMaxAttempts bounds the attempts of one operation, the first included.
const DefaultMaxAttempts = 5

// Client runs keyed operations with retries. The zero value is usable: every nil or zero
// field takes its documented default. A Client is safe for concurrent use if its
// policies are.
type Client struct {
	// HTTPClient sends each attempt; nil means a client with a 10s Timeout. Its Timeout
	// bounds one attempt (a held response becomes a transport error, then a retry).
	HTTPClient *http.Client
	// KeyHeader is the header carrying the key; "" means DefaultKeyHeader.
	KeyHeader string
	// KeyInBody: the key travels in the Operation's Body, where the caller put it (an
	// API that reads it from a JSON member); no key header is set, and an Operation
	// must carry its Key (one minted here could not reach the body).
	KeyInBody bool
	// NewKey mints a key for an Operation without one; nil means RandomKey.
	NewKey KeyFunc
	// CheckRetry decides whether to retry; nil means DefaultCheckRetry.
	CheckRetry CheckRetry
	// Backoff decides how long to wait; nil means DefaultBackoff.
	Backoff Backoff
	// MaxAttempts bounds the attempts; 0 means DefaultMaxAttempts.
	MaxAttempts int
	// Sleep waits between attempts; nil means SleepContext.
	Sleep SleepFunc
}

// Operation is one logical operation: the same method, URL, headers and body bytes go
// out on every attempt.
type Operation struct {
	Method string
	URL    string
	Header http.Header
	Body   []byte
	// Key is the operation's idempotency key; "" means Do mints one with NewKey before
	// the first attempt. Set it to persist the key across process restarts (derive it
	// from the caller's own id for the operation, never from time or an attempt count).
	Key string
}

// ErrUnknownOutcome marks an operation that may or may not have happened.
var ErrUnknownOutcome = errors.New("outcome unknown")

// UnknownOutcomeError is returned when no attempt gave a definite answer and at least one
// may have reached the server. Retry later with the same Key.
type UnknownOutcomeError struct {
	Key      string
	Attempts int
	// LastStatus is the last attempt's status (0 after a transport error); Err is the last
	// transport or context error, if any.
	LastStatus int
	Err        error
}

func (e *UnknownOutcomeError) Error() string {
	last := fmt.Sprintf("last status %d", e.LastStatus)
	if e.Err != nil {
		last = e.Err.Error()
	}
	return fmt.Sprintf("outcome unknown after %d attempt(s) with key %s: %s", e.Attempts, e.Key, last)
}

// Is makes errors.Is(err, ErrUnknownOutcome) hold.
func (e *UnknownOutcomeError) Is(target error) bool { return target == ErrUnknownOutcome }

// Unwrap exposes the last error (e.g. context.DeadlineExceeded).
func (e *UnknownOutcomeError) Unwrap() error { return e.Err }

// Do runs op until a definite answer: it returns the response of the last attempt when
// CheckRetry says not to retry (2xx, or a 4xx such as 422: inspect StatusCode), with
// the body open for the caller to read and close. Every attempt carries the same key
// (resp.Request.Header holds it). See UnknownOutcomeError for the other outcome.
func (c *Client) Do(ctx context.Context, op Operation) (*http.Response, error) {
	key := op.Key
	if key == "" && c.KeyInBody {
		return nil, errors.New("retryhttp: KeyInBody needs the Operation's Key, the one its Body carries")
	}
	if key == "" {
		var err error
		if key, err = c.newKey()(); err != nil {
			return nil, err
		}
	}
	maxAttempts := c.MaxAttempts
	if maxAttempts <= 0 {
		maxAttempts = DefaultMaxAttempts
	}
	unknown := &UnknownOutcomeError{Key: key}
	for attempt := 1; ; attempt++ {
		req, err := c.request(ctx, op, key)
		if err != nil {
			return nil, err // nothing was sent
		}
		resp, sendErr := c.httpClient().Do(req)
		unknown.Attempts, unknown.Err, unknown.LastStatus = attempt, sendErr, 0
		if resp != nil {
			unknown.LastStatus = resp.StatusCode
		}
		retry, stop := c.checkRetry()(ctx, resp, sendErr)
		if stop != nil {
			discard(resp)
			unknown.Err = stop
			return nil, unknown
		}
		if !retry {
			if sendErr != nil {
				return nil, unknown // a transport error the policy chose not to retry
			}
			return resp, nil
		}
		if attempt >= maxAttempts {
			discard(resp)
			return nil, unknown
		}
		wait := c.backoff()(attempt, resp)
		discard(resp)
		if err := c.sleep()(ctx, wait); err != nil {
			unknown.Err = err
			return nil, unknown
		}
	}
}

// request builds one attempt: a fresh body reader over the same bytes, the same key.
func (c *Client) request(ctx context.Context, op Operation, key string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, op.Method, op.URL, bytes.NewReader(op.Body))
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	for name, values := range op.Header {
		req.Header[name] = append([]string(nil), values...)
	}
	if !c.KeyInBody {
		req.Header.Set(c.keyHeader(), key)
	}
	return req, nil
}

// discard drains a bounded amount of a body we will not use so the connection can be
// reused, then closes it.
func discard(resp *http.Response) {
	if resp == nil {
		return
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}

var defaultHTTPClient = &http.Client{Timeout: 10 * time.Second}

func (c *Client) httpClient() *http.Client {
	if c.HTTPClient != nil {
		return c.HTTPClient
	}
	return defaultHTTPClient
}

func (c *Client) keyHeader() string {
	if c.KeyHeader != "" {
		return c.KeyHeader
	}
	return DefaultKeyHeader
}

func (c *Client) newKey() KeyFunc {
	if c.NewKey != nil {
		return c.NewKey
	}
	return RandomKey
}

func (c *Client) checkRetry() CheckRetry {
	if c.CheckRetry != nil {
		return c.CheckRetry
	}
	return DefaultCheckRetry
}

func (c *Client) backoff() Backoff {
	if c.Backoff != nil {
		return c.Backoff
	}
	return DefaultBackoff
}

func (c *Client) sleep() SleepFunc {
	if c.Sleep != nil {
		return c.Sleep
	}
	return SleepContext
}
