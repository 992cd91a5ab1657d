package storetest

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/idemproof/idemproof/reference/idempotency"
	"github.com/stretchr/testify/require"
)

// RunLocal is the suite of the one-transaction path (idempotency.LocalStore.CommitLocal),
// alone and mixed with the two-phase path on the same keys, as during a rolling deploy.
func RunLocal(t *testing.T, s idempotency.LocalStore) {
	ctx := context.Background()
	resp := idempotency.Response{Status: 201, Header: map[string]string{"Content-Type": "application/json"},
		Body: []byte("{\"id\":\"x\"}\n\x00\xff")}
	commit := func(t *testing.T, sc idempotency.Scope, fp string, at time.Duration, effects ...idempotency.Effect) idempotency.Acquisition {
		t.Helper()
		acq, err := s.CommitLocal(ctx, acquireReq(sc, fp, at), resp, effects, nil)
		require.NoError(t, err)
		return acq
	}
	count := func(t *testing.T, entity string) int {
		t.Helper()
		effects, err := s.Effects(ctx, "refund", entity)
		require.NoError(t, err)
		return len(effects)
	}

	t.Run("one commit records key, response and effects; a repeat is the replay, another payload a mismatch", func(t *testing.T) {
		sc, entity := newScope(), fresh("o-")
		require.Equal(t, idempotency.Acquired, commit(t, sc, "f", 0, effect(entity)).State)
		require.Equal(t, 1, count(t, entity))
		again := commit(t, sc, "f", time.Second, effect(entity))
		require.Equal(t, idempotency.Completed, again.State)
		require.Equal(t, resp.Status, again.Record.Response.Status)
		require.Equal(t, resp.Body, again.Record.Response.Body)
		require.Equal(t, resp.Header, again.Record.Response.Header)
		require.Equal(t, idempotency.Mismatch, commit(t, sc, "g", 2*time.Second, effect(entity)).State)
		require.Equal(t, 1, count(t, entity), "neither the replay nor the mismatch wrote a row")
		rec, ok, err := s.Lookup(ctx, sc, t0.Add(3*time.Second))
		require.NoError(t, err)
		require.True(t, ok)
		require.True(t, rec.Completed)
		require.Equal(t, "f", rec.Fingerprint)
		require.True(t, t0.Add(retention).Equal(rec.ExpiresAt), "the window starts at the first record: %v", rec.ExpiresAt)
	})

	t.Run("several effects and none commit with the key", func(t *testing.T) {
		sc, entity := newScope(), fresh("o-")
		require.Equal(t, idempotency.Acquired, commit(t, sc, "f", 0, effect(entity), effect(entity), effect(entity)).State)
		require.Equal(t, 3, count(t, entity))
		sc2 := newScope()
		require.Equal(t, idempotency.Acquired, commit(t, sc2, "f", 0).State)
		require.Equal(t, idempotency.Completed, commit(t, sc2, "f", time.Second).State)
	})

	t.Run("a key past its window is recorded anew, with a new window", func(t *testing.T) {
		sc, entity := newScope(), fresh("o-")
		require.Equal(t, idempotency.Acquired, commit(t, sc, "f", 0, effect(entity)).State)
		require.Equal(t, idempotency.Acquired, commit(t, sc, "g", retention, effect(entity)).State)
		require.Equal(t, 2, count(t, entity))
		rec, ok, err := s.Lookup(ctx, sc, t0.Add(retention))
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, "g", rec.Fingerprint)
		require.True(t, t0.Add(2*retention).Equal(rec.ExpiresAt), "a new window: %v", rec.ExpiresAt)
	})

	t.Run("a live two-phase lock is in flight; a stale one is taken over and its holder fenced out", func(t *testing.T) {
		sc, entity := newScope(), fresh("o-")
		held, err := s.Acquire(ctx, acquireReq(sc, "f", 0))
		require.NoError(t, err)
		require.Equal(t, idempotency.Acquired, held.State)
		require.Equal(t, idempotency.InFlight, commit(t, sc, "f", lockTimeout-time.Millisecond, effect(entity)).State)
		require.Equal(t, idempotency.Mismatch, commit(t, sc, "g", lockTimeout, effect(entity)).State)
		require.Equal(t, 0, count(t, entity))
		require.Equal(t, idempotency.Acquired, commit(t, sc, "f", lockTimeout, effect(entity)).State)
		require.Equal(t, 1, count(t, entity))
		err = s.Complete(ctx, sc, held.Record.Fence, resp, []idempotency.Effect{effect(entity)}, true)
		require.ErrorIs(t, err, idempotency.ErrFenced)
		require.Equal(t, 1, count(t, entity))
		rec, ok, err := s.Lookup(ctx, sc, t0.Add(lockTimeout))
		require.NoError(t, err)
		require.True(t, ok)
		require.True(t, t0.Add(retention).Equal(rec.ExpiresAt), "a takeover keeps the first record's window: %v", rec.ExpiresAt)
	})

	t.Run("a two-phase acquire after a local commit replays it", func(t *testing.T) {
		sc := newScope()
		require.Equal(t, idempotency.Acquired, commit(t, sc, "f", 0).State)
		acq, err := s.Acquire(ctx, acquireReq(sc, "f", lockTimeout*2))
		require.NoError(t, err)
		require.Equal(t, idempotency.Completed, acq.State)
		require.Equal(t, resp.Body, acq.Record.Response.Body)
	})

	t.Run("while a transaction holds the key a repeat is in flight, then the replay; held shows it", func(t *testing.T) {
		sc, entity := newScope(), fresh("o-")
		inside, release := make(chan struct{}), make(chan struct{})
		done := make(chan idempotency.Acquisition, 1)
		go func() {
			acq, err := s.CommitLocal(ctx, acquireReq(sc, "f", 0), resp, []idempotency.Effect{effect(entity)}, func() {
				close(inside)
				<-release
			})
			if err != nil {
				acq.State = 0
			}
			done <- acq
		}()
		<-inside
		held, err := s.Held(ctx, sc)
		require.NoError(t, err)
		require.True(t, held)
		require.Equal(t, idempotency.InFlight, commit(t, sc, "f", time.Second, effect(entity)).State)
		require.Equal(t, idempotency.InFlight, commit(t, sc, "g", time.Second, effect(entity)).State,
			"the holder's fingerprint is not committed yet")
		_, ok, err := s.Lookup(ctx, sc, t0.Add(time.Second))
		require.NoError(t, err)
		require.False(t, ok, "nothing is visible before the commit")
		close(release)
		require.Equal(t, idempotency.Acquired, (<-done).State)
		held, err = s.Held(ctx, sc)
		require.NoError(t, err)
		require.False(t, held, "the commit released the lock")
		require.Equal(t, idempotency.Completed, commit(t, sc, "f", 2*time.Second).State)
		require.Equal(t, 1, count(t, entity))
	})

	t.Run("a crash inside the transaction leaves no effect and no key", func(t *testing.T) {
		sc, entity := newScope(), fresh("o-")
		func() {
			defer func() { require.Equal(t, http.ErrAbortHandler, recover()) }()
			s.CommitLocal(ctx, acquireReq(sc, "f", 0), resp, []idempotency.Effect{effect(entity)}, func() {
				panic(http.ErrAbortHandler)
			})
		}()
		require.Equal(t, 0, count(t, entity))
		held, err := s.Held(ctx, sc)
		require.NoError(t, err)
		require.False(t, held)
		_, ok, err := s.Lookup(ctx, sc, t0)
		require.NoError(t, err)
		require.False(t, ok)
		require.Equal(t, idempotency.Acquired, commit(t, sc, "f", time.Second, effect(entity)).State, "the retry executes at once")
		require.Equal(t, 1, count(t, entity))
	})

	t.Run("concurrent commits: exactly one writes, the others are in flight or the replay", func(t *testing.T) {
		sc, entity := newScope(), fresh("o-")
		const n = 50
		states := make([]idempotency.State, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				acq, err := s.CommitLocal(ctx, acquireReq(sc, "f", time.Second), resp, []idempotency.Effect{effect(entity)}, nil)
				if err == nil {
					states[i] = acq.State
				}
			})
		}
		wg.Wait()
		acquired := 0
		for _, st := range states {
			require.Contains(t, []idempotency.State{idempotency.Acquired, idempotency.InFlight, idempotency.Completed}, st)
			if st == idempotency.Acquired {
				acquired++
			}
		}
		require.Equal(t, 1, acquired)
		require.Equal(t, 1, count(t, entity))
	})
}
