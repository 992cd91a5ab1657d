// Package retrypolicy holds example retry loops for a keyed call, one correct harness,
// the retryhttp policy, and the classic bugs, each a clientcheck.ClientFunc. The suite in
// this folder runs every one under client-check, against the embedded reference server
// and against a differently shaped API described by a profile: the correct ones must pass
// and every bad one must be caught with its named finding. They double as documentation:
// each bad client differs from the correct loop by one option.
//
// Every client performs Orders operations (entities order-1 … order-N): the operation
// the environment names (env.OperationMethod, env.OperationURL, env.OperationBody with
// {{.Entity}} filled in, the key in env.KeyHeader or at env.KeyField), and writes its
// view of each to env.OutcomeFile.
package retrypolicy

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/idemproof/idemproof/clientcheck"
	"github.com/idemproof/idemproof/retryhttp"
)

// Orders is how many logical operations each example client performs.
const Orders = 3

// AttemptTimeout bounds one attempt; the default fault schedule holds a response far
// longer, so the client must give up and retry.
const AttemptTimeout = 500 * time.Millisecond

// maxAttempts bounds each operation's attempts.
const maxAttempts = 5

// loop is the retry loop every hand-written client shares; its options are the bugs.
type loop struct {
	// keyFor returns the key of one attempt ("" = send none). The correct client returns
	// the same key, minted before the first attempt, for every attempt.
	keyFor func(order string, attempt int) string
	// retryAnyFailure retries every non-2xx, 422 included (bug).
	retryAnyFailure bool
	// ignoreRetryAfter retries a 409 at once (bug).
	ignoreRetryAfter bool
}

// CorrectHarness is the contract done right: the key comes from the call's own id
// (here the harness's id for the tool call), minted once before the first attempt and
// re-sent on every retry; 5xx, resets and timeouts are retried, 409 after Retry-After,
// 422 never; running out of attempts is "unknown".
func CorrectHarness(ctx context.Context, env clientcheck.Env) error {
	run := runID()
	return loop{keyFor: func(order string, _ int) string { return "refund-" + run + "-" + order }}.run(ctx, env)
}

// KeyInsideRetryClosure mints a fresh key inside the retry closure: every retry is a
// new operation for the server. Caught as client/key-per-attempt.
func KeyInsideRetryClosure(ctx context.Context, env clientcheck.Env) error {
	return loop{keyFor: func(string, int) string { return "refund-" + runID() }}.run(ctx, env)
}

// KeyFromTimestamp derives the key from the time the harness took its turn, to the
// second: minted once per operation, it looks right, but every operation started in the
// same second shares it, so the second refund is answered 422 (or the first one's
// replay) and never happens. Caught as client/key-shared-by-operations. now is the
// harness's clock (the suite freezes it so the collision is certain).
func KeyFromTimestamp(now func() time.Time) clientcheck.ClientFunc {
	return func(ctx context.Context, env clientcheck.Env) error {
		keys := map[string]string{}
		return loop{keyFor: func(order string, _ int) string {
			if _, ok := keys[order]; !ok {
				keys[order] = "refund-" + strconv.FormatInt(now().Unix(), 10)
			}
			return keys[order]
		}}.run(ctx, env)
	}
}

// NoKey sends the keyed operation without a key. Caught as client/no-key.
func NoKey(ctx context.Context, env clientcheck.Env) error {
	return loop{keyFor: func(string, int) string { return "" }}.run(ctx, env)
}

// Retries422 treats every failure as retryable and re-sends a 422 unchanged. Caught as
// client/422-retried (under a schedule that answers 422).
func Retries422(ctx context.Context, env clientcheck.Env) error {
	run := runID()
	return loop{keyFor: func(order string, _ int) string { return "refund-" + run + "-" + order }, retryAnyFailure: true}.run(ctx, env)
}

// Ignores409RetryAfter retries a 409 at once instead of waiting its Retry-After. Caught
// as client/409-hammered (under a schedule that answers 409).
func Ignores409RetryAfter(ctx context.Context, env clientcheck.Env) error {
	run := runID()
	return loop{keyFor: func(order string, _ int) string { return "refund-" + run + "-" + order }, ignoreRetryAfter: true}.run(ctx, env)
}

// RetryHTTP uses the retryhttp package: the key is the operation's own, Do re-sends it
// on every retry and reports an unknown outcome as such.
func RetryHTTP(ctx context.Context, env clientcheck.Env) error {
	run := runID()
	client := &retryhttp.Client{
		HTTPClient:  &http.Client{Timeout: AttemptTimeout},
		KeyHeader:   env.KeyHeader,
		MaxAttempts: maxAttempts,
		Backoff:     retryhttp.HonourRetryAfter(retryhttp.Exponential(20*time.Millisecond, time.Second), 5*time.Second),
	}
	out := clientcheck.NewOutcomeWriter(env.OutcomeFile)
	for i := 1; i <= Orders; i++ {
		order := fmt.Sprintf("order-%d", i)
		resp, err := client.Do(ctx, retryhttp.Operation{
			Method: env.OperationMethod,
			URL:    fill(env.OperationURL, order),
			Header: http.Header{"Content-Type": {"application/json"}},
			Body:   []byte(fill(env.OperationBody, order)),
			Key:    "refund-" + run + "-" + order,
		})
		outcome := clientcheck.Outcome{Operation: order}
		switch {
		case errors.Is(err, retryhttp.ErrUnknownOutcome):
			outcome.Outcome = clientcheck.OutcomeUnknown
		case err != nil:
			return fmt.Errorf("refund %s: %w", order, err)
		default:
			resp.Body.Close()
			outcome.Status = resp.StatusCode
			outcome.Outcome = clientcheck.OutcomeFailed
			if resp.StatusCode < 300 {
				outcome.Outcome = clientcheck.OutcomeOK
			}
		}
		if err := out.Write(outcome); err != nil {
			return err
		}
	}
	return nil
}

func (l loop) run(ctx context.Context, env clientcheck.Env) error {
	client := &http.Client{Timeout: AttemptTimeout}
	out := clientcheck.NewOutcomeWriter(env.OutcomeFile)
	for i := 1; i <= Orders; i++ {
		order := fmt.Sprintf("order-%d", i)
		outcome := clientcheck.Outcome{Operation: order, Outcome: clientcheck.OutcomeUnknown}
	attempts:
		for attempt := 1; attempt <= maxAttempts; attempt++ {
			key := l.keyFor(order, attempt)
			status, retryAfter, err := post(ctx, client, env, order, key)
			if ctx.Err() != nil {
				return ctx.Err()
			}
			outcome.Key, outcome.Status = key, status
			wait := 20 * time.Millisecond
			switch {
			case err != nil || status >= 500:
				// unknown: the refund may have committed; retry (with the same key)
			case status < 300:
				outcome.Outcome = clientcheck.OutcomeOK
				break attempts
			case status == http.StatusConflict || status == http.StatusTooManyRequests:
				if !l.ignoreRetryAfter {
					wait = max(retryAfter, 100*time.Millisecond)
				}
			case !l.retryAnyFailure:
				outcome.Outcome = clientcheck.OutcomeFailed
				break attempts
			}
			if err := sleep(ctx, wait); err != nil {
				return err
			}
		}
		if err := out.Write(outcome); err != nil {
			return err
		}
	}
	return nil
}

// post sends one attempt and returns its status and Retry-After; a transport error
// (reset, timeout) leaves status 0.
func post(ctx context.Context, client *http.Client, env clientcheck.Env, order, key string) (int, time.Duration, error) {
	body := fill(env.OperationBody, order)
	if key != "" && env.KeyField != "" {
		var err error
		if body, err = withField(body, env.KeyField, key); err != nil {
			return 0, 0, err
		}
	}
	req, err := http.NewRequestWithContext(ctx, env.OperationMethod, fill(env.OperationURL, order), strings.NewReader(body))
	if err != nil {
		return 0, 0, fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" && env.KeyHeader != "" {
		req.Header.Set(env.KeyHeader, key)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	retryAfter, _ := retryhttp.RetryAfter(resp, time.Now())
	return resp.StatusCode, retryAfter, nil
}

// fill puts the operation's entity where the profile's template says {{.Entity}}.
func fill(template, entity string) string {
	return strings.ReplaceAll(template, "{{.Entity}}", entity)
}

// withField sets a dotted path of a JSON object body to value (the key, for APIs that
// carry it in the body), creating the objects on the way.
func withField(body, path, value string) (string, error) {
	var doc map[string]any
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		return "", fmt.Errorf("the operation body is not a JSON object: %w", err)
	}
	parts := strings.Split(path, ".")
	node := doc
	for _, p := range parts[:len(parts)-1] {
		next, ok := node[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			node[p] = next
		}
		node = next
	}
	node[parts[len(parts)-1]] = value
	b, err := json.Marshal(doc)
	return string(b), err
}

// runID is a fresh random id, so two runs never share keys inside a retention window.
func runID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func sleep(ctx context.Context, d time.Duration) error {
	return retryhttp.SleepContext(ctx, d)
}
