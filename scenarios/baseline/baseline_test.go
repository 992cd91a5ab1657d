package baseline_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/scenarios"
	"github.com/idemproof/idemproof/scenarios/baseline"
)

func run(strict bool, results ...scenarios.Result) *scenarios.Report {
	return &scenarios.Report{Strict: strict, Results: results}
}

func res(target, id string, v scenarios.Verdict) scenarios.Result {
	return scenarios.Result{Target: target, ScenarioID: id, Verdict: v}
}

func TestApplyMarksKnownFailuresAndReturnsRegressions(t *testing.T) {
	base := run(false,
		res("api", "replay/after-503", scenarios.Fail),
		res("api", "key/empty", scenarios.Pass),
		res("api", "race/burst-50", scenarios.Unknown),
	)
	rep := run(true,
		res("api", "replay/after-503", scenarios.Fail),     // known
		res("api", "key/empty", scenarios.Fail),            // worse: regression
		res("api", "race/burst-50", scenarios.Unknown),     // known (failing under strict)
		res("api", "scope/other-endpoint", scenarios.Fail), // new and failing: regression
		res("other", "replay/after-503", scenarios.Fail),   // another target: new
		res("api", "replay/marker", scenarios.Pass),
	)
	regressions := baseline.Apply(rep, base)
	var ids []string
	for _, r := range regressions {
		ids = append(ids, r.ScenarioID+"@"+r.Target)
	}
	require.Equal(t, []string{"key/empty@api", "scope/other-endpoint@api", "replay/after-503@other"}, ids)
	require.True(t, rep.Results[0].KnownFailure)
	require.Equal(t, scenarios.Fail, rep.Results[0].BaselineVerdict)
	require.True(t, rep.Results[2].KnownFailure)
	require.Equal(t, scenarios.Unknown, rep.Results[2].BaselineVerdict)
	for _, i := range []int{1, 3, 4, 5} {
		require.False(t, rep.Results[i].KnownFailure, rep.Results[i].ScenarioID)
	}
}

func TestApplyCountsAWorseFailureAsARegression(t *testing.T) {
	rep := run(true, res("api", "key/empty", scenarios.Fail))
	require.Len(t, baseline.Apply(rep, run(true, res("api", "key/empty", scenarios.NonStrict))), 1,
		"NON-STRICT in the baseline, FAIL now: worse")
	require.False(t, rep.Results[0].KnownFailure)
}

func TestDiffListsChangesAndWhichAreWorse(t *testing.T) {
	a := run(false,
		res("api", "replay/after-503", scenarios.Pass),
		res("api", "key/empty", scenarios.NonStrict),
		res("api", "race/burst-50", scenarios.Pass),
		res("api", "gone/one", scenarios.Pass),
	)
	b := run(false,
		res("api", "replay/after-503", scenarios.Fail),
		res("api", "key/empty", scenarios.Pass),
		res("api", "race/burst-50", scenarios.Pass),
		res("api", "new/one", scenarios.Unknown),
	)
	changes := baseline.Diff(a, b)
	require.Equal(t, []baseline.Change{
		{Target: "api", Scenario: "replay/after-503", Before: scenarios.Pass, After: scenarios.Fail},
		{Target: "api", Scenario: "key/empty", Before: scenarios.NonStrict, After: scenarios.Pass},
		{Target: "api", Scenario: "new/one", After: scenarios.Unknown},
		{Target: "api", Scenario: "gone/one", Before: scenarios.Pass},
	}, changes)
	var worse []bool
	for _, c := range changes {
		worse = append(worse, c.Worse())
	}
	require.Equal(t, []bool{true, false, true, false}, worse)
	require.Empty(t, baseline.Diff(b, b))
}
