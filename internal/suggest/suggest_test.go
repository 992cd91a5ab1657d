package suggest_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/internal/suggest"
)

func TestClosest(t *testing.T) {
	t.Parallel()
	names := []string{"refund", "list_refunds", "seed", "order_id"}
	require.Equal(t, "refund", suggest.Closest("refnd", names))
	require.Equal(t, "seed", suggest.Closest("sede", names), "a transposition is one edit")
	require.Equal(t, "order_id", suggest.Closest("ORDR_ID", names), "letter case is not an edit")
	require.Equal(t, "list_refunds", suggest.Closest("list_", names), "a prefix")
	require.Empty(t, suggest.Closest("amount", names))
	require.Equal(t, `; did you mean "refund"?`, suggest.DidYouMean("refnud", names))
	require.Empty(t, suggest.DidYouMean("zzz", names))
}
