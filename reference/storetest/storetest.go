// Package storetest is the conformance suite every idempotency.Store must pass: the
// memory and the PostgreSQL stores run the same tests, which is what "same behaviour on
// both" means. Each test uses fresh scopes and entities, so one store (one database)
// can serve the whole suite. RunLocal is the suite of the one-transaction path, for a
// store that is an idempotency.LocalStore.
package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"
	"testing"
	"time"

	"github.com/idemproof/idemproof/reference/idempotency"
	"github.com/stretchr/testify/require"
)

// t0 is a fixed clock start: the suite never reads the wall clock.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

const (
	retention   = time.Hour
	lockTimeout = 30 * time.Second
)

func fresh(prefix string) string {
	var b [8]byte
	rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

func newScope() idempotency.Scope {
	return idempotency.Scope{Principal: fresh("p-"), Endpoint: "POST /v1/refunds", Key: fresh("k-")}
}

func acquireReq(s idempotency.Scope, fp string, at time.Duration) idempotency.AcquireRequest {
	return idempotency.AcquireRequest{Scope: s, Fingerprint: fp, Now: t0.Add(at), Retention: retention, LockTimeout: lockTimeout}
}

func effect(entity string) idempotency.Effect {
	id := fresh("re_")
	return idempotency.Effect{Kind: "refund", ID: id, Entity: entity, Principal: "p", Data: []byte(`{"id":"` + id + `"}`), Created: t0}
}

// Run runs the suite against the store s.
func Run(t *testing.T, s idempotency.Store) {
	ctx := context.Background()
	acquire := func(t *testing.T, sc idempotency.Scope, fp string, at time.Duration) idempotency.Acquisition {
		t.Helper()
		acq, err := s.Acquire(ctx, acquireReq(sc, fp, at))
		require.NoError(t, err)
		return acq
	}
	count := func(t *testing.T, entity string) int {
		t.Helper()
		effects, err := s.Effects(ctx, "refund", entity)
		require.NoError(t, err)
		return len(effects)
	}
	resp := idempotency.Response{Status: 201, Header: map[string]string{"Content-Type": "application/json", "Location": "/v1/refunds/x"},
		Body: []byte("{\"id\":\"x\",  \"b\":\"\x00\xff\"}\n")}

	t.Run("first acquire holds the key, a repeat is in flight", func(t *testing.T) {
		sc := newScope()
		first := acquire(t, sc, "f", 0)
		require.Equal(t, idempotency.Acquired, first.State)
		require.Equal(t, idempotency.InFlight, acquire(t, sc, "f", time.Second).State)
		require.Equal(t, idempotency.Mismatch, acquire(t, sc, "g", time.Second).State)
	})

	t.Run("complete commits effects and response together; replay is byte for byte", func(t *testing.T) {
		sc, entity := newScope(), fresh("o-")
		first := acquire(t, sc, "f", 0)
		require.NoError(t, s.Complete(ctx, sc, first.Record.Fence, resp, []idempotency.Effect{effect(entity)}, true))
		again := acquire(t, sc, "f", time.Minute)
		require.Equal(t, idempotency.Completed, again.State)
		require.Equal(t, resp.Status, again.Record.Response.Status)
		require.Equal(t, resp.Body, again.Record.Response.Body)
		require.Equal(t, resp.Header, again.Record.Response.Header)
		require.Equal(t, 1, count(t, entity))
	})

	t.Run("mismatch leaves the record untouched", func(t *testing.T) {
		sc := newScope()
		first := acquire(t, sc, "f", 0)
		require.NoError(t, s.Complete(ctx, sc, first.Record.Fence, resp, nil, true))
		require.Equal(t, idempotency.Mismatch, acquire(t, sc, "g", time.Second).State)
		require.Equal(t, idempotency.Mismatch, acquire(t, sc, "g", 2*time.Second).State)
		require.Equal(t, idempotency.Completed, acquire(t, sc, "f", 3*time.Second).State)
	})

	t.Run("a stale lock is taken over with a new fence; the old fence cannot commit", func(t *testing.T) {
		sc, entity := newScope(), fresh("o-")
		first := acquire(t, sc, "f", 0)
		require.Equal(t, idempotency.InFlight, acquire(t, sc, "f", lockTimeout-time.Millisecond).State)
		second := acquire(t, sc, "f", lockTimeout)
		require.Equal(t, idempotency.Acquired, second.State)
		require.Greater(t, second.Record.Fence, first.Record.Fence)
		err := s.Complete(ctx, sc, first.Record.Fence, resp, []idempotency.Effect{effect(entity)}, true)
		require.ErrorIs(t, err, idempotency.ErrFenced)
		require.Equal(t, 0, count(t, entity), "a fenced commit must leave no effect")
		require.NoError(t, s.Complete(ctx, sc, second.Record.Fence, resp, []idempotency.Effect{effect(entity)}, true))
		require.Equal(t, 1, count(t, entity))
		err = s.Complete(ctx, sc, second.Record.Fence, resp, []idempotency.Effect{effect(entity)}, true)
		require.ErrorIs(t, err, idempotency.ErrFenced, "a completed record cannot complete twice")
		require.Equal(t, 1, count(t, entity))
	})

	t.Run("without the fence check a stale original commits too (no-fencing)", func(t *testing.T) {
		sc, entity := newScope(), fresh("o-")
		first := acquire(t, sc, "f", 0)
		second := acquire(t, sc, "f", lockTimeout)
		require.NoError(t, s.Complete(ctx, sc, second.Record.Fence, resp, []idempotency.Effect{effect(entity)}, true))
		require.NoError(t, s.Complete(ctx, sc, first.Record.Fence, resp, []idempotency.Effect{effect(entity)}, false))
		require.Equal(t, 2, count(t, entity))
	})

	t.Run("release frees the key; a stale release does nothing", func(t *testing.T) {
		sc := newScope()
		first := acquire(t, sc, "f", 0)
		require.NoError(t, s.Release(ctx, sc, first.Record.Fence))
		second := acquire(t, sc, "f", time.Second)
		require.Equal(t, idempotency.Acquired, second.State)
		require.NoError(t, s.Release(ctx, sc, first.Record.Fence))
		require.Equal(t, idempotency.InFlight, acquire(t, sc, "f", 2*time.Second).State)
		require.ErrorIs(t, s.Complete(ctx, sc, first.Record.Fence, resp, nil, true), idempotency.ErrFenced,
			"a fence is never handed out twice, even after a release")
		require.NoError(t, s.Complete(ctx, sc, second.Record.Fence, resp, nil, true))
		require.NoError(t, s.Release(ctx, sc, second.Record.Fence))
		require.Equal(t, idempotency.Completed, acquire(t, sc, "f", 3*time.Second).State, "release never deletes a completed record")
	})

	t.Run("a key past its window counts as absent before cleanup", func(t *testing.T) {
		sc := newScope()
		first := acquire(t, sc, "f", 0)
		require.NoError(t, s.Complete(ctx, sc, first.Record.Fence, resp, nil, true))
		_, ok, err := s.Lookup(ctx, sc, t0.Add(retention-time.Millisecond))
		require.NoError(t, err)
		require.True(t, ok)
		_, ok, err = s.Lookup(ctx, sc, t0.Add(retention))
		require.NoError(t, err)
		require.False(t, ok)
		again := acquire(t, sc, "other", retention)
		require.Equal(t, idempotency.Acquired, again.State)
		require.Greater(t, again.Record.Fence, first.Record.Fence)
		require.Equal(t, idempotency.InFlight, acquire(t, sc, "other", retention+time.Second).State)
	})

	t.Run("the window starts at the first record, not at completion or takeover", func(t *testing.T) {
		sc := newScope()
		acquire(t, sc, "f", 0)
		second := acquire(t, sc, "f", lockTimeout)
		require.NoError(t, s.Complete(ctx, sc, second.Record.Fence, resp, nil, true))
		require.Equal(t, idempotency.Completed, acquire(t, sc, "f", retention-time.Millisecond).State)
		require.Equal(t, idempotency.Acquired, acquire(t, sc, "f", retention).State)
	})

	t.Run("lookup reports the record", func(t *testing.T) {
		sc := newScope()
		_, ok, err := s.Lookup(ctx, sc, t0)
		require.NoError(t, err)
		require.False(t, ok)
		first := acquire(t, sc, "f", 0)
		rec, ok, err := s.Lookup(ctx, sc, t0)
		require.NoError(t, err)
		require.True(t, ok)
		require.False(t, rec.Completed)
		require.Equal(t, "f", rec.Fingerprint)
		require.Equal(t, first.Record.Fence, rec.Fence)
		require.True(t, rec.ExpiresAt.Equal(t0.Add(retention)))
		require.NoError(t, s.Complete(ctx, sc, first.Record.Fence, resp, nil, true))
		rec, _, err = s.Lookup(ctx, sc, t0)
		require.NoError(t, err)
		require.True(t, rec.Completed)
		require.Equal(t, resp.Body, rec.Response.Body)
	})

	t.Run("scopes are independent per principal, endpoint and key", func(t *testing.T) {
		sc := newScope()
		require.Equal(t, idempotency.Acquired, acquire(t, sc, "f", 0).State)
		other := sc
		other.Principal = fresh("p-")
		require.Equal(t, idempotency.Acquired, acquire(t, other, "f", 0).State)
		other = sc
		other.Endpoint = "POST /v1/invoices"
		require.Equal(t, idempotency.Acquired, acquire(t, other, "f", 0).State)
	})

	t.Run("set fingerprint overwrites (mismatch-overwrites)", func(t *testing.T) {
		sc := newScope()
		first := acquire(t, sc, "f", 0)
		require.NoError(t, s.Complete(ctx, sc, first.Record.Fence, resp, nil, true))
		require.NoError(t, s.SetFingerprint(ctx, sc, "g"))
		require.Equal(t, idempotency.Completed, acquire(t, sc, "g", time.Second).State)
	})

	t.Run("unkeyed effects and the ledger order", func(t *testing.T) {
		entity := fresh("o-")
		a, b := effect(entity), effect(entity)
		require.NoError(t, s.CommitEffects(ctx, []idempotency.Effect{a}))
		require.NoError(t, s.CommitEffects(ctx, []idempotency.Effect{b}))
		require.NoError(t, s.CommitEffects(ctx, nil))
		got, err := s.Effects(ctx, "refund", entity)
		require.NoError(t, err)
		require.Len(t, got, 2)
		require.Equal(t, a.ID, got[0].ID)
		require.Equal(t, a.Data, got[0].Data)
		require.Equal(t, b.ID, got[1].ID)
		none, err := s.Effects(ctx, "invoice", entity)
		require.NoError(t, err)
		require.Empty(t, none)
	})

	t.Run("any number of effects: all or none commit with the response", func(t *testing.T) {
		// Stores may run one, several and no effects through different statements.
		for _, n := range []int{0, 1, 3} {
			entity := fresh("o-")
			effects := make([]idempotency.Effect, n)
			for i := range effects {
				effects[i] = effect(entity)
			}
			sc := newScope()
			first := acquire(t, sc, "f", 0)
			second := acquire(t, sc, "f", lockTimeout+time.Second) // takes the stale lock over
			require.Equal(t, idempotency.Acquired, second.State)
			require.ErrorIs(t, s.Complete(ctx, sc, first.Record.Fence, resp, effects, true), idempotency.ErrFenced)
			require.Zero(t, count(t, entity), "%d effects: a fenced-out completion commits none", n)
			require.NoError(t, s.Complete(ctx, sc, second.Record.Fence, resp, effects, true))
			require.Equal(t, n, count(t, entity), "%d effects", n)
			got, ok, err := s.Lookup(ctx, sc, t0.Add(lockTimeout+2*time.Second))
			require.NoError(t, err)
			require.True(t, ok)
			require.Equal(t, &resp, got.Response, "%d effects", n)

			several := fresh("o-")
			batch := []idempotency.Effect{effect(several), effect(several), effect(several)}
			require.NoError(t, s.CommitEffects(ctx, batch[:n]))
			require.Equal(t, n, count(t, several), "%d unkeyed effects", n)
		}
	})

	t.Run("an effect is found by kind and id", func(t *testing.T) {
		entity := fresh("o-")
		keyed, unkeyed := effect(entity), effect(entity)
		sc := newScope()
		acq := acquire(t, sc, "f", 0)
		require.NoError(t, s.Complete(ctx, sc, acq.Record.Fence, resp, []idempotency.Effect{keyed}, true))
		require.NoError(t, s.CommitEffects(ctx, []idempotency.Effect{unkeyed}))
		for _, want := range []idempotency.Effect{keyed, unkeyed} {
			got, ok, err := s.Effect(ctx, "refund", want.ID)
			require.NoError(t, err)
			require.True(t, ok, want.ID)
			require.Equal(t, want.ID, got.ID)
			require.Equal(t, want.Entity, got.Entity)
			require.Equal(t, want.Principal, got.Principal)
			require.Equal(t, want.Data, got.Data)
		}
		_, ok, err := s.Effect(ctx, "invoice", keyed.ID)
		require.NoError(t, err)
		require.False(t, ok, "another kind")
		_, ok, err = s.Effect(ctx, "refund", fresh("re_"))
		require.NoError(t, err)
		require.False(t, ok, "an unknown id")
	})

	t.Run("delete expired removes only records past their window", func(t *testing.T) {
		old, young := newScope(), newScope()
		acquire(t, old, "f", -2*retention)
		acquire(t, young, "f", 0)
		n, err := s.DeleteExpired(ctx, t0)
		require.NoError(t, err)
		require.GreaterOrEqual(t, n, 1)
		_, ok, err := s.Lookup(ctx, old, t0.Add(-2*retention))
		require.NoError(t, err)
		require.False(t, ok, "the expired record is gone even for a clock before its expiry")
		_, ok, err = s.Lookup(ctx, young, t0)
		require.NoError(t, err)
		require.True(t, ok)
	})

	t.Run("concurrent acquires: exactly one holds the key", func(t *testing.T) {
		sc := newScope()
		const n = 50
		states := make([]idempotency.State, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				acq, err := s.Acquire(ctx, acquireReq(sc, "f", time.Second))
				if err == nil {
					states[i] = acq.State
				}
			})
		}
		wg.Wait()
		acquired := 0
		for _, st := range states {
			require.Contains(t, []idempotency.State{idempotency.Acquired, idempotency.InFlight}, st)
			if st == idempotency.Acquired {
				acquired++
			}
		}
		require.Equal(t, 1, acquired)
	})
}
