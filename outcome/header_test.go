package outcome_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/outcome"
)

func withHeader(status int, name string, values ...string) outcome.Answer {
	h := http.Header{}
	for _, v := range values {
		h.Add(name, v)
	}
	return outcome.Answer{Status: status, Header: h}
}

// An API whose refusals differ only in a header (one status, empty bodies) is described
// by header predicates: equals, matches and exists, the name in any letter case.
func TestRuleByHeader(t *testing.T) {
	conflict := compile(t, outcome.RuleSpec{Status: []int{409}, Header: []outcome.HeaderSpec{{Name: "idempotency-outcome", Equals: ptr("conflict")}}})
	require.True(t, conflict.Matches(withHeader(409, "Idempotency-Outcome", "conflict")))
	require.False(t, conflict.Matches(withHeader(409, "Idempotency-Outcome", "in_progress")))
	require.False(t, conflict.Matches(withHeader(409, "Idempotency-Outcome", "Conflict")), "equals is exact")
	require.False(t, conflict.Matches(withHeader(409, "X-Other", "conflict")))
	require.False(t, conflict.Matches(outcome.Answer{Status: 409}), "no header at all")
	require.True(t, conflict.Matches(withHeader(409, "Idempotency-Outcome", "other", " conflict ")), "any of the header's lines, without the spaces around it")
	require.Equal(t, `status 409 and header Idempotency-Outcome == "conflict"`, conflict.String())

	matches := compile(t, outcome.RuleSpec{Header: []outcome.HeaderSpec{{Name: "Idempotency-Outcome", Matches: ptr("(?i)^in.progress$")}}})
	require.True(t, matches.Matches(withHeader(409, "Idempotency-Outcome", "IN-PROGRESS")))
	require.False(t, matches.Matches(withHeader(409, "Idempotency-Outcome", "conflict")))
	require.False(t, matches.Matches(outcome.Answer{Status: 409}), "an absent header matches no regexp, not even one an empty value would")
	require.Equal(t, `header Idempotency-Outcome ~ /(?i)^in.progress$/`, matches.String())

	present := compile(t, outcome.RuleSpec{Header: []outcome.HeaderSpec{{Name: "Idempotent-Replayed", Exists: ptr(true)}}})
	absent := compile(t, outcome.RuleSpec{Header: []outcome.HeaderSpec{{Name: "Idempotent-Replayed", Exists: ptr(false)}}})
	require.True(t, present.Matches(withHeader(200, "Idempotent-Replayed", "")), "present with an empty value")
	require.False(t, present.Matches(outcome.Answer{Status: 200}))
	require.True(t, absent.Matches(outcome.Answer{Status: 200}))
	require.Equal(t, "header Idempotent-Replayed absent", absent.String())

	both := compile(t, outcome.RuleSpec{Header: []outcome.HeaderSpec{
		{Name: "Idempotency-Outcome", Equals: ptr("conflict")},
		{Name: "Content-Length", Equals: ptr("0")},
	}})
	a := withHeader(409, "Idempotency-Outcome", "conflict")
	require.False(t, both.Matches(a), "every predicate must hold")
	a.Header.Set("Content-Length", "0")
	require.True(t, both.Matches(a))
}

func TestCompileNamesTheBadHeaderPart(t *testing.T) {
	_, errs := outcome.Compile(outcome.RuleSpec{Header: []outcome.HeaderSpec{
		{Name: "", Equals: ptr("x")},
		{Name: "Bad Name:", Exists: ptr(true), Equals: ptr("y")},
		{Name: "X-Ok", Matches: ptr("(")},
		{Name: "X-None"},
	}})
	fields := specFields(t, errs)
	require.ElementsMatch(t, []string{"header[0].name", "header[1].name", "header[1]", "header[2].matches", "header[3]"}, fields)
	_, errs = outcome.Compile(outcome.RuleSpec{Header: []outcome.HeaderSpec{{Name: "X", Exists: ptr(true)}}})
	require.Empty(t, errs, "a header predicate alone is a rule")
}

// Two classes with one status, told apart by a header: each answer gets its class, and
// an answer of that status that neither rule recognises is one the profile does not name.
func TestRulesTellOneStatusApartByAHeader(t *testing.T) {
	rule := func(v string) outcome.Rule {
		return compile(t, outcome.RuleSpec{Status: []int{409}, Header: []outcome.HeaderSpec{{Name: "Idempotency-Outcome", Equals: ptr(v)}}})
	}
	r := outcome.NewRules([]outcome.ClassRules{
		{Class: outcome.InFlight, Rules: []outcome.Rule{rule("in_progress")}},
		{Class: outcome.Mismatch, Rules: []outcome.Rule{rule("conflict")}},
	}, outcome.Statuses{})
	require.Equal(t, outcome.InFlight, r.Classify(withHeader(409, "Idempotency-Outcome", "in_progress")))
	require.Equal(t, outcome.Mismatch, r.Classify(withHeader(409, "Idempotency-Outcome", "conflict")))
	require.Equal(t, outcome.ClientError, r.Classify(outcome.Answer{Status: 409}))
}

// specFields are the fields Compile's errors name, each a *SpecError.
func specFields(t *testing.T, errs []error) []string {
	t.Helper()
	var fields []string
	for _, e := range errs {
		var se *outcome.SpecError
		require.ErrorAs(t, e, &se)
		fields = append(fields, se.Field)
	}
	return fields
}
