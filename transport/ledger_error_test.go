package transport

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestRetryAfterForms(t *testing.T) {
	now := time.Date(2026, 12, 2, 7, 0, 0, 0, time.UTC)
	for v, want := range map[string]time.Duration{
		"0": 0, "3": 3 * time.Second, " 10 ": 10 * time.Second,
		now.Add(5 * time.Second).Format(http.TimeFormat): 5 * time.Second,
		now.Add(-time.Hour).Format(http.TimeFormat):      0, // a date already past: now
	} {
		got, ok := RetryAfter(v, now)
		require.True(t, ok, v)
		require.Equal(t, want, got, v)
	}
	for _, v := range []string{"", "soon", "-1", "1.5"} {
		_, ok := RetryAfter(v, now)
		require.False(t, ok, v)
	}
	require.True(t, (&LedgerStatusError{Status: 429}).Throttled())
	require.False(t, (&LedgerStatusError{Status: 503}).Throttled(), "a 503 that names no time may be a ledger that is down")
	require.True(t, (&LedgerStatusError{Status: 503, RetryAfter: time.Second, HasRetryAfter: true}).Throttled(), "an overloaded server that says when to come back")
	require.False(t, (&LedgerStatusError{Status: 500, HasRetryAfter: true}).Throttled())
	require.Equal(t, "read ledger: GET /v1/refunds?order_id=o answered 429", (&LedgerStatusError{Method: "GET", URI: "/v1/refunds?order_id=o", Status: 429}).Error())
}
