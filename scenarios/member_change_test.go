package scenarios

import (
	"testing"

	"github.com/idemproof/idemproof/profile"
	"github.com/stretchr/testify/require"
)

func TestChangeableMembers(t *testing.T) {
	t.Parallel()
	p := &profile.Profile{KeyHeader: "Idempotency-Key", Operation: profile.Operation{Body: `{"order_id": "{{.Entity}}", "amount": 4900, "reason": "requested_by_customer"}`}}
	require.Equal(t, []string{"amount", "reason"}, p.ChangeableMembers(), "the entity's member is another operation, not another payload")

	p.Operation.Body = `{"order_id": "{{.Entity}}", "idempotency_key": "", "amount": {"value": 4900, "currency": "EUR"}, "tags": ["a", "b"], "lines": [{"sku": "x"}], "note": null, "urgent": false, "a.b": 1}`
	p.KeyField = "idempotency_key"
	require.Equal(t, []string{"amount.value", "amount.currency", "tags.0", "note", "urgent", `a\.b`}, p.ChangeableMembers())

	p.Expect.FingerprintIgnores = []string{"note", "amount.currency"}
	require.Equal(t, []string{"amount.value", "tags.0", "urgent", `a\.b`}, p.ChangeableMembers())

	// Over MCP the key field is a path into the JSON-RPC request around the arguments.
	p = &profile.Profile{Transport: profile.TransportMCP, KeyField: "params.arguments.key", Operation: profile.Operation{Body: `{"key": "", "amount": 1}`}}
	require.Equal(t, []string{"amount"}, p.ChangeableMembers())
	// Over HTTP the key field is a path into the body itself: a top-level member of the
	// same name elsewhere is a member like any other.
	p = &profile.Profile{KeyField: "meta.key", Operation: profile.Operation{Body: `{"meta": {"key": ""}, "key": "k", "amount": 1}`}}
	require.Equal(t, []string{"key", "amount"}, p.ChangeableMembers())

	p = &profile.Profile{Operation: profile.Operation{Body: `not json`}}
	require.Nil(t, p.ChangeableMembers())

	// A run changes the first maxChangedMembers; the rest are still listed, so a verdict
	// can name what it did not look at.
	var many string
	for i := 0; i < profile.MaxChangedMembers+3; i++ {
		many += `"m` + string(rune('a'+i)) + `": 1,`
	}
	p = &profile.Profile{Operation: profile.Operation{Body: `{` + many + `"last": 2}`}}
	require.Len(t, p.ChangeableMembers(), profile.MaxChangedMembers)
	require.Len(t, p.AllChangeableMembers(), profile.MaxChangedMembers+4)
	require.Equal(t, "last", p.AllChangeableMembers()[profile.MaxChangedMembers+3])
	require.Equal(t, p.AllChangeableMembers()[:profile.MaxChangedMembers], p.ChangeableMembers())
}

func TestChangeMemberGivesAnotherValueOfItsType(t *testing.T) {
	t.Parallel()
	body := `{"s": "x", "i": 4900, "f": 1.5, "t": true, "n": null, "o": {"k": false}, "a": [7, 8], "d.e": "y"}`
	for path, want := range map[string]string{
		"s":    `{"s":"x-changed","i":4900,"f":1.5,"t":true,"n":null,"o":{"k":false},"a":[7,8],"d.e":"y"}`,
		"i":    `{"s":"x","i":4901,"f":1.5,"t":true,"n":null,"o":{"k":false},"a":[7,8],"d.e":"y"}`,
		"f":    `{"s":"x","i":4900,"f":2.5,"t":true,"n":null,"o":{"k":false},"a":[7,8],"d.e":"y"}`,
		"t":    `{"s":"x","i":4900,"f":1.5,"t":false,"n":null,"o":{"k":false},"a":[7,8],"d.e":"y"}`,
		"n":    `{"s":"x","i":4900,"f":1.5,"t":true,"n":"changed","o":{"k":false},"a":[7,8],"d.e":"y"}`,
		"o.k":  `{"s":"x","i":4900,"f":1.5,"t":true,"n":null,"o":{"k":true},"a":[7,8],"d.e":"y"}`,
		"a.0":  `{"s":"x","i":4900,"f":1.5,"t":true,"n":null,"o":{"k":false},"a":[8,8],"d.e":"y"}`,
		`d\.e`: `{"s":"x","i":4900,"f":1.5,"t":true,"n":null,"o":{"k":false},"a":[7,8],"d.e":"y-changed"}`,
	} {
		got, err := changeMember(body, path)
		require.NoError(t, err, path)
		require.JSONEq(t, want, got, path)
	}
	_, err := changeMember(body, "o")
	require.ErrorContains(t, err, "no such scalar member")
	_, err = changeMember(body, "missing")
	require.ErrorContains(t, err, "no such scalar member")
}

// An API whose ids are integers writes {{.Entity}} unquoted: the body is JSON once
// rendered, and its members are changed as any other's (the entity's left alone).
func TestChangeableMembersOfABodyWithAnIntegerEntity(t *testing.T) {
	t.Parallel()
	p := &profile.Profile{Operation: profile.Operation{Body: `{"charge": {{.Entity}}, "amount": 100}`}}
	require.Equal(t, []string{"amount"}, p.ChangeableMembers())
	require.Empty(t, p.Missing(profile.CapJSONBody))
	require.True(t, p.EntityInRequest())
}

// A form body (Stripe's requests) has its fields changed one at a time too.
func TestChangeableFormFields(t *testing.T) {
	t.Parallel()
	p := &profile.Profile{Operation: profile.Operation{Body: `charge={{.Entity}}&amount=100&reason=requested_by_customer&metadata[note]=a%20b`}}
	require.Equal(t, []string{"amount", "reason", "metadata[note]"}, p.ChangeableMembers())
	require.Empty(t, p.Missing(profile.CapChangeableBody))
	rendered := `charge=ch_1&amount=100&reason=requested_by_customer&metadata[note]=a%20b`
	for name, want := range map[string]string{
		"amount":         `charge=ch_1&amount=101&reason=requested_by_customer&metadata[note]=a%20b`,
		"reason":         `charge=ch_1&amount=100&reason=requested_by_customer-changed&metadata[note]=a%20b`,
		"metadata[note]": `charge=ch_1&amount=100&reason=requested_by_customer&metadata[note]=a+b-changed`,
	} {
		got, err := changeMember(rendered, name)
		require.NoError(t, err, name)
		require.Equal(t, want, got, name)
	}
	p.Expect.FingerprintIgnores = []string{"reason"}
	require.Equal(t, []string{"amount", "metadata[note]"}, p.ChangeableMembers())

	for _, notForm := range []string{`[1,2]`, `plain text`, `a=1&b`, ``} {
		_, ok := profile.FormFields(notForm)
		require.False(t, ok, notForm)
	}
}
