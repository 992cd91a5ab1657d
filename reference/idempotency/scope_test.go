package idempotency_test

import (
	"testing"

	"github.com/idemproof/idemproof/reference/idempotency"
	"github.com/stretchr/testify/require"
)

// TestScopePartsDoNotBleed: the same bytes split differently are different scopes.
func TestScopePartsDoNotBleed(t *testing.T) {
	a := idempotency.Scope{Principal: "ab", Endpoint: "c", Key: "d"}.Hash()
	b := idempotency.Scope{Principal: "a", Endpoint: "bc", Key: "d"}.Hash()
	c := idempotency.Scope{Principal: "a", Endpoint: "b", Key: "cd"}.Hash()
	require.NotEqual(t, a, b)
	require.NotEqual(t, b, c)
	require.NotEqual(t, a, c)
}
