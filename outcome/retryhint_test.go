package outcome_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/outcome"
)

// A JSON-RPC server's in-progress refusal says in its error data how long to wait.
func hinted(t *testing.T) *outcome.Rules {
	t.Helper()
	inFlight := compile(t, outcome.RuleSpec{
		JSON:       []outcome.JSONSpec{{Path: "error.code", Equals: -32010, HasEquals: true}},
		RetryAfter: &outcome.RetryHintSpec{Path: "error.data.retry_after_ms", Unit: "ms"},
	})
	throttled := compile(t, outcome.RuleSpec{
		JSON:       []outcome.JSONSpec{{Path: "error.code", Equals: -32029, HasEquals: true}},
		RetryAfter: &outcome.RetryHintSpec{Path: "error.data.retry_after", Unit: "s"},
	})
	mismatch := compile(t, outcome.RuleSpec{JSON: []outcome.JSONSpec{{Path: "error.code", Equals: -32011, HasEquals: true}}})
	return outcome.NewRules([]outcome.ClassRules{
		{Class: outcome.InFlight, Rules: []outcome.Rule{inFlight}},
		{Class: outcome.Throttled, Rules: []outcome.Rule{throttled}},
		{Class: outcome.Mismatch, Rules: []outcome.Rule{mismatch}},
	}, outcome.Statuses{})
}

func TestRetryHintReadsTheWaitOfTheRuleThatClassesTheAnswer(t *testing.T) {
	r := hinted(t)
	hint, wait, ok := outcome.RetryAfterIn(r, answer(200, `{"error":{"code":-32010,"data":{"retry_after_ms":500}}}`))
	require.True(t, ok)
	require.Equal(t, 500*time.Millisecond, wait)
	require.Equal(t, "error.data.retry_after_ms (ms)", hint.String())

	_, wait, ok = outcome.RetryAfterIn(r, answer(200, `{"error":{"code":-32029,"data":{"retry_after":"2"}}}`))
	require.True(t, ok, "a numeric string is read as its number")
	require.Equal(t, 2*time.Second, wait)

	_, wait, ok = outcome.RetryAfterIn(r, answer(200, `{"error":{"code":-32010,"data":{"retry_after_ms":1.5}}}`))
	require.True(t, ok)
	require.Equal(t, 1500*time.Microsecond, wait)
}

// The rule declares a hint the answer lacks (or spoils): the hint is named, the wait is
// not ok — what a checker reports as a missing hint.
func TestRetryHintMissingOrUnreadable(t *testing.T) {
	r := hinted(t)
	for _, body := range []string{
		`{"error":{"code":-32010}}`,
		`{"error":{"code":-32010,"data":{"retry_after_ms":-1}}}`,
		`{"error":{"code":-32010,"data":{"retry_after_ms":"soon"}}}`,
		`{"error":{"code":-32010,"data":{"retry_after_ms":{"v":1}}}}`,
		`{"error":{"code":-32010,"data":{"retry_after_ms":1e300}}}`,
	} {
		hint, _, ok := outcome.RetryAfterIn(r, answer(200, body))
		require.NotNil(t, hint, body)
		require.False(t, ok, body)
	}
	// The rule that classes the answer has no hint, or no rule does, or no rules at all.
	hint, _, _ := outcome.RetryAfterIn(r, answer(200, `{"error":{"code":-32011,"data":{"retry_after_ms":5}}}`))
	require.Nil(t, hint)
	hint, _, _ = outcome.RetryAfterIn(r, answer(409, `{"data":{"retry_after_ms":5}}`))
	require.Nil(t, hint)
	hint, _, _ = outcome.RetryAfterIn(outcome.Statuses{InFlight: 409}, answer(409, ``))
	require.Nil(t, hint)
	// A 500 with the refusal's body is no refusal (a rule classes a 5xx only when it names
	// the status), so its hint is no hint.
	hint, _, _ = outcome.RetryAfterIn(r, answer(500, `{"error":{"code":-32010,"data":{"retry_after_ms":5}}}`))
	require.Nil(t, hint)
}

func TestCompileChecksTheRetryHint(t *testing.T) {
	_, errs := outcome.Compile(outcome.RuleSpec{Status: []int{409}, RetryAfter: &outcome.RetryHintSpec{Unit: "minutes"}})
	require.Len(t, errs, 2)
	require.EqualError(t, errs[0], "retry_after.path: required: a gjson path to the wait in the body, e.g. error.data.retry_after_ms")
	require.EqualError(t, errs[1], `retry_after.unit: must be ms or s (the unit of the number at the path), got "minutes"`)

	r := compile(t, outcome.RuleSpec{Status: []int{200}, RetryAfter: &outcome.RetryHintSpec{Path: "wait", Unit: "s"}})
	require.Equal(t, "status 200, retry after wait (s)", r.String())
	require.True(t, r.Matches(answer(200, `{}`)), "a hint takes no part in matching")
}
