package scenarios

import (
	"testing"

	"github.com/idemproof/idemproof/profile"
	"github.com/stretchr/testify/require"
)

// A changed string stays a value a validating API accepts, so the change reaches the
// fingerprint instead of a 400.
func TestChangedStringStaysValid(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"10.99":                 "11.99",
		"0":                     "1",
		"9.99":                  "10.99",
		"-5.00":                 "-4.00",
		"-0.50":                 "0.50",
		"-1.50":                 "-0.50",
		"-10":                   "-9",
		"007":                   "008",
		"123456789012345678901": "123456789012345678902",
		"USD":                   "EUR",
		"EUR":                   "USD",
		"GB":                    "GB-changed",
		"2026-01-31":            "2026-02-01",
		"2026-12-31":            "2027-01-01",
		"2026-02-30":            "2026-02-30-changed",
		"usd":                   "eur",
		"eur":                   "usd",
		"Usd":                   "Usd-changed",
		"1e3":                   "1e3-changed",
		"1.":                    "1.-changed",
		"requested":             "requested-changed",
		"":                      "-changed",
	} {
		require.Equal(t, want, changedString(in), in)
	}
	got, err := changeMember(`{"amount":{"value":"10.99","currency_code":"USD"}}`, "amount.value")
	require.NoError(t, err)
	require.Equal(t, `{"amount":{"value":"11.99","currency_code":"USD"}}`, got, "a money string stays a string")
	got, err = changeMember(`amount=10.99&currency=USD`, "currency")
	require.NoError(t, err)
	require.Equal(t, `amount=10.99&currency=EUR`, got, "a form's values too")
}

// Over plain HTTP a JSON-RPC 2.0 request's envelope is not payload: each-member changes
// the members under params and any other top-level member, number-spelling respells the
// payload's numbers only.
func TestJSONRPCEnvelopeIsNotPayload(t *testing.T) {
	t.Parallel()
	const body = `{"jsonrpc": "2.0", "id": 1, "method": "refund.create", "params": {"order_id": "{{.Entity}}", "amount": 100, "reason": "dup", "idempotency_key": ""}, "meta": {"trace": "t"}}`
	p := &profile.Profile{KeyField: "params.idempotency_key", Operation: profile.Operation{Body: body}}
	require.Equal(t, []string{"params.amount", "params.reason", "meta.trace"}, p.ChangeableMembers())
	require.Empty(t, p.Missing(profile.CapIntegerBody))

	shaped, _, err := shapeBody(`{"jsonrpc":"2.0","id":1,"method":"refund.create","params":{"amount":100,"n":[2]}}`, "", "", false, nil, VariantNumberSpelling)
	require.NoError(t, err)
	require.Equal(t, `{"jsonrpc":"2.0","id":1,"method":"refund.create","params":{"amount":100.0,"n":[2.0]}}`, string(shaped))

	// No number in the payload: N/A, as for any body without an integer.
	p.Operation.Body = `{"jsonrpc": "2.0", "id": 1, "method": "refund.create", "params": {"order_id": "{{.Entity}}", "amount": "1.00"}}`
	require.Contains(t, p.Missing(profile.CapIntegerBody), "no integer to respell")

	// Not JSON-RPC 2.0: every member is payload, as before.
	for _, notRPC := range []string{
		`{"jsonrpc": "1.0", "id": 1, "method": "m", "amount": 1}`,
		`{"jsonrpc": "2.0", "id": 1, "method": 7, "amount": 1}`,
		`{"id": 1, "method": "m", "amount": 1}`,
	} {
		p := &profile.Profile{Operation: profile.Operation{Body: notRPC}}
		require.Contains(t, p.ChangeableMembers(), "id", notRPC)
		shaped, _, err := shapeBody(notRPC, "", "", false, nil, VariantNumberSpelling)
		require.NoError(t, err)
		require.Contains(t, string(shaped), `"id":1.0`, notRPC)
	}

	// Over MCP the body is the tool's arguments (the harness writes the envelope): a
	// member of the arguments is changed whatever its name.
	p = &profile.Profile{Transport: profile.TransportMCP, KeyField: "params.arguments.key", Operation: profile.Operation{Body: `{"jsonrpc": "2.0", "id": 1, "method": "m", "key": ""}`}}
	require.Equal(t, []string{"jsonrpc", "id", "method"}, p.ChangeableMembers())
	require.Empty(t, p.Missing(profile.CapIntegerBody))
}
