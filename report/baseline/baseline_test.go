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
	regressions := baseline.Apply(rep, base)
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
	require.Len(t, baseline.Apply(rep, run(true, res("api", "key/empty", verdict.NonStrict))), 1,
		"NON-STRICT in the baseline, FAIL now: worse")
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
	changes := baseline.Diff(a, b)
	require.Equal(t, []baseline.Change{
		{Target: "api", Scenario: "replay/after-503", Before: verdict.Pass, After: verdict.Fail},
		{Target: "api", Scenario: "key/empty", Before: verdict.NonStrict, After: verdict.Pass},
		{Target: "api", Scenario: "new/one", After: verdict.Unknown},
		{Target: "api", Scenario: "gone/one", Before: verdict.Pass},
	}, changes)
	var worse []bool
	for _, c := range changes {
		worse = append(worse, c.Worse())
	}
	require.Equal(t, []bool{true, false, true, false}, worse)
	require.Empty(t, baseline.Diff(b, b))
}
