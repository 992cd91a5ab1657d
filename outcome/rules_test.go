package outcome_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/outcome"
)

func compile(t *testing.T, s outcome.RuleSpec) outcome.Rule {
	t.Helper()
	r, errs := outcome.Compile(s)
	require.Empty(t, errs)
	return r
}

func ptr[T any](v T) *T { return &v }

func answer(status int, body string) outcome.Answer {
	return outcome.Answer{Status: status, Body: []byte(body)}
}

func TestRuleByStatus(t *testing.T) {
	r := compile(t, outcome.RuleSpec{Status: []int{409, 425}})
	require.True(t, r.Matches(answer(409, "")))
	require.True(t, r.Matches(answer(425, "")))
	require.False(t, r.Matches(answer(200, "")))
	require.Equal(t, "status 409|425", r.String())
}

func TestRuleByJSONPath(t *testing.T) {
	inFlight := `{"jsonrpc":"2.0","id":3,"error":{"code":-32010,"message":"in progress"}}`
	result := `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"ok"}],"isError":false}}`
	equals := compile(t, outcome.RuleSpec{JSON: []outcome.JSONSpec{{Path: "error.code", Equals: -32010, HasEquals: true}}})
	require.True(t, equals.Matches(answer(200, inFlight)))
	require.False(t, equals.Matches(answer(200, result)))
	require.False(t, equals.Matches(answer(200, "not json")))

	isFalse := compile(t, outcome.RuleSpec{JSON: []outcome.JSONSpec{{Path: "result.isError", Equals: false, HasEquals: true}}})
	require.True(t, isFalse.Matches(answer(200, result)))
	require.False(t, isFalse.Matches(answer(200, `{"result":{}}`)), "a missing field never equals false")

	exists := compile(t, outcome.RuleSpec{JSON: []outcome.JSONSpec{{Path: "result", Exists: ptr(true)}}})
	absent := compile(t, outcome.RuleSpec{JSON: []outcome.JSONSpec{{Path: "error", Exists: ptr(false)}}})
	require.True(t, exists.Matches(answer(200, result)))
	require.False(t, exists.Matches(answer(200, inFlight)))
	require.True(t, absent.Matches(answer(200, result)))
	require.False(t, absent.Matches(answer(200, inFlight)))

	matches := compile(t, outcome.RuleSpec{JSON: []outcome.JSONSpec{{Path: "error.message", Matches: ptr("(?i)IN PROGRESS")}}})
	require.True(t, matches.Matches(answer(200, inFlight)))
	require.False(t, matches.Matches(answer(200, result)))
	number := compile(t, outcome.RuleSpec{JSON: []outcome.JSONSpec{{Path: "error.code", Matches: ptr("^-3201[01]$")}}})
	require.True(t, number.Matches(answer(200, inFlight)), "a number is matched as written")

	str := compile(t, outcome.RuleSpec{JSON: []outcome.JSONSpec{{Path: "code", Equals: "idempotency_conflict", HasEquals: true}}})
	require.True(t, str.Matches(answer(422, `{"type":"invalid_request","code":"idempotency_conflict"}`)))
	require.False(t, str.Matches(answer(422, `{"code":"idempotency_in_flight"}`)))
}

func TestRuleByText(t *testing.T) {
	r := compile(t, outcome.RuleSpec{Text: "reused"})
	require.True(t, r.Matches(answer(200, `{"result":{"isError":true,"content":[{"text":"key reused with other arguments"}]}}`)))
	require.False(t, r.Matches(answer(200, `{"result":{}}`)))
}

func TestRuleAllPredicatesMustHold(t *testing.T) {
	r := compile(t, outcome.RuleSpec{
		Status: []int{200},
		JSON:   []outcome.JSONSpec{{Path: "result.isError", Equals: true, HasEquals: true}},
		Text:   "reused",
	})
	require.True(t, r.Matches(answer(200, `{"result":{"isError":true,"content":[{"text":"reused"}]}}`)))
	require.False(t, r.Matches(answer(200, `{"result":{"isError":true,"content":[{"text":"declined"}]}}`)), "text fails")
	require.False(t, r.Matches(answer(200, `{"result":{"isError":false,"content":[{"text":"reused"}]}}`)), "json fails")
	require.False(t, r.Matches(answer(500, `{"result":{"isError":true,"content":[{"text":"reused"}]}}`)), "status fails")
	require.Equal(t, `status 200 and result.isError == true and text /reused/`, r.String())
}

func TestCompileNamesTheBadPart(t *testing.T) {
	_, errs := outcome.Compile(outcome.RuleSpec{})
	require.Len(t, errs, 1)
	require.Contains(t, errs[0].Error(), "at least one of status, json, text")

	_, errs = outcome.Compile(outcome.RuleSpec{
		Status: []int{42},
		JSON:   []outcome.JSONSpec{{Path: "", Matches: ptr("(")}, {Path: "a", Exists: ptr(true), Equals: 1, HasEquals: true}},
		Text:   "[",
	})
	fields := specFields(t, errs)
	require.ElementsMatch(t, []string{"status[0]", "json[0].path", "json[0].matches", "json[1]", "text"}, fields)

	_, errs = outcome.Compile(outcome.RuleSpec{JSON: []outcome.JSONSpec{{Path: "a", Equals: []any{1}, HasEquals: true}}})
	require.Len(t, errs, 1)
	require.Contains(t, errs[0].Error(), "json.equals: must be a JSON scalar")
}

// jsonRPC are the outcome rules of a JSON-RPC tool server that refuses inside a 200.
func jsonRPC(t *testing.T) *outcome.Rules {
	rule := func(path string, v any) outcome.Rule {
		return compile(t, outcome.RuleSpec{JSON: []outcome.JSONSpec{{Path: path, Equals: v, HasEquals: true}}})
	}
	return outcome.NewRules([]outcome.ClassRules{
		{Class: outcome.InFlight, Rules: []outcome.Rule{rule("error.code", -32010)}},
		{Class: outcome.Mismatch, Rules: []outcome.Rule{rule("error.code", -32011), compile(t, outcome.RuleSpec{Text: "reused"})}},
		{Class: outcome.BusinessError, Rules: []outcome.Rule{rule("result.isError", true)}},
		{Class: outcome.Success, Rules: []outcome.Rule{compile(t, outcome.RuleSpec{JSON: []outcome.JSONSpec{{Path: "result", Exists: ptr(true)}}})}},
	}, outcome.Statuses{InFlight: 409, Mismatch: 422, MissingKey: 400})
}

func TestRulesClassifyByPrecedenceAndFallBack(t *testing.T) {
	r := jsonRPC(t)
	for body, want := range map[string]outcome.Class{
		`{"id":1,"error":{"code":-32010}}`:                                   outcome.InFlight,
		`{"id":1,"error":{"code":-32011}}`:                                   outcome.Mismatch,
		`{"id":1,"result":{"isError":true,"content":[{"text":"reused"}]}}`:   outcome.Mismatch, // mismatch precedes business_error
		`{"id":1,"result":{"isError":true,"content":[{"text":"declined"}]}}`: outcome.BusinessError,
		`{"id":1,"result":{"content":[]}}`:                                   outcome.Success,
		// success has rules and none matched: an unknown JSON-RPC error in a 200 is not a success
		`{"id":1,"error":{"code":-32602}}`: outcome.ClientError,
	} {
		require.Equal(t, want, r.Classify(answer(200, body)), body)
	}
	// Classes the rules do not cover fall back to the statuses.
	require.Equal(t, outcome.MissingKey, r.Classify(answer(400, "")))
	require.Equal(t, outcome.ServerError, r.Classify(answer(503, "")))
	require.Equal(t, outcome.Info, r.Classify(answer(0, "")))
	// in_flight is covered: a bare 409 without the code is not recognised as in flight.
	require.Equal(t, outcome.ClientError, r.Classify(answer(409, "")))
}

// A 5xx and a 429 keep their class whatever body they carry, unless a rule names the
// status: the in-flight refusal's error body sent with a 500 is a server failure, not
// the refusal (a GraphQL server that answers its conflicts 500). An answer not seen
// (no status) is never classed by a rule, not even by one that an empty body satisfies.
func TestRulesLeave5xx429AndUnseenAnswersAloneUnlessTheyNameTheStatus(t *testing.T) {
	r := jsonRPC(t)
	require.Equal(t, outcome.ServerError, r.Classify(answer(500, `{"id":1,"error":{"code":-32010}}`)))
	require.Equal(t, outcome.ServerError, r.Classify(answer(503, `{"id":1,"result":{"content":[]}}`)))
	require.Equal(t, outcome.Throttled, r.Classify(answer(429, `{"id":1,"error":{"code":-32011}}`)))

	absent := outcome.NewRules([]outcome.ClassRules{
		{Class: outcome.Success, Rules: []outcome.Rule{compile(t, outcome.RuleSpec{JSON: []outcome.JSONSpec{{Path: "errors", Exists: ptr(false)}}})}},
	}, outcome.Statuses{})
	require.Equal(t, outcome.Info, absent.Classify(answer(0, "")))
	require.Equal(t, outcome.Success, absent.Classify(answer(200, `{"data":{}}`)))

	named := outcome.NewRules([]outcome.ClassRules{
		{Class: outcome.Throttled, Rules: []outcome.Rule{compile(t, outcome.RuleSpec{Status: []int{503}, Text: "SlowDown"})}},
	}, outcome.Statuses{})
	require.Equal(t, outcome.Throttled, named.Classify(answer(503, `<Error><Code>SlowDown</Code></Error>`)), "S3's 503 SlowDown, named")
	require.Equal(t, outcome.ServerError, named.Classify(answer(503, `<Error><Code>InternalError</Code></Error>`)))
}

func TestRulesReportTheRulesThatNeverMatched(t *testing.T) {
	r := jsonRPC(t)
	var _ outcome.RuleReporter = r
	require.Len(t, r.Unmatched(), 5)
	r.Classify(answer(200, `{"error":{"code":-32010}}`))
	r.Classify(answer(200, `{"error":{"code":-32010}}`))
	r.Classify(answer(200, `{"result":{}}`))
	m := r.Matches()
	require.Len(t, m, 5)
	require.Equal(t, outcome.RuleMatch{Class: outcome.InFlight, Index: 0, Rule: "error.code == -32010", Count: 2}, m[0])
	un := r.Unmatched()
	require.Len(t, un, 3)
	require.Equal(t, outcome.Mismatch, un[0].Class)
	require.Equal(t, 0, un[0].Index)
	require.Equal(t, 1, un[1].Index)
	require.Equal(t, "text /reused/", un[1].Rule)
	require.Equal(t, outcome.BusinessError, un[2].Class)
}
