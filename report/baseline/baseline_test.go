package baseline_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/report/baseline"
	"github.com/idemproof/idemproof/verdict"
)

func run(strict bool, results ...verdict.Result) *verdict.Report {
	return &verdict.Report{Strict: strict, Results: results}
}

func res(target, id string, v verdict.Verdict) verdict.Result {
	return verdict.Result{Target: target, ScenarioID: id, Verdict: v}
}

func TestApplyMarksKnownFailuresAndReturnsRegressions(t *testing.T) {
	base := run(false,
		res("api", "replay/after-503", verdict.Fail),
		res("api", "key/empty", verdict.Pass),
		res("api", "race/burst-50", verdict.Unknown),
	)
	rep := run(true,
		res("api", "replay/after-503", verdict.Fail),     // known
		res("api", "key/empty", verdict.Fail),            // worse: regression
		res("api", "race/burst-50", verdict.Unknown),     // known (failing under strict)
		res("api", "scope/other-endpoint", verdict.Fail), // new and failing: regression
		res("other", "replay/after-503", verdict.Fail),   // another target: new
		res("api", "replay/marker", verdict.Pass),
	)
	regressions, pairing, err := baseline.Apply(rep, base)
	require.NoError(t, err)
	require.Equal(t, []string{"other"}, pairing.OnlyAfter, "a target the baseline lacks is named")
	require.Contains(t, pairing.Note(), `target "other" is not in the baseline: its failing results are new`)
	var ids []string
	for _, r := range regressions {
		ids = append(ids, r.ScenarioID+"@"+r.Target)
	}
	require.Equal(t, []string{"key/empty@api", "scope/other-endpoint@api", "replay/after-503@other"}, ids)
	require.True(t, rep.Results[0].KnownFailure)
	require.Equal(t, verdict.Fail, rep.Results[0].BaselineVerdict)
	require.True(t, rep.Results[2].KnownFailure)
	require.Equal(t, verdict.Unknown, rep.Results[2].BaselineVerdict)
	for _, i := range []int{1, 3, 4, 5} {
		require.False(t, rep.Results[i].KnownFailure, rep.Results[i].ScenarioID)
	}
}

func TestApplyCountsAWorseFailureAsARegression(t *testing.T) {
	rep := run(true, res("api", "key/empty", verdict.Fail))
	regressions, _, err := baseline.Apply(rep, run(true, res("api", "key/empty", verdict.NonStrict)))
	require.NoError(t, err)
	require.Len(t, regressions, 1, "NON-STRICT in the baseline, FAIL now: worse")
	require.False(t, rep.Results[0].KnownFailure)
}

func TestDiffListsChangesAndWhichAreWorse(t *testing.T) {
	a := run(false,
		res("api", "replay/after-503", verdict.Pass),
		res("api", "key/empty", verdict.NonStrict),
		res("api", "race/burst-50", verdict.Pass),
		res("api", "gone/one", verdict.Pass),
	)
	b := run(false,
		res("api", "replay/after-503", verdict.Fail),
		res("api", "key/empty", verdict.Pass),
		res("api", "race/burst-50", verdict.Pass),
		res("api", "new/one", verdict.Unknown),
	)
	changes, pairing, err := baseline.Diff(a, b)
	require.NoError(t, err)
	require.False(t, pairing.ByPosition)
	require.Empty(t, pairing.Note(), "paired by name, every one")
	require.Equal(t, []baseline.Change{
		{Target: "api", Scenario: "replay/after-503", Before: verdict.Pass, After: verdict.Fail},
		{Target: "api", Scenario: "new/one", After: verdict.Unknown},
		{Target: "api", Scenario: "key/empty", Before: verdict.NonStrict, After: verdict.Pass},
		{Target: "api", Scenario: "gone/one", Before: verdict.Pass},
	}, changes, "the worse first, then the better, then what is only in one of them")
	var worse []bool
	for _, c := range changes {
		worse = append(worse, c.Worse())
	}
	require.Equal(t, []bool{true, true, false, false}, worse)
	same, _, err := baseline.Diff(b, b)
	require.NoError(t, err)
	require.Empty(t, same)
}

// Two single-target reports whose targets are named differently (a renamed profile, a
// staging and a production profile) pair by position, saying so, in either direction.
func TestSingleTargetReportsWithOtherNamesPairByPosition(t *testing.T) {
	old := &verdict.Report{Targets: []string{"api-staging"}, Results: []verdict.Result{
		res("api-staging", "replay/after-503", verdict.Pass),
		res("api-staging", "key/empty", verdict.Fail),
		res("api-staging", "race/burst-50", verdict.Pass),
	}}
	cur := &verdict.Report{Targets: []string{"api-prod"}, Results: []verdict.Result{
		res("api-prod", "replay/after-503", verdict.Fail),
		res("api-prod", "key/empty", verdict.Fail),
		res("api-prod", "race/burst-50", verdict.Pass),
	}}
	changes, pairing, err := baseline.Diff(old, cur)
	require.NoError(t, err)
	require.True(t, pairing.ByPosition)
	require.Equal(t, []baseline.TargetPair{{Before: "api-staging", After: "api-prod"}}, pairing.Pairs)
	require.Equal(t, `paired by position: target "api-staging" with "api-prod" (one target each, named differently)`, pairing.Note())
	require.Equal(t, []baseline.Change{
		{Target: "api-prod", BeforeTarget: "api-staging", Scenario: "replay/after-503", Before: verdict.Pass, After: verdict.Fail},
	}, changes)
	require.True(t, changes[0].Worse())

	back, _, err := baseline.Diff(cur, old)
	require.NoError(t, err)
	require.Len(t, back, 1)
	require.False(t, back[0].Worse(), "the reverse: better, not 138 rows of new and gone")

	cur.Strict = true
	regressions, pairing, err := baseline.Apply(cur, old)
	require.NoError(t, err)
	require.True(t, pairing.ByPosition)
	require.Len(t, regressions, 1)
	require.Equal(t, "replay/after-503", regressions[0].ScenarioID)
	require.True(t, cur.Results[1].KnownFailure, "key/empty failed in the baseline under its other name")
}

// A baseline that matches nothing is an error, never a run that applied nothing in
// silence: several targets none of which pairs, an empty baseline, one with none of the
// run's scenarios.
func TestABaselineThatMatchesNothingIsAnError(t *testing.T) {
	cur := &verdict.Report{Targets: []string{"a", "b"}, Results: []verdict.Result{
		res("a", "replay/after-503", verdict.Fail), res("b", "replay/after-503", verdict.Fail)}}
	other := &verdict.Report{Targets: []string{"x", "y"}, Results: []verdict.Result{
		res("x", "replay/after-503", verdict.Fail), res("y", "replay/after-503", verdict.Fail)}}
	_, _, err := baseline.Apply(cur, other)
	require.EqualError(t, err, `no target of this run is in the baseline: it has "x", "y"; this run "a", "b" (several targets pair by name only)`)
	_, _, err = baseline.Diff(other, cur)
	require.Error(t, err)

	_, _, err = baseline.Apply(cur, &verdict.Report{})
	require.EqualError(t, err, "the baseline has no results: nothing to compare with")

	elsewhere := &verdict.Report{Targets: []string{"a"}, Results: []verdict.Result{res("a", "key/empty", verdict.Pass)}}
	_, _, err = baseline.Apply(cur, elsewhere)
	require.EqualError(t, err, `no scenario of this run is in the baseline (it has key/empty): nothing to compare with`)
}
