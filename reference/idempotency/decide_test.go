package idempotency_test

import (
	"testing"
	"time"

	"github.com/idemproof/idemproof/reference/idempotency"
	"github.com/stretchr/testify/require"
)

func TestDecide(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	req := func(at time.Duration, fp string) idempotency.AcquireRequest {
		return idempotency.AcquireRequest{Scope: idempotency.Scope{Key: "k"}, Fingerprint: fp, Now: t0.Add(at),
			Retention: time.Hour, LockTimeout: 30 * time.Second}
	}
	state, rec := idempotency.Decide(nil, req(0, "f"), 1)
	require.Equal(t, idempotency.Acquired, state)
	require.Equal(t, int64(1), rec.Fence)
	require.Equal(t, t0.Add(time.Hour), rec.ExpiresAt)
	require.Equal(t, t0.Add(30*time.Second), rec.LockedUntil)

	state, next := idempotency.Decide(&rec, req(time.Second, "f"), 2)
	require.Equal(t, idempotency.InFlight, state)
	require.Zero(t, next)

	state, next = idempotency.Decide(&rec, req(time.Second, "other"), 2)
	require.Equal(t, idempotency.Mismatch, state)
	require.Zero(t, next)

	state, next = idempotency.Decide(&rec, req(30*time.Second, "f"), 2)
	require.Equal(t, idempotency.Acquired, state, "a lock is stale at the lock timeout")
	require.Equal(t, int64(2), next.Fence)
	require.Equal(t, t0, next.Created, "a takeover keeps the window's start")

	done := rec
	done.Completed = true
	done.Response = &idempotency.Response{Status: 201}
	state, _ = idempotency.Decide(&done, req(59*time.Minute, "f"), 3)
	require.Equal(t, idempotency.Completed, state)
	state, next = idempotency.Decide(&done, req(time.Hour, "other"), 3)
	require.Equal(t, idempotency.Acquired, state, "past the window the key is absent, whatever the payload")
	require.Equal(t, int64(3), next.Fence)
	require.Equal(t, t0.Add(time.Hour), next.Created)
	require.False(t, next.Completed)
}
