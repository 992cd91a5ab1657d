package faultproxy_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/idemproof/idemproof/faultproxy"
)

// A key field's member names may hold dots, written \. (MCP's namespaced _meta names),
// and gjson's own syntax, which is a plain name there.
func TestKeyFieldPathsNameMembersWithDotsAndSyntax(t *testing.T) {
	require.Equal(t, []string{"params", "_meta", "io.modelcontextprotocol/idempotency-key"},
		faultproxy.SplitKeyField(`params._meta.io\.modelcontextprotocol/idempotency-key`))
	require.Equal(t, []string{"a", "b"}, faultproxy.SplitKeyField("a.b"))
	require.Equal(t, []string{`a\b`}, faultproxy.SplitKeyField(`a\b`), "a backslash not before a dot is itself")

	body := []byte(`{"params":{"_meta":{"io.modelcontextprotocol/idempotency-key":"k1"},"a*":{"b":"k2"}}}`)
	require.Equal(t, "k1", gjson.GetBytes(body, faultproxy.KeyPath(`params._meta.io\.modelcontextprotocol/idempotency-key`)).String())
	require.Equal(t, "k2", gjson.GetBytes(body, faultproxy.KeyPath(`params.a*.b`)).String())
}
