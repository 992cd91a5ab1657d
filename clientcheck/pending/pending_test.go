package pending_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/clientcheck/outcome"
	"github.com/idemproof/idemproof/clientcheck/pending"
)

func TestAKeyIsKeptUntilItsOperationIsSettled(t *testing.T) {
	t.Parallel()
	path := t.TempDir()
	dir := pending.Open(path)
	n := 0
	mint := func() string { n++; return "k" + string(rune('0'+n)) }
	k1, err := dir.Key("order/1", mint)
	require.NoError(t, err)
	again, err := pending.Open(path).Key("order/1", mint)
	require.NoError(t, err)
	require.Equal(t, k1, again, "a restarted client reads the key it kept")
	_, ok := dir.Settled("order/1")
	require.False(t, ok)
	require.NoError(t, dir.Settle(outcome.Line{Operation: "order/1", Outcome: outcome.OutcomeOK, Key: k1}))
	l, ok := dir.Settled("order/1")
	require.True(t, ok)
	require.Equal(t, k1, l.Key)
	other, err := dir.Key("order/2", mint)
	require.NoError(t, err)
	require.NotEqual(t, k1, other)

	none := pending.Open("")
	a, _ := none.Key("x", mint)
	b, _ := none.Key("x", mint)
	require.NotEqual(t, a, b, "without a folder nothing is kept")
	require.NoError(t, none.Settle(outcome.Line{Operation: "x", Outcome: outcome.OutcomeOK}))
}
