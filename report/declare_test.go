package report_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/report"
	"github.com/idemproof/idemproof/verdict"
)

func na(target, id string, level verdict.Level, undeclared ...string) verdict.Result {
	return verdict.Result{Target: target, ScenarioID: id, Level: level, Verdict: verdict.NA, Message: "needs something", Undeclared: undeclared}
}

// The steps are greedy: each judges the most of what is left once the steps above it
// are declared; a scenario needing two declarations counts for the second; ties go to
// the stronger levels; scenarios no single declaration judges are named together.
func TestDeclareNextRanksByScenariosJudged(t *testing.T) {
	t.Parallel()
	rep := &verdict.Report{Targets: []string{"api"}, Results: []verdict.Result{
		{Target: "api", ScenarioID: "replay/after-503", Verdict: verdict.Pass},
		na("api", "race/a", verdict.LevelSafety, "slow_operation"),
		na("api", "race/b", verdict.LevelMust, "slow_operation"),
		na("api", "race/c", verdict.LevelSafety, "slow_operation", "fail_operation"),
		na("api", "storage/x", verdict.LevelMust, "fail_operation"),
		na("api", "expiry/a", verdict.LevelMust, "retention"),
		na("api", "scope/a", verdict.LevelSafety, "principals"),
		na("api", "both/a", verdict.LevelShould, "crash.after_key", "lock_timeout"),
		{Target: "api", ScenarioID: "replay/new-session", Verdict: verdict.NA, Message: "needs MCP sessions; a plain HTTP request belongs to none"},
	}}
	plans := report.DeclareNext(rep)
	require.Len(t, plans, 1)
	plan := plans[0]
	require.Equal(t, 8, plan.NA)
	var got [][]string
	for _, s := range plan.Steps {
		row := []string{s.Field()}
		for _, r := range s.Scenarios {
			row = append(row, r.ScenarioID)
		}
		got = append(got, row)
	}
	require.Equal(t, [][]string{
		{"slow_operation", "race/a", "race/b"},
		{"fail_operation", "race/c", "storage/x"},
		{"principals", "scope/a"}, // one SAFETY beats retention's one MUST
		{"retention", "expiry/a"},
		{"crash.after_key + lock_timeout", "both/a"},
	}, got)
	require.Len(t, plan.Facts, 1)
	require.Equal(t, "replay/new-session", plan.Facts[0].ScenarioID)

	var buf bytes.Buffer
	report.WriteSummary(&buf, rep)
	require.Contains(t, buf.String(), "what to declare next (8 N/A); each line judges its scenarios once the lines above are declared too:\n"+
		"   +2  slow_operation                  a way to hold the work in flight: race/a, race/b (1 SAFETY, 1 MUST)\n")
	require.Contains(t, buf.String(), "   +1  crash.after_key + lock_timeout  both/a (1 SHOULD)\n")
}
