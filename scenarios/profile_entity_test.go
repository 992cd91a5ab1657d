package scenarios_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/scenarios"
)

func TestEntityIsReadFromTheProfile(t *testing.T) {
	p, err := scenarios.ParseProfile("refunds.yaml", []byte(minimalProfile+"entity: {json: order_id}\n"))
	require.NoError(t, err)
	require.Equal(t, &scenarios.EntityRef{JSON: "order_id"}, p.Entity)
	require.Equal(t, "json:order_id", p.Entity.String())

	p, err = scenarios.ParseProfile("refunds.yaml", []byte(minimalProfile+"entity: {header: X-Order-Id}\n"))
	require.NoError(t, err)
	require.Equal(t, "header:X-Order-Id", p.Entity.String())

	p, err = scenarios.ParseProfile("refunds.yaml", []byte(minimalProfile))
	require.NoError(t, err)
	require.Nil(t, p.Entity, "entity is optional")
}

func TestEntityErrorsSayWhatToFix(t *testing.T) {
	for doc, want := range map[string]string{
		"entity: {json: order_id, header: X-Order-Id}\n": "entity: set json or header, not both",
		"entity: {}\n":                  "entity: set json (a JSON path into the request body",
		"entity: {header: 'X Order'}\n": "entity.header: must be a header name",
		"entity: {json: orderid}\n":     `entity.json: "orderid" does not find {{.Entity}} in operation.body`,
		"entity: {jsn: order_id}\n":     "entity.jsn: unknown field",
	} {
		_, err := scenarios.ParseProfile("refunds.yaml", []byte(minimalProfile+doc))
		require.ErrorContains(t, err, want, doc)
		require.ErrorContains(t, err, "line 15", doc)
	}
}
