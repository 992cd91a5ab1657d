package profile_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/profile"
)

// The field form: a test hook as a member of the request's JSON body, written like
// key_field. It needs a value, a place of its own beside the key, a JSON object body over
// plain HTTP, and a place under params over MCP; every error names its field and line.
func TestHookFieldFormIsValidated(t *testing.T) {
	t.Parallel()
	const httpDoc = "name: x\nbase_url: http://127.0.0.1:1\noperation: {path: /v1/refunds, body: '{\"order_id\": \"{{.Entity}}\"}'}\nside_effects: {path: '/r?o={{.Entity}}', count: count}\nexpect: {in_flight: 409, mismatch: 422, missing_key: \"400\"}\n"
	parse := func(doc string) (*profile.Profile, error) { return profile.Parse("x.yaml", []byte(doc)) }

	p, err := parse(httpDoc + "slow_operation: {field: test.delay, value: 400ms}\nfail_operation: {field: test.fail, value: \"503\"}\ncrash: {field: test.crash, after_key: after-key}\n")
	require.NoError(t, err)
	require.Equal(t, "test.delay", p.Slow.Form().Field)
	require.Equal(t, "test.crash", p.Crash.Form().Field)
	require.Empty(t, p.Missing(profile.CapSlowFail), "two fields of their own go on one request")

	for _, tc := range []struct{ extra, want string }{
		{"slow_operation: {field: test.delay}\n", "line 6: slow_operation.value: required with field"},
		{"fail_operation: {field: test.fail}\n", "line 6: fail_operation.value: required with field"},
		{"slow_operation: {field: test.delay, header: X-Test-Delay, value: 400ms}\n", "line 6: slow_operation: set one of header, query, path and field, not several"},
		{"slow_operation: {field: 'test..delay', value: 400ms}\n", "line 6: slow_operation.field: must be a dotted JSON path"},
		{"slow_operation: {hold: 1s}\n", "or field (with value: a JSON path into the request's body"},
		{"slow_operation: {header: X-Test-Delay, value: 400ms, value_json: true}\n", "line 6: slow_operation.value_json: goes with field"},
		{"fail_operation: {field: test.fail, value: \"fail now\", value_json: true}\n", `line 6: fail_operation.value: with value_json, must render to a JSON value such as 400, true or {"ms": 400}; "fail now" (rendered with sample data) is not one`},
	} {
		_, err := parse(httpDoc + tc.extra)
		require.ErrorContains(t, err, tc.want, tc.extra)
	}

	// value_json: the rendered value is put as the JSON value it spells.
	p, err = parse(httpDoc + "slow_operation: {field: test.delay_ms, value: \"{{.HoldMs}}\", hold: 400ms, value_json: true}\n")
	require.NoError(t, err)
	_, body, err := p.ApplySlowHook("/v1/refunds", http.Header{}, `{"order_id":"o-1"}`, "o-1")
	require.NoError(t, err)
	require.JSONEq(t, `{"order_id":"o-1","test":{"delay_ms":400}}`, body)

	// The key's place, or one around or inside it, is the key's.
	keyed := strings.Replace(httpDoc, "base_url:", "key_field: meta.idempotency_key\nbase_url:", 1)
	for _, f := range []string{"meta.idempotency_key", "meta", "meta.idempotency_key.delay"} {
		_, err := parse(keyed + "slow_operation: {field: " + f + ", value: 400ms}\n")
		require.ErrorContains(t, err, "line 7: slow_operation.field: \""+f+"\" collides with key_field meta.idempotency_key", f)
	}
	_, err = parse(keyed + "slow_operation: {field: meta.test_delay, value: 400ms}\n")
	require.NoError(t, err, "a sibling of the key is a place of its own")

	// Over plain HTTP only a JSON object body can carry a field.
	form := strings.Replace(httpDoc, `body: '{"order_id": "{{.Entity}}"}'`, `body: 'order_id={{.Entity}}&amount=4900'`, 1)
	_, err = parse(form + "fail_operation: {field: test.fail, value: \"503\"}\n")
	require.ErrorContains(t, err, "line 6: fail_operation.field: needs a JSON object in operation.body to carry the hook")
	_, err = parse(form + "fail_operation: {header: X-Test-Fail, value: \"503\"}\n")
	require.NoError(t, err, "the header form fits any body")

	// Over MCP the field is in the JSON-RPC request, not its envelope.
	mcpDoc := "name: m\ntransport: mcp\nbase_url: http://127.0.0.1:1\nkey_field: params._meta.idempotency_key\noperation: {tool: refund, body: '{\"order_id\": \"{{.Entity}}\"}'}\nside_effects: {tool: list_refunds, arguments: '{\"order_id\": \"{{.Entity}}\"}', count: result.structuredContent.count}\n" +
		"outcomes: {in_flight: {json: {path: error.code, equals: -32010}}, mismatch: {json: {path: error.code, equals: -32011}}}\nexpect: {missing_key: optional}\n"
	_, err = parse(mcpDoc + "slow_operation: {field: params._meta.test_delay, value: 400ms}\n")
	require.NoError(t, err)
	_, err = parse(mcpDoc + "slow_operation: {field: id, value: 400ms}\n")
	require.ErrorContains(t, err, "line 9: slow_operation.field: \"id\" is the JSON-RPC request's own member")
}

// slow_operation and fail_operation go on one request (race/in-flight-original-fails)
// when their fields are two places; one place, or one inside the other, cannot carry both.
func TestSlowFailNeedsTwoFields(t *testing.T) {
	t.Parallel()
	p, err := profile.Builtin("reference")
	require.NoError(t, err)
	p.Slow = &profile.TestHook{Field: "test.delay", Value: "400ms"}
	p.FailHook = &profile.TestHook{Field: "test.fail", Value: "503"}
	require.Empty(t, p.Missing(profile.CapSlowFail))
	p.FailHook.Field = "test.delay"
	require.Equal(t, "slow_operation and fail_operation on one request (both set test.delay in the body)", p.Missing(profile.CapSlowFail))
	p.FailHook.Field = "test"
	require.Equal(t, "slow_operation and fail_operation on one request (test.delay and test overlap in the body)", p.Missing(profile.CapSlowFail))
	p.FailHook = &profile.TestHook{Header: "X-Test-Fail", Value: "503"}
	require.Empty(t, p.Missing(profile.CapSlowFail), "a field and a header")
}

// Over stdio a tool call has no header, query or path: the field form is the hooks' one
// form there, and the others are refused with that reason.
func TestStdioAcceptsFieldHooksOnly(t *testing.T) {
	t.Parallel()
	withHooks := func(hooks string) string {
		return strings.Replace(stdioDoc, "expect:", hooks+"expect:", 1)
	}
	p, err := profile.Parse("p.yaml", []byte(withHooks("slow_operation: {field: params._meta.test_delay, value: 400ms}\nfail_operation: {field: params._meta.test_fail, value: \"503\"}\n")))
	require.NoError(t, err)
	require.Empty(t, p.Missing(profile.CapSlow))
	require.Empty(t, p.Missing(profile.CapFail))
	require.Empty(t, p.Missing(profile.CapSlowFail))

	for _, hook := range []string{"slow_operation: {header: X-Test-Delay, value: 400ms}\n", "slow_operation: {query: {ms: \"{{.HoldMs}}\"}, hold: 400ms}\n", "slow_operation: {path: /slow, hold: 400ms}\n"} {
		_, err := profile.Parse("p.yaml", []byte(withHooks(hook)))
		require.ErrorContains(t, err, "slow_operation: not with transport: mcp-stdio", hook)
		require.ErrorContains(t, err, "declare it in the field form", hook)
	}
	_, err = profile.Parse("p.yaml", []byte(withHooks("slow_operation: {field: params._meta.idempotency_key, value: 400ms}\n")))
	require.ErrorContains(t, err, "slow_operation.field: \"params._meta.idempotency_key\" collides with key_field")
	_, err = profile.Parse("p.yaml", []byte(withHooks("crash: {field: params._meta.test_crash, after_key: after-key}\n")))
	require.ErrorContains(t, err, "crash: not with transport: mcp-stdio")
}

// The storm puts slow_operation's field into the body it sends; the header is untouched.
func TestApplySlowHookSetsTheField(t *testing.T) {
	t.Parallel()
	p, err := profile.Builtin("reference")
	require.NoError(t, err)
	p.Slow = &profile.TestHook{Field: "test.delay", Value: "{{.HoldMs}}ms", Hold: profile.Duration(400 * time.Millisecond)}
	h := http.Header{}
	path, body, err := p.ApplySlowHook("/v1/refunds", h, `{"order_id": "o1", "amount": 4900}`, "o1")
	require.NoError(t, err)
	require.Equal(t, "/v1/refunds", path)
	require.JSONEq(t, `{"order_id": "o1", "amount": 4900, "test": {"delay": "400ms"}}`, body)
	require.Empty(t, h)
	_, _, err = p.ApplySlowHook("/v1/refunds", h, `order_id=o1`, "o1")
	require.ErrorContains(t, err, "slow_operation.field: the body cannot carry test.delay: not JSON")
}
