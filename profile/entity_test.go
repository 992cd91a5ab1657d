package profile_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/profile"
)

func TestEntityIsReadFromTheProfile(t *testing.T) {
	p, err := profile.Parse("refunds.yaml", []byte(minimalProfile+"entity: {json: order_id}\n"))
	require.NoError(t, err)
	require.Equal(t, &profile.EntityRef{JSON: "order_id"}, p.Entity)
	require.Equal(t, "json:order_id", p.Entity.String())

	p, err = profile.Parse("refunds.yaml", []byte(minimalProfile+"entity: {header: X-Order-Id}\n"))
	require.NoError(t, err)
	require.Equal(t, "header:X-Order-Id", p.Entity.String())

	p, err = profile.Parse("refunds.yaml", []byte(minimalProfile))
	require.NoError(t, err)
	require.Nil(t, p.Entity, "entity is optional")
}

func TestEntityErrorsSayWhatToFix(t *testing.T) {
	for doc, want := range map[string]string{
		"entity: {json: order_id, header: X-Order-Id}\n": "entity: set one of json, form, header or path",
		"entity: {path: /v1/refunds}\n":                  "entity.path: must be a path with {{.Entity}} once",
		"entity: {form: order_id}\n":                     `entity.form: "order_id" does not find {{.Entity}} in operation.body`,
		"entity: {}\n":                                   "entity: set json (a JSON path into the request body",
		"entity: {header: 'X Order'}\n":                  "entity.header: must be a header name",
		"entity: {json: orderid}\n":                      `entity.json: "orderid" does not find {{.Entity}} in operation.body`,
		"entity: {jsn: order_id}\n":                      "entity.jsn: unknown field",
	} {
		_, err := profile.Parse("refunds.yaml", []byte(minimalProfile+doc))
		require.ErrorContains(t, err, want, doc)
		require.ErrorContains(t, err, "line 15", doc)
	}
}

// A form-encoded operation (Stripe's) names its entity in a form field, or in the path;
// a JSON path on a form body would find nothing in any request, and is refused at load.
func TestEntityInAFormBodyOrThePath(t *testing.T) {
	form := strings.Replace(minimalProfile, `body: '{"order_id": "{{.Entity}}", "amount": 4900}'`, `body: 'amount=4900&metadata[order_id]={{.Entity}}'`, 1)
	form = strings.Replace(form, `altered_body: '{"order_id": "{{.Entity}}", "amount": 5000}'`, `altered_body: 'amount=5000&metadata[order_id]={{.Entity}}'`, 1)
	p, err := profile.Parse("refunds.yaml", []byte(form+"entity: {form: 'metadata[order_id]'}\n"))
	require.NoError(t, err)
	require.Equal(t, "form:metadata[order_id]", p.Entity.String())
	_, err = profile.Parse("refunds.yaml", []byte(form+"entity: {json: 'metadata.order_id'}\n"))
	require.ErrorContains(t, err, "operation.body is form-encoded, not JSON, so a JSON path finds nothing in it: use entity: {form: <field>}")

	p, err = profile.Parse("refunds.yaml", []byte(minimalProfile+"entity: {path: '/v1/charges/{{.Entity}}/refunds'}\n"))
	require.NoError(t, err)
	require.Equal(t, "path:/v1/charges/{{.Entity}}/refunds", p.Entity.String())

	require.Equal(t, "order-1", profile.FormValue("amount=4900&metadata%5Border_id%5D=order-1", "metadata[order_id]"))
	require.Equal(t, "order 1", profile.FormValue("metadata[order_id]=order+1", "metadata[order_id]"))
	require.Empty(t, profile.FormValue(`{"order_id":"order-1"}`, "order_id"))
	for path, want := range map[string]string{
		"/v1/charges/ch_1/refunds":   "ch_1",
		"/v1/charges/ch%201/refunds": "ch 1",
		"/v1/charges/ch_1/refunds/x": "",
		"/v1/charges//refunds":       "",
		"/v1/payments/ch_1/refunds":  "",
	} {
		got, ok := profile.PathEntity("/v1/charges/{{.Entity}}/refunds?expand=x", path)
		require.Equal(t, want, got, path)
		require.Equal(t, want != "", ok, path)
	}
	got, ok := profile.PathEntity("/v1/orders/ord_{{.Entity}}.json", "/v1/orders/ord_42.json")
	require.True(t, ok)
	require.Equal(t, "42", got)
}
