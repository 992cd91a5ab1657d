package profile_test

import (
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/profile"
)

// mcpProfile is a complete MCP profile (refusals inside a 200, the key in _meta), which
// the catalogue's tests read too.
var mcpProfile = mustRead("testdata/mcp-refunds.yaml")

func mustRead(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func TestParseTheAgreedMCPProfile(t *testing.T) {
	p, err := profile.Parse("mcp.yaml", []byte(mcpProfile))
	require.NoError(t, err)
	require.Equal(t, "mcp", p.Transport)
	require.Equal(t, "refund", p.Operation.Tool)
	require.Equal(t, "/mcp", p.SideEffects.Path, "the ledger tool is called at the operation's endpoint")
	require.Len(t, p.Outcomes.Classes, 4)
	require.Equal(t, outcome.Success, p.Outcomes.Classes[0].Class, "the order of classes is kept: it is their precedence")
	require.Len(t, p.Outcomes.Classes[2].Rules, 2)
	require.Equal(t, `result.isError == true and text /reused/`, p.Outcomes.Classes[2].Rules[1].String())
	require.NoError(t, p.Validate(), "no expect: statuses needed where the rules recognise the classes")

	cl := p.Classifier()
	classify := func(body string) outcome.Class { return cl.Classify(outcome.Answer{Status: 200, Body: []byte(body)}) }
	require.Equal(t, outcome.InFlight, classify(`{"error":{"code":-32010}}`))
	require.Equal(t, outcome.Mismatch, classify(`{"result":{"isError":true,"content":[{"text":"key reused"}]}}`))
	require.Equal(t, outcome.BusinessError, classify(`{"result":{"isError":true,"content":[{"text":"declined"}]}}`), "MCP default: a tool error")
	require.Equal(t, outcome.Success, classify(`{"result":{"isError":false}}`))
	require.Equal(t, outcome.ClientError, classify(`{"result":{"content":[]}}`),
		"success has its own rule, which an SDK that omits isError:false never meets: the preflight reports it")
	rep, ok := cl.(outcome.RuleReporter)
	require.True(t, ok)
	require.Len(t, rep.Matches(), 6, "5 rules of the profile and the MCP default for business_error")
	require.Equal(t, []string{
		"outcomes.mismatch[0] (error.code == -32011)",
		"outcomes.missing_key (error.code == -32012)",
	}, p.UnmatchedRules(cl), "what the preflight reports: the rules no answer matched (the MCP default is not named)")
	require.Nil(t, parseMinimal(t).UnmatchedRules(outcome.Statuses{}))
}

func TestOutcomesErrorsNameTheField(t *testing.T) {
	i := strings.Index(mcpProfile, "outcomes:")
	doc := mcpProfile[:i] + `outcomes:
  sucess: {status: 200}
  in_flight: {json: {path: error.code, equals: -32010, exists: true}}
  mismatch: [{statuz: 422}, {json: {matches: "("}}, {text: ""}]
  server_error: {status: [500, "x"]}
  success: {}
  missing_key: {status: 400}
  missing_key: {status: 401}
`
	_, err := profile.Parse("mcp.yaml", []byte(doc))
	require.Error(t, err)
	for _, want := range []string{
		"line 17: outcomes.sucess: unknown class (known: success, in_flight, mismatch, missing_key, invalid_key, validation_error, business_error, client_error, server_error, throttled)",
		"line 18: outcomes.in_flight.json: set exactly one of equals, exists, matches (got 2)",
		"line 19: outcomes.mismatch[0].statuz: unknown field (known: header, json, retry_after, status, text)",
		"line 19: outcomes.mismatch[1].json.path: required",
		"line 19: outcomes.mismatch[1].json.matches: not a regular expression",
		"line 19: outcomes.mismatch[2].text: an empty regexp matches every body",
		`line 20: outcomes.server_error.status: must be an HTTP status or a list of them, e.g. 409 or [409, 425], got "x"`,
		"line 21: outcomes.success: a rule needs at least one of status, json, text",
		"outcomes.missing_key: is written twice (first on line 22)",
	} {
		require.Contains(t, err.Error(), want)
	}
}

// A refusal inside a 200 may say in its body when to come back: an in_flight or
// throttled rule names where (retry_after), and the classifier reads it.
func TestOutcomeRulesCarryARetryHint(t *testing.T) {
	doc := strings.Replace(mcpProfile, "  in_flight: {json: {path: error.code, equals: -32010}}\n",
		"  in_flight: {json: {path: error.code, equals: -32010}, retry_after: {path: error.data.retry_after_ms, unit: ms}}\n", 1)
	p, err := profile.Parse("mcp.yaml", []byte(doc))
	require.NoError(t, err)
	hint, wait, ok := outcome.RetryAfterIn(p.Classifier(), outcome.Answer{Status: 200, Body: []byte(`{"error":{"code":-32010,"data":{"retry_after_ms":750}}}`)})
	require.True(t, ok)
	require.Equal(t, "error.data.retry_after_ms (ms)", hint.String())
	require.Equal(t, 750*time.Millisecond, wait)

	i := strings.Index(mcpProfile, "outcomes:")
	_, err = profile.Parse("mcp.yaml", []byte(mcpProfile[:i]+`outcomes:
  in_flight: [{json: {path: error.code, equals: -32010}, retry_after: {path: error.data.wait, every: 2}}, {status: 409, retry_after: {path: wait, unit: minutes}}]
  mismatch: {json: {path: error.code, equals: -32011}, retry_after: {path: error.data.wait, unit: s}}
  throttled: {status: 429, retry_after: 5}
`))
	require.Error(t, err)
	for _, want := range []string{
		`line 17: outcomes.in_flight[0].retry_after.every: unknown field (known: path, unit)`,
		`line 17: outcomes.in_flight[1].retry_after.unit: must be ms or s (the unit of the number at the path), got "minutes"`,
		"line 18: outcomes.mismatch.retry_after: a retry hint belongs to an in_flight or throttled rule",
		"line 19: outcomes.throttled.retry_after: must be {path: P, unit: ms|s}",
	} {
		require.Contains(t, err.Error(), want)
	}
}

func TestMCPFieldsAreChecked(t *testing.T) {
	_, err := profile.Parse("x.yaml", []byte(strings.NewReplacer("  tool: refund\n", "", "require_idempotency_capability: false", "session: sometimes").Replace(mcpProfile)))
	require.Error(t, err)
	require.Contains(t, err.Error(), "operation.tool: required with transport: mcp")
	require.Contains(t, err.Error(), `mcp.session: must be scenario or attempt, got "sometimes"`)

	_, err = profile.Parse("x.yaml", []byte(strings.Replace(mcpProfile, "transport: mcp", "transport: grpc", 1)))
	require.ErrorContains(t, err, `transport: must be http, mcp or mcp-stdio, got "grpc"`)

	_, err = profile.Parse("x.yaml", []byte(strings.Replace(mcpProfile, `arguments: '{"order_id": "{{.Entity}}"}'`, `arguments: '{"order_id": "all"}'`, 1)))
	require.ErrorContains(t, err, "side_effects.arguments: must contain {{.Entity}}")

	// Without outcome rules, the statuses are required again.
	i := strings.Index(mcpProfile, "outcomes:")
	_, err = profile.Parse("x.yaml", []byte(mcpProfile[:i]))
	require.ErrorContains(t, err, "expect.in_flight: must be a 4xx status")
	require.ErrorContains(t, err, "got 0 (or recognise in_flight with outcomes:)")
}

func TestStatusProfileWithoutOutcomesClassifiesAsBefore(t *testing.T) {
	p := parseMinimal(t)
	require.Equal(t, outcome.Statuses{InFlight: 409, Mismatch: 422, MissingKey: 400}, p.Classifier())
}

func TestExtendsWithAnotherKeyPlacement(t *testing.T) {
	for placement, want := range map[string][2]string{
		"key_field: params.arguments.idempotency_key": {"", "params.arguments.idempotency_key"},
		"key_header: X-Idempotency-Key":               {"X-Idempotency-Key", ""},
	} {
		p, err := profile.Parse("child.yaml", []byte(`extends: mcp-sep-3182
base_url: http://127.0.0.1:9
`+placement+`
operation: {tool: refund, body: '{"order_id": "{{.Entity}}"}', altered_body: '{"order_id": "{{.Entity}}", "x": 1}'}
side_effects: {tool: list_refunds, arguments: '{"order_id": "{{.Entity}}"}', count: result.structuredContent.count}
outcomes: {in_flight: {json: {path: error.code, equals: -32010}}}
`))
		require.NoError(t, err, placement)
		require.True(t, p.Outcomes.Covers(outcome.Mismatch), "the preset's rule stays beside the child's")
		require.Equal(t, want[0], p.KeyHeader, placement)
		require.Equal(t, want[1], p.KeyField, placement)
	}
}

func TestPresetsForAgentProtocols(t *testing.T) {
	sep, err := profile.Builtin("mcp-sep-3182")
	require.NoError(t, err)
	require.Equal(t, "mcp", sep.Transport)
	require.Equal(t, "params.idempotencyKey", sep.KeyField)
	require.True(t, sep.MCP.RequireIdempotencyCapability)
	cl := sep.Classifier()
	require.Equal(t, outcome.Mismatch, cl.Classify(outcome.Answer{Status: 200, Body: []byte(`{"error":{"code":-32602,"message":"idempotency key reused with different arguments"}}`)}))
	require.Equal(t, outcome.Success, cl.Classify(outcome.Answer{Status: 200, Body: []byte(`{"result":{"content":[]}}`)}))

	acp, err := profile.Builtin("acp")
	require.NoError(t, err)
	require.Equal(t, "Idempotency-Key", acp.KeyHeader)
	require.Equal(t, "Idempotent-Replayed", acp.Expect.ReplayHeader)
	cl = acp.Classifier()
	for body, want := range map[string]outcome.Class{
		`{"type":"invalid_request","code":"idempotency_key_required","message":"m"}`: outcome.MissingKey,
		`{"type":"invalid_request","code":"idempotency_in_flight","message":"m"}`:    outcome.InFlight,
		`{"type":"invalid_request","code":"idempotency_conflict","message":"m"}`:     outcome.Mismatch,
	} {
		status := map[outcome.Class]int{outcome.MissingKey: 400, outcome.InFlight: 409, outcome.Mismatch: 422}[want]
		require.Equal(t, want, cl.Classify(outcome.Answer{Status: status, Body: []byte(body)}), body)
		require.Equal(t, outcome.ClientError, cl.Classify(outcome.Answer{Status: status, Body: []byte(`{"code":"other"}`)}),
			"the status alone is not the ACP refusal: its code is")
	}
	// A user profile on the preset: the preset's rules stay, the target is the user's.
	p, err := profile.Parse("shop.yaml", []byte(`extends: acp
base_url: http://127.0.0.1:9
operation: {path: /checkout_sessions, body: '{"items": [{"id": "{{.Entity}}", "quantity": 1}]}', altered_body: '{"items": [{"id": "{{.Entity}}", "quantity": 2}]}'}
side_effects: {path: '/test/orders?item={{.Entity}}', count: data.#}
`))
	require.NoError(t, err)
	require.True(t, p.Outcomes.Covers(outcome.InFlight))

	// A class named again replaces the preset's rules for it whole.
	p, err = profile.Parse("tool.yaml", []byte(`extends: mcp-sep-3182
base_url: http://127.0.0.1:9
operation: {tool: refund, body: '{"order_id": "{{.Entity}}"}'}
side_effects: {tool: list_refunds, arguments: '{"order_id": "{{.Entity}}"}', count: result.structuredContent.count}
outcomes:
  in_flight: {json: {path: error.code, equals: -32010}}
  mismatch: {json: {path: error.code, equals: -32011}}
`))
	require.NoError(t, err)
	require.Len(t, p.Outcomes.Classes, 2)
	require.Equal(t, outcome.Mismatch, p.Outcomes.Classes[0].Class, "the preset's class keeps its place")
	require.Equal(t, "error.code == -32011", p.Outcomes.Classes[0].Rules[0].String())
}

// parseMinimal is minimalProfile parsed: a plain status profile without outcome rules.
func parseMinimal(t *testing.T) *profile.Profile {
	t.Helper()
	p, err := profile.Parse("x.yaml", []byte(minimalProfile))
	require.NoError(t, err)
	return p
}

// headerToldDoc is an API that answers both a repeat in flight and a changed payload
// with 409 and an empty body, told apart only by its Idempotency-Outcome header.
const headerToldDoc = `name: header-told
base_url: http://127.0.0.1:9000
operation: {path: /charges, body: '{"order": "{{.Entity}}", "amount": 100}'}
side_effects: {path: '/charges?order={{.Entity}}', count: total}
expect: {in_flight: 409, mismatch: 409, missing_key: "400"}
outcomes:
  in_flight: {status: 409, header: {name: Idempotency-Outcome, equals: in_progress}}
  mismatch: {status: 409, header: {name: idempotency-outcome, equals: conflict}}
`

func headerAnswer(status int, name, value string) outcome.Answer {
	return outcome.Answer{Status: status, Header: http.Header{http.CanonicalHeaderKey(name): {value}}}
}

// The honest `mismatch: 409` of such an API loads when header rules tell the two
// apart, and its answers get their classes.
func TestOutcomeRulesReadHeaders(t *testing.T) {
	p, err := profile.Parse("h.yaml", []byte(headerToldDoc))
	require.NoError(t, err)
	require.Equal(t, `status 409 and header Idempotency-Outcome == "conflict"`, p.Outcomes.Classes[1].Rules[0].String())
	cl := p.Classifier()
	require.Equal(t, outcome.InFlight, cl.Classify(headerAnswer(409, "Idempotency-Outcome", "in_progress")))
	require.Equal(t, outcome.Mismatch, cl.Classify(headerAnswer(409, "Idempotency-Outcome", "conflict")))
	require.Equal(t, outcome.ClientError, cl.Classify(outcome.Answer{Status: 409}), "a 409 neither rule recognises is one the profile does not name")
	require.Equal(t, outcome.MissingKey, cl.Classify(outcome.Answer{Status: 400}))
	require.Equal(t, []string{"Idempotency-Outcome"}, p.OutcomeHeaders(), "the runner keeps the headers the rules read, for the evidence")

	// The other predicates, and a list of them.
	doc := strings.Replace(headerToldDoc, "{name: idempotency-outcome, equals: conflict}",
		"[{name: Idempotency-Outcome, matches: '^confl'}, {name: X-Request-Id, exists: true}]", 1)
	p, err = profile.Parse("h.yaml", []byte(doc))
	require.NoError(t, err)
	a := headerAnswer(409, "Idempotency-Outcome", "conflict")
	require.Equal(t, outcome.ClientError, p.Classifier().Classify(a), "every predicate of the list must hold")
	a.Header.Set("X-Request-Id", "r1")
	require.Equal(t, outcome.Mismatch, p.Classifier().Classify(a))

	// Under a preset: the status is overridden and the rules added beside its own.
	p, err = profile.Parse("h.yaml", []byte(`extends: ietf-draft-07
base_url: http://127.0.0.1:9000
operation: {path: /charges, body: '{"order": "{{.Entity}}", "amount": 100}'}
side_effects: {path: '/charges?order={{.Entity}}', count: total}
expect: {mismatch: 409}
outcomes:
  mismatch: {status: 409, header: {name: Idempotency-Outcome, equals: conflict}}
`))
	require.NoError(t, err)
	require.Equal(t, 409, p.Expect.InFlight)
	require.Equal(t, outcome.Mismatch, p.Classifier().Classify(headerAnswer(409, "Idempotency-Outcome", "conflict")))
	require.Equal(t, outcome.InFlight, p.Classifier().Classify(headerAnswer(409, "Idempotency-Outcome", "in_progress")),
		"a 409 the mismatch rule does not recognise is the in-flight refusal: only one of the two classes needs a rule")
}

func TestHeaderRuleErrorsNameTheFieldAndLine(t *testing.T) {
	i := strings.Index(headerToldDoc, "outcomes:")
	_, err := profile.Parse("h.yaml", []byte(headerToldDoc[:i]+`outcomes:
  in_flight: {status: 409, header: {name: Idempotency-Outcome, equals: in_progress, exists: true}}
  mismatch: {header: [{equals: conflict}, {name: "Bad Name", matches: "("}]}
  success: {header: "Idempotency-Outcome"}
  business_error: {header: {name: X, value: 1}}
`))
	require.Error(t, err)
	for _, want := range []string{
		"line 7: outcomes.in_flight.header: set exactly one of equals, exists, matches (got 2)",
		"line 8: outcomes.mismatch.header[0].name: required",
		`line 8: outcomes.mismatch.header[1].name: must be a header name such as Idempotency-Outcome, got "Bad Name"`,
		"line 8: outcomes.mismatch.header[1].matches: not a regular expression",
		"line 9: outcomes.success.header: must be {name: N, equals: V} (or exists: true|false, or matches: REGEXP)",
		"line 10: outcomes.business_error.header.value: unknown field (known: equals, exists, matches, name)",
	} {
		require.Contains(t, err.Error(), want)
	}
}
