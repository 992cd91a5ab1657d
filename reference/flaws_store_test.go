package reference_test

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/reference"
	"github.com/idemproof/idemproof/reference/idempotency"
	"github.com/idemproof/idemproof/reference/memstore"
	"github.com/idemproof/idemproof/reference/servertest"
)

// outageStore is a key store that can be taken out: while out, Acquire fails at once
// (down) or waits for its context to end (hung), as a store behind a store fault point
// does. The application's own store (WithAppStore) stays up.
type outageStore struct {
	idempotency.Store
	down, hung atomic.Bool
}

var errStoreDown = errors.New("dial key store: connection refused")

func (s *outageStore) Acquire(ctx context.Context, req idempotency.AcquireRequest) (idempotency.Acquisition, error) {
	switch {
	case s.down.Load():
		return idempotency.Acquisition{}, errStoreDown
	case s.hung.Load():
		<-ctx.Done()
		return idempotency.Acquisition{}, ctx.Err()
	}
	return s.Store.Acquire(ctx, req)
}

// storeFlawEnv starts the reference with flaw on a key store that can be taken out,
// beside an application store that stays up (one memory store behind both, as one
// PostgreSQL database behind the store fault point and a direct connection).
func storeFlawEnv(t *testing.T, flaw string) (*servertest.Env, *outageStore) {
	app := memstore.New()
	keys := &outageStore{Store: app}
	opts := []reference.Option{reference.WithTestHooks(true), reference.WithRetention(flawRetention),
		reference.WithLockTimeout(flawLockTimeout), reference.WithAppStore(app), reference.WithStoreTimeout(200 * time.Millisecond)}
	if flaw != "" {
		opts = append(opts, reference.WithFlaws(flaw))
	}
	return servertest.Start(t, keys, opts...), keys
}

// storeFlawCases are the flaws that need the key store to fail: each starts its own
// server on an outageStore.
var storeFlawCases = map[string]func(t *testing.T){
	"fail-open-on-store-error": func(t *testing.T) {
		e, keys := storeFlawEnv(t, "fail-open-on-store-error")
		order, key := servertest.Fresh("o-"), servertest.Fresh("k-")
		require.Equal(t, http.StatusCreated, e.Post(t, refunds, key, body(order, 4900)).Status)
		keys.down.Store(true)
		retry := e.Post(t, refunds, key, body(order, 4900))
		require.Equal(t, http.StatusCreated, retry.Status, "the retry runs unkeyed while the store is down")
		require.False(t, retry.Replayed())
		require.Equal(t, 2, e.Count(t, "refunds", order))
	},
	"store-timeout-as-miss": func(t *testing.T) {
		e, keys := storeFlawEnv(t, "store-timeout-as-miss")
		order, key := servertest.Fresh("o-"), servertest.Fresh("k-")
		keys.down.Store(true)
		require.Equal(t, http.StatusServiceUnavailable, e.Post(t, refunds, key, body(order, 4900)).Status, "a store error is still refused")
		keys.down.Store(false)
		keys.hung.Store(true)
		for _, r := range servertest.Burst(t, e, 2, key, body(order, 4900)) {
			require.Equal(t, http.StatusCreated, r.Status, "a timed-out lookup reads as a miss")
		}
		require.Equal(t, 2, e.Count(t, "refunds", order), "both copies executed")
	},
}

// The correct reference refuses both outages, and its ledger stays readable.
func TestTheCorrectReferenceRefusesWhileItsKeyStoreIsOut(t *testing.T) {
	t.Parallel()
	e, keys := storeFlawEnv(t, "")
	order, key := servertest.Fresh("o-"), servertest.Fresh("k-")
	require.Equal(t, http.StatusCreated, e.Post(t, refunds, key, body(order, 4900)).Status)
	keys.down.Store(true)
	refused := e.Post(t, refunds, key, body(order, 4900))
	require.Equal(t, http.StatusServiceUnavailable, refused.Status)
	require.Equal(t, "1", refused.Header.Get("Retry-After"))
	keys.down.Store(false)
	keys.hung.Store(true)
	require.Equal(t, http.StatusServiceUnavailable, e.Post(t, refunds, servertest.Fresh("k-"), body(order, 4900)).Status, "a hung store is refused after the store timeout")
	keys.hung.Store(false)
	require.True(t, e.Post(t, refunds, key, body(order, 4900)).Replayed())
	require.Equal(t, 1, e.Count(t, "refunds", order))
}
