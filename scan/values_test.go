package scan

import (
	"encoding/json"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/require"
)

func TestPerExecutionIsDetectedNotAssumed(t *testing.T) {
	t.Parallel()
	exec := func(body, key, entity, sent string) execution {
		return execution{body: []byte(body), key: key, entity: entity, sent: []byte(sent)}
	}
	cases := []struct {
		name string
		a, b execution
		want string
	}{
		{"an id minted per execution",
			exec(`{"id":"re_1","order_id":"o","amount":5,"created":17}`, "k1", "", `{"order_id":"o"}`),
			exec(`{"id":"re_2","order_id":"o","amount":5,"created":18}`, "k2", "", `{"order_id":"o"}`), "id"},
		{"the same id twice: none (a deterministic answer)",
			exec(`{"id":"acct_1","status":"active"}`, "", "", `{}`),
			exec(`{"id":"acct_1","status":"active"}`, "", "", `{}`), ""},
		{"a time differs, and is no id",
			exec(`{"status":"ok","created_at":"2026-01-01T00:00:01Z"}`, "", "", `{}`),
			exec(`{"status":"ok","created_at":"2026-01-01T00:00:02Z"}`, "", "", `{}`), ""},
		{"a request id differs in every answer, a replay's too",
			exec(`{"request_id":"q1","trace_id":"t1"}`, "", "", `{}`),
			exec(`{"request_id":"q2","trace_id":"t2"}`, "", "", `{}`), ""},
		{"an id inside a request's envelope is per response",
			exec(`{"meta":{"request":{"id":"q1"}},"_meta":{"id":"m1"}}`, "", "", `{}`),
			exec(`{"meta":{"request":{"id":"q2"}},"_meta":{"id":"m2"}}`, "", "", `{}`), ""},
		{"an echo of the key is no per-execution value",
			exec(`{"key_id":"k1"}`, "k1", "", `{}`),
			exec(`{"key_id":"k2"}`, "k2", "", `{}`), ""},
		{"an echo of the entity is none either",
			exec(`{"order_id":"ip-scan-1","refund_id":"r1"}`, "", "ip-scan-1", `{"order_id":"ip-scan-1"}`),
			exec(`{"order_id":"ip-scan-2","refund_id":"r2"}`, "", "ip-scan-2", `{"order_id":"ip-scan-2"}`), "refund_id"},
		{"the shallowest id wins",
			exec(`{"result":{"structuredContent":{"refund_id":"r1"},"content":[{"type":"text","text":"{\"refund_id\":\"r1\"}"}]}}`, "", "", `{}`),
			exec(`{"result":{"structuredContent":{"refund_id":"r2"},"content":[{"type":"text","text":"{\"refund_id\":\"r2\"}"}]}}`, "", "", `{}`), "result.structuredContent.refund_id"},
		{"inside a text content holding JSON",
			exec(`{"result":{"content":[{"type":"text","text":"{\"note_id\":7}"}]}}`, "", "", `{}`),
			exec(`{"result":{"content":[{"type":"text","text":"{\"note_id\":8}"}]}}`, "", "", `{}`), "result.content.0.text.#json.note_id"},
		{"an invoice number", exec(`{"invoice_number":1001}`, "", "", `{}`), exec(`{"invoice_number":1002}`, "", "", `{}`), "invoice_number"},
		{"not JSON", exec(`refund r1 made`, "", "", `{}`), exec(`refund r2 made`, "", "", `{}`), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, perExecution(c.a, c.b))
		})
	}
	require.Equal(t, "result.content.0.text (JSON) note_id", showPath("result.content.0.text.#json.note_id"))
	v, ok := valueAt([]byte(`{"result":{"content":[{"type":"text","text":"{\"note_id\":7}"}]}}`), "result.content.0.text.#json.note_id")
	require.True(t, ok)
	require.Equal(t, "7", v)
}

func schemaOf(t *testing.T, doc string) *openapi3.Schema {
	t.Helper()
	var raw any
	require.NoError(t, json.Unmarshal([]byte(doc), &raw))
	s, err := readToolSchema(raw)
	require.NoError(t, err)
	return s
}

func TestArgumentsFromTheSchema(t *testing.T) {
	t.Parallel()
	s := schemaOf(t, `{"type":"object","required":["amount","currency","when","to","mode","note","nested","flag","lines"],"properties":{
		"amount":{"type":"integer","minimum":100},
		"currency":{"type":"string","default":"EUR"},
		"when":{"type":"string","format":"date"},
		"to":{"type":"string","format":"email"},
		"mode":{"type":"string","enum":["fast","slow"]},
		"note":{"type":"string","maxLength":5},
		"nested":{"$ref":"#/$defs/Inner"},
		"flag":{"type":"boolean"},
		"lines":{"type":"array","minItems":1,"items":{"type":"integer","examples":[3]}},
		"optional_example":{"type":"string","examples":["kept"]},
		"optional_plain":{"type":"string"}},
		"$defs":{"Inner":{"type":"object","required":["depth"],"properties":{"depth":{"type":"number"}}}}}`)
	b := &builder{}
	args := b.object(s, "", "", 0)
	require.Empty(t, b.needs)
	withExamples(args, s, "")
	require.Equal(t, `{"amount":100,"currency":"EUR","flag":false,"lines":[3],"mode":"fast","nested":{"depth":1},"note":"idemp","optional_example":"kept","to":"scan@example.com","when":"2026-01-01"}`, marshalBody(args))

	// What the scan will not invent: an id of something that must exist, a pattern, a
	// value of no type.
	s = schemaOf(t, `{"type":"object","required":["customer_id","code","blob","idempotency_key"],"properties":{
		"customer_id":{"type":"string"},"code":{"type":"string","pattern":"^[A-Z]{3}$"},"blob":{},"idempotency_key":{"type":"string"}}}`)
	b = &builder{}
	b.object(s, "", "idempotency_key", 0)
	require.Equal(t, []string{"blob (no type, example or default in its schema)", "code (a string matching ^[A-Z]{3}$)", "customer_id (an id of something that must exist)"}, b.needs, "the key argument is the scan's to fill")
}

func TestChooseChange(t *testing.T) {
	t.Parallel()
	s := schemaOf(t, `{"type":"object","properties":{"amount":{"type":"integer","maximum":10},"account_id":{"type":"string"},"note":{"type":"string"},"mode":{"type":"string","enum":["a","b"]}}}`)
	c := chooseChange(map[string]any{"amount": float64(10), "account_id": "acct", "note": "n", "mode": "a"}, s, "")
	require.Equal(t, "amount 10 → 9", c.What, "a number first, one less at its maximum")
	c = chooseChange(map[string]any{"account_id": "acct", "note": "n", "mode": "a"}, s, "")
	require.Equal(t, `note "n" → "n-changed"`, c.What, "a free string, never an id")
	c = chooseChange(map[string]any{"account_id": "acct", "mode": "a"}, s, "")
	require.Equal(t, `mode "a" → "b"`, c.What)
	require.Nil(t, chooseChange(map[string]any{"account_id": "acct", "key": "k"}, s, "key"), "nothing but an id and the key")
}

func TestUnreadableSchemasNameTheField(t *testing.T) {
	t.Parallel()
	for doc, want := range map[string]string{
		`{"type":"object","properties":{"amount":{"type":5}}}`:            "inputSchema.properties.amount: ",
		`{"type":"object","properties":{"x":{"$ref":"#/$defs/Missing"}}}`: `inputSchema.properties.x: $ref "#/$defs/Missing" names nothing in the schema's own $defs`,
		`{"type":"object","properties":{"x":{"type":"strin"}}}`:           `inputSchema.properties.x.type: unknown type "strin"`,
		`{"type":"array"}`: `inputSchema.type: "array", want "object"`,
		`{"type":"object","properties":{"a":{"items":{"$ref":"http://x/y"}}}}`: `inputSchema.properties.a.items: $ref "http://x/y"`,
	} {
		var raw any
		require.NoError(t, json.Unmarshal([]byte(doc), &raw))
		_, err := readToolSchema(raw)
		require.ErrorContains(t, err, want, doc)
	}
}
