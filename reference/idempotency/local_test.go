package idempotency_test

import (
	"context"
	"testing"

	"github.com/idemproof/idemproof/reference/idempotency"
	"github.com/idemproof/idemproof/reference/memstore"
	"github.com/stretchr/testify/require"
)

// fakeLocal is a memory store that claims the one-transaction ability; only the type
// matters here.
type fakeLocal struct{ idempotency.Store }

func (fakeLocal) CommitLocal(context.Context, idempotency.AcquireRequest, idempotency.Response, []idempotency.Effect, func()) (idempotency.Acquisition, error) {
	panic("not called")
}

func (fakeLocal) Held(context.Context, idempotency.Scope) (bool, error) { panic("not called") }

// The one-transaction path needs the handler's request, a LocalStore, and no flaw.
func TestOneTransactionApplies(t *testing.T) {
	local := fakeLocal{memstore.New()}
	require.True(t, idempotency.OneTransactionApplies(idempotency.Config{Store: local, OneTransaction: true}))
	require.False(t, idempotency.OneTransactionApplies(idempotency.Config{Store: local}), "the handler did not ask")
	require.False(t, idempotency.OneTransactionApplies(idempotency.Config{Store: memstore.New(), OneTransaction: true}), "not a LocalStore")
	require.False(t, idempotency.OneTransactionApplies(idempotency.Config{Store: local, OneTransaction: true,
		Flaws: idempotency.Flaws{NoFencing: true}}), "a flaw models the two-phase path")
}
