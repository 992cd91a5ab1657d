package outbox_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/downstream"
	"github.com/idemproof/idemproof/internal/dockertest"
	"github.com/idemproof/idemproof/reference/idempotency"
	"github.com/idemproof/idemproof/reference/memstore"
	"github.com/idemproof/idemproof/reference/outbox"
	"github.com/idemproof/idemproof/reference/pgstore"
)

// runWorker checks the worker against a store: a committed job is delivered once under
// its key, a vendor failure is retried under the same key, and a delivered job is no
// longer pending (a new worker, as after a restart, sends nothing again).
func runWorker(t *testing.T, store outbox.Store) {
	ctx := context.Background()
	sink, err := downstream.Start(downstream.Config{Listen: "127.0.0.1:0", EntityField: "order_id"})
	require.NoError(t, err)
	t.Cleanup(func() { sink.Close() })
	order := "o-" + time.Now().Format("150405.000000000")
	require.NoError(t, sink.AddRule(downstream.Rule{Entity: order, Nth: 1, Fault: downstream.Fault503Before}))

	body, _ := json.Marshal(map[string]string{"order_id": order})
	job := outbox.Effect("vn_"+order, order, "p", outbox.Job{Path: "/v1/notifications", Key: "nk-" + order, Body: body}, time.Now())
	require.NoError(t, store.CommitEffects(ctx, []idempotency.Effect{job}))

	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	w, err := outbox.Start(outbox.Config{Store: store, VendorURL: sink.URL(), Interval: 10 * time.Millisecond, Logger: quiet})
	require.NoError(t, err)
	deadline := time.Now().Add(10 * time.Second)
	for downstream.LedgerOf(sink.Calls(order)).Effects == 0 && time.Now().Before(deadline) {
		sink.Settle(ctx, order, time.Millisecond, time.Now().Add(50*time.Millisecond))
	}
	w.Close()
	calls := sink.Calls(order)
	require.Len(t, calls, 2, "the 503 was retried once")
	require.Equal(t, "nk-"+order, calls[0].Key)
	require.Equal(t, calls[0].Key, calls[1].Key, "the retry carries the job's key")

	pending, err := store.PendingEffects(ctx, outbox.JobKind, outbox.DoneKind, 100)
	require.NoError(t, err)
	for _, p := range pending {
		require.NotEqual(t, "vn_"+order, p.ID, "a delivered job is not pending")
	}
	again, err := outbox.Start(outbox.Config{Store: store, VendorURL: sink.URL(), Interval: 10 * time.Millisecond, Logger: quiet})
	require.NoError(t, err)
	again.Kick()
	sink.Settle(ctx, order, time.Hour, time.Now().Add(200*time.Millisecond))
	again.Close()
	require.Len(t, sink.Calls(order), 2, "a restarted worker does not deliver it again")
}

func TestWorkerOnMemory(t *testing.T) { runWorker(t, memstore.New()) }

func TestWorkerOnPostgres(t *testing.T) {
	pg := dockertest.RunPostgres(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	store, err := pgstore.Open(ctx, pg.DSN)
	require.NoError(t, err)
	t.Cleanup(func() { store.Close() })
	runWorker(t, store)
}
