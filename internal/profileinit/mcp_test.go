package profileinit_test

import (
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/internal/profileinit"
	"github.com/idemproof/idemproof/profile"
)

func TestFromMCPTool(t *testing.T) {
	t.Parallel()
	code := int64(-32011)
	schema := &openapi3.Schema{Properties: openapi3.Schemas{
		"order_id": {Value: &openapi3.Schema{Type: &openapi3.Types{"string"}}},
		"amount":   {Value: &openapi3.Schema{Type: &openapi3.Types{"integer"}}},
	}}
	text, err := profileinit.FromMCPTool(profileinit.Tool{
		Endpoint: "http://127.0.0.1:8093/mcp", Server: "toolbox 1", Name: "refund",
		KeyField: "params._meta.idempotency_key", KeyWhy: "idemproof scan: its description",
		Arguments: map[string]any{"order_id": "ord_1", "amount": float64(4900)}, Changed: map[string]any{"order_id": "ord_1", "amount": float64(5000)},
		Schema: schema, ReadOnlyTools: []string{"get_balance", "list_refunds"}, UniqueField: "result.structuredContent.refund_id", MismatchCode: &code,
	})
	require.NoError(t, err)
	p, err := profile.Parse("refund.yaml", text)
	require.NoError(t, err, "%s", text)
	require.True(t, p.IsMCP())
	require.Equal(t, "http://127.0.0.1:8093", p.BaseURL)
	require.Equal(t, "/mcp", p.Operation.Path)
	require.Equal(t, "refund", p.Operation.Tool)
	require.Equal(t, `{"amount":4900,"order_id":"{{.Entity}}"}`, p.Operation.Body, "the id-like string carries the entity")
	require.Equal(t, `{"amount":5000,"order_id":"{{.Entity}}"}`, p.Operation.AlteredBody, "the change the scan sent")
	require.Equal(t, "list_refunds", p.SideEffects.Tool, "the read-only tool named like it")
	require.Equal(t, `{"order_id": "{{.Entity}}"}`, p.SideEffects.Arguments)
	require.Equal(t, "result.structuredContent.refund_id", p.Expect.UniqueField)
	require.Contains(t, string(text), "mismatch: {json: {path: error.code, equals: -32011}}   # seen:")
	require.Contains(t, string(text), "in_flight: {json: {path: error.message, matches:")
	require.Contains(t, string(text), "# guess: a read-only tool of the server named like it")

	// The key as an argument is the scan's to fill, never part of the body.
	text, err = profileinit.FromMCPTool(profileinit.Tool{Endpoint: "http://h:1/mcp", Name: "create_invoice", KeyUUID: true,
		KeyField: "params.arguments.idempotency_key", Arguments: map[string]any{"order_id": "{{.Entity}}", "idempotency_key": "x"}})
	require.NoError(t, err)
	p, err = profile.Parse("invoice.yaml", text)
	require.NoError(t, err, "%s", text)
	require.Equal(t, `{"order_id":"{{.Entity}}"}`, p.Operation.Body)
	require.Equal(t, profile.KeyFormatUUID, p.Expect.KeyFormat)
	require.Contains(t, string(text), "tool: list_create_invoice   # guess: the server has no read-only tool that looks like a ledger")
}
