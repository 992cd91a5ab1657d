package retryhttp_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/retryhttp"
)

// fakeAPI answers each attempt with the next scripted status (0 = drop the connection)
// and records the key and body of every attempt.
type fakeAPI struct {
	mu       sync.Mutex
	script   []int
	header   http.Header // extra response headers
	keys     []string
	bodies   []string
	attempts int
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.keys = append(f.keys, r.Header.Get("Idempotency-Key"))
	f.bodies = append(f.bodies, string(body))
	status := 201
	if f.attempts < len(f.script) {
		status = f.script[f.attempts]
	}
	f.attempts++
	f.mu.Unlock()
	if status == 0 {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
		return
	}
	for k, v := range f.header {
		w.Header()[k] = v
	}
	w.WriteHeader(status)
	_, _ = io.WriteString(w, `{"status":"done"}`)
}

// seen returns the attempts so far and their keys and bodies, under the lock: the race
// detector does not see the network as a happens-before edge.
func (f *fakeAPI) seen() (attempts int, keys, bodies []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.attempts, append([]string(nil), f.keys...), append([]string(nil), f.bodies...)
}

// recordedSleeps is an injected SleepFunc: it records the waits and never sleeps.
type recordedSleeps struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (s *recordedSleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.waits = append(s.waits, d)
	s.mu.Unlock()
	return ctx.Err()
}

func newClient(t *testing.T, api *fakeAPI) (*retryhttp.Client, *recordedSleeps, string) {
	t.Helper()
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	sleeps := &recordedSleeps{}
	keys := 0
	// A fresh connection per attempt: Go's Transport silently re-sends a keyed request
	// whose reused connection broke, which would hide the scripted drops from the count.
	httpClient := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	return &retryhttp.Client{
		HTTPClient: httpClient,
		Sleep:      sleeps.sleep,
		NewKey: func() (string, error) {
			keys++
			return "minted-" + string(rune('0'+keys)), nil
		},
	}, sleeps, srv.URL
}

func refund(url string) retryhttp.Operation {
	return retryhttp.Operation{Method: "POST", URL: url + "/v1/refunds", Body: []byte(`{"order_id":"o-1","amount":4900}`)}
}

func TestKeyMintedOnceAndResentOnEveryRetry(t *testing.T) {
	api := &fakeAPI{script: []int{503, 0, 502, 201}}
	c, sleeps, url := newClient(t, api)
	resp, err := c.Do(context.Background(), refund(url))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, 201, resp.StatusCode)
	_, keys, bodies := api.seen()
	require.Equal(t, []string{"minted-1", "minted-1", "minted-1", "minted-1"}, keys)
	for _, b := range bodies {
		require.Equal(t, `{"order_id":"o-1","amount":4900}`, b)
	}
	require.Equal(t, []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond}, sleeps.waits)
	require.Equal(t, "minted-1", resp.Request.Header.Get("Idempotency-Key"))
}

func TestCallersOwnKeyIsUsedUnchanged(t *testing.T) {
	api := &fakeAPI{script: []int{503}}
	c, _, url := newClient(t, api)
	op := refund(url)
	op.Key = "refund-for-order-o-1"
	resp, err := c.Do(context.Background(), op)
	require.NoError(t, err)
	resp.Body.Close()
	_, keys, _ := api.seen()
	require.Equal(t, []string{"refund-for-order-o-1", "refund-for-order-o-1"}, keys)
}

// KeyInBody: the key is in the body the caller built, the same bytes on every attempt,
// and no header carries it; an operation without its key is refused before anything is
// sent.
func TestKeyInBodySendsNoHeader(t *testing.T) {
	api := &fakeAPI{script: []int{503, 0}}
	c, _, url := newClient(t, api)
	c.KeyInBody = true
	op := retryhttp.Operation{Method: "POST", URL: url + "/v1/payments", Key: "k-1", Body: []byte(`{"idempotency_key":"k-1","amount":4900}`)}
	resp, err := c.Do(context.Background(), op)
	require.NoError(t, err)
	resp.Body.Close()
	attempts, keys, bodies := api.seen()
	require.Equal(t, 3, attempts)
	require.Equal(t, []string{"", "", ""}, keys)
	for _, b := range bodies {
		require.Equal(t, `{"idempotency_key":"k-1","amount":4900}`, b)
	}

	op.Key = ""
	_, err = c.Do(context.Background(), op)
	require.ErrorContains(t, err, "KeyInBody needs the Operation's Key")
	attempts, _, _ = api.seen()
	require.Equal(t, 3, attempts, "nothing sent")
}

func TestUnprocessableIsNeverRetried(t *testing.T) {
	for _, status := range []int{400, 401, 404, 422, 501} {
		api := &fakeAPI{script: []int{status}}
		c, sleeps, url := newClient(t, api)
		resp, err := c.Do(context.Background(), refund(url))
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, status, resp.StatusCode)
		attempts, _, _ := api.seen()
		require.Equal(t, 1, attempts, "status %d", status)
		require.Empty(t, sleeps.waits)
	}
}

func TestConflictWaitsRetryAfter(t *testing.T) {
	api := &fakeAPI{script: []int{409, 409}, header: http.Header{"Retry-After": {"2"}}}
	c, sleeps, url := newClient(t, api)
	resp, err := c.Do(context.Background(), refund(url))
	require.NoError(t, err)
	resp.Body.Close()
	attempts, _, _ := api.seen()
	require.Equal(t, 3, attempts)
	require.Equal(t, []time.Duration{2 * time.Second, 2 * time.Second}, sleeps.waits)
}

func TestExhaustedRetriesAreAnUnknownOutcome(t *testing.T) {
	api := &fakeAPI{script: []int{0, 503, 0}}
	c, _, url := newClient(t, api)
	c.MaxAttempts = 3
	resp, err := c.Do(context.Background(), refund(url))
	require.Nil(t, resp)
	require.ErrorIs(t, err, retryhttp.ErrUnknownOutcome)
	var unknown *retryhttp.UnknownOutcomeError
	require.True(t, errors.As(err, &unknown))
	require.Equal(t, 3, unknown.Attempts)
	require.Equal(t, "minted-1", unknown.Key)
	attempts, _, _ := api.seen()
	require.Equal(t, 3, attempts)
}

func TestCancelledWhileWaitingIsUnknownNotFailed(t *testing.T) {
	api := &fakeAPI{script: []int{503}}
	c, _, url := newClient(t, api)
	ctx, cancel := context.WithCancel(context.Background())
	c.Sleep = func(context.Context, time.Duration) error { cancel(); return context.Canceled }
	_, err := c.Do(ctx, refund(url))
	require.ErrorIs(t, err, retryhttp.ErrUnknownOutcome)
	require.ErrorIs(t, err, context.Canceled)
	attempts, _, _ := api.seen()
	require.Equal(t, 1, attempts)
}

func TestInvalidRequestSendsNothing(t *testing.T) {
	c := &retryhttp.Client{}
	_, err := c.Do(context.Background(), retryhttp.Operation{Method: "POST", URL: "://no-scheme"})
	require.ErrorContains(t, err, "build request")
	require.NotErrorIs(t, err, retryhttp.ErrUnknownOutcome)
}

func TestDefaultCheckRetry(t *testing.T) {
	ctx := context.Background()
	for status, want := range map[int]bool{200: false, 201: false, 400: false, 409: true, 422: false, 429: true, 500: true, 501: false, 502: true, 503: true, 504: true} {
		got, err := retryhttp.DefaultCheckRetry(ctx, &http.Response{StatusCode: status}, nil)
		require.NoError(t, err)
		require.Equal(t, want, got, "status %d", status)
	}
	got, err := retryhttp.DefaultCheckRetry(ctx, nil, errors.New("connection reset by peer"))
	require.NoError(t, err)
	require.True(t, got)
}

func TestExponentialIsCapped(t *testing.T) {
	b := retryhttp.Exponential(100*time.Millisecond, time.Second)
	var got []time.Duration
	for a := 1; a <= 6; a++ {
		got = append(got, b(a, nil))
	}
	require.Equal(t, []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond,
		800 * time.Millisecond, time.Second, time.Second}, got)
}

func TestRetryAfterForms(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	resp := &http.Response{Header: http.Header{"Retry-After": {"3"}}}
	d, ok := retryhttp.RetryAfter(resp, now)
	require.True(t, ok)
	require.Equal(t, 3*time.Second, d)

	resp.Header.Set("Retry-After", now.Add(7*time.Second).Format(http.TimeFormat))
	d, ok = retryhttp.RetryAfter(resp, now)
	require.True(t, ok)
	require.Equal(t, 7*time.Second, d)

	resp.Header.Set("Retry-After", "soon")
	_, ok = retryhttp.RetryAfter(resp, now)
	require.False(t, ok)
}

func TestHonourRetryAfterIsCapped(t *testing.T) {
	b := retryhttp.HonourRetryAfter(retryhttp.Exponential(time.Millisecond, time.Second), 10*time.Second)
	resp := &http.Response{Header: http.Header{"Retry-After": {"3600"}}}
	require.Equal(t, 10*time.Second, b(1, resp))
}

func TestRandomKeysDiffer(t *testing.T) {
	a, err := retryhttp.RandomKey()
	require.NoError(t, err)
	b, err := retryhttp.RandomKey()
	require.NoError(t, err)
	require.Len(t, a, 32)
	require.NotEqual(t, a, b)
}
