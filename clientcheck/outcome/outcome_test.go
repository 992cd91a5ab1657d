package outcome_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/clientcheck/outcome"
)

// stripeShaped is an SDK's typed error carrying the status as a field (stripe-go's
// *stripe.Error: HTTPStatusCode; openai-go's *apierror.Error: StatusCode).
type stripeShaped struct {
	HTTPStatusCode int
	Msg            string
}

func (e *stripeShaped) Error() string { return e.Msg }

type openaiShaped struct{ StatusCode int }

func (e *openaiShaped) Error() string { return fmt.Sprintf("POST /v1/refunds: %d", e.StatusCode) }

type methodShaped struct{ code int }

func (e methodShaped) Error() string   { return "api error" }
func (e methodShaped) StatusCode() int { return e.code }

func TestOfReadsTheCommonErrorShapes(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		err    error
		want   string
		status int
	}{
		"nil":                           {nil, outcome.OutcomeOK, 0},
		"a 422 in a typed field":        {&stripeShaped{HTTPStatusCode: 422}, outcome.OutcomeFailed, 422},
		"a 400 in another typed field":  {&openaiShaped{StatusCode: 400}, outcome.OutcomeFailed, 400},
		"a 402 by a method, wrapped":    {fmt.Errorf("refund: %w", methodShaped{402}), outcome.OutcomeFailed, 402},
		"a 503 may have committed":      {&stripeShaped{HTTPStatusCode: 503}, outcome.OutcomeUnknown, 503},
		"a 409 in flight may commit":    {&openaiShaped{StatusCode: 409}, outcome.OutcomeUnknown, 409},
		"a 429 after earlier attempts":  {&openaiShaped{StatusCode: 429}, outcome.OutcomeUnknown, 429},
		"a 408 timed out":               {&openaiShaped{StatusCode: 408}, outcome.OutcomeUnknown, 408},
		"a deadline":                    {context.DeadlineExceeded, outcome.OutcomeUnknown, 0},
		"a reset, as *url.Error":        {&url.Error{Op: "Post", URL: "http://x", Err: &net.OpError{Op: "read", Err: errors.New("connection reset by peer")}}, outcome.OutcomeUnknown, 0},
		"the status only in the text":   {errors.New("POST http://x/v1/refunds giving up after 3 attempt(s): unexpected HTTP status 422 Unprocessable Entity"), outcome.OutcomeFailed, 422},
		"a 5xx only in the text":        {errors.New("unexpected HTTP status 503 Service Unavailable"), outcome.OutcomeUnknown, 503},
		"two statuses in the text":      {errors.New("status 422 after status 503"), outcome.OutcomeUnknown, 0},
		"a number that is no status":    {errors.New("giving up after 404 attempts"), outcome.OutcomeUnknown, 0},
		"anything else is never failed": {errors.New("boom"), outcome.OutcomeUnknown, 0},
	} {
		got := outcome.Of(tc.err)
		require.Equal(t, tc.want, got.Outcome, name)
		require.Equal(t, tc.status, got.Status, name)
		if tc.err != nil && tc.want == outcome.OutcomeUnknown {
			require.ErrorIs(t, got.Err, tc.err, name)
		}
	}
}

func TestOfResponse(t *testing.T) {
	t.Parallel()
	require.Equal(t, outcome.Succeeded(), outcome.OfResponse(&http.Response{StatusCode: 201}, nil))
	require.Equal(t, outcome.Failed(422), outcome.OfResponse(&http.Response{StatusCode: 422}, nil))
	got := outcome.OfResponse(&http.Response{StatusCode: 503}, nil)
	require.Equal(t, outcome.OutcomeUnknown, got.Outcome)
	require.Equal(t, 503, got.Status)
	// go-retryablehttp gives up with a nil response and an error.
	got = outcome.OfResponse(nil, errors.New("POST http://x giving up after 5 attempt(s)"))
	require.Equal(t, outcome.OutcomeUnknown, got.Outcome)
	require.Equal(t, outcome.OutcomeUnknown, outcome.OfResponse(nil, nil).Outcome)
}

// Three lines around an SDK call, and a file client-check reads.
func TestRecorderWritesTheOutcomeFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "outcomes.jsonl")
	rec := outcome.NewRecorder(path)
	require.NoError(t, rec.Record("order-1", outcome.Succeeded().WithKey("k-1")))
	require.NoError(t, rec.Record("order-2", outcome.Of(&stripeShaped{HTTPStatusCode: 422})))
	require.NoError(t, rec.Record("order-3", outcome.Of(fmt.Errorf("refund: %w", context.DeadlineExceeded))))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, `{"operation":"order-1","outcome":"ok","key":"k-1"}
{"operation":"order-2","outcome":"failed","status":422}
{"operation":"order-3","outcome":"unknown","note":"refund: context deadline exceeded"}
`, string(b))
	lines, written, err := outcome.ReadFile(path)
	require.NoError(t, err)
	require.True(t, written)
	require.Len(t, lines, 3)

	// Outside client-check (no file named) recording is a no-op.
	require.NoError(t, outcome.NewRecorder("").Record("order-1", outcome.Succeeded()))
	require.ErrorContains(t, rec.Record("", outcome.Succeeded()), "operation")
}

func TestParseSaysWhatToFix(t *testing.T) {
	t.Parallel()
	for line, want := range map[string]string{
		`{"operation":"o","outcome":"maybe"}`:    `outcome "maybe": use "ok", "failed" or "unknown"`,
		`{"operation":"","outcome":"ok"}`:        `"operation" is empty`,
		`{"operation":"o","outcome":"ok","x":1}`: `unknown field "x"`,
		`{"operation":"o","outcome":"ok"} {}`:    `more after the JSON object`,
	} {
		_, err := outcome.Parse(strings.NewReader("\n" + line + "\n"))
		require.ErrorContains(t, err, "line 2", line)
		require.ErrorContains(t, err, want, line)
	}
}
