package rounds_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/report/rounds"
	"github.com/idemproof/idemproof/verdict"
)

func run(started time.Time, results ...verdict.Result) *verdict.Report {
	return &verdict.Report{Tool: "idemproof test", Seed: started.UnixNano(), Started: started, DurationMS: 1000,
		Targets: []string{"api"}, Complete: true, Results: results}
}

func result(id string, v verdict.Verdict, msg string, seed int64) verdict.Result {
	return verdict.Result{ScenarioID: id, Target: "api", Verdict: v, Message: msg,
		Evidence: verdict.Evidence{Record: &verdict.Record{Seed: seed}}}
}

func TestAViolationSeenOnceFailsAndKeepsItsRunsEvidence(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	rep, err := rounds.Combine([]*verdict.Report{
		run(t0, result("race/concurrent-pair", verdict.Pass, "one side effect", 1), result("replay/sequential", verdict.Pass, "replayed", 1)),
		run(t0.Add(2*time.Second), result("race/concurrent-pair", verdict.Fail, "2 side effects", 2), result("replay/sequential", verdict.Pass, "replayed", 2)),
		run(t0.Add(4*time.Second), result("race/concurrent-pair", verdict.Unknown, "not seen", 3), result("replay/sequential", verdict.Pass, "replayed", 3)),
	})
	require.NoError(t, err)
	require.Equal(t, 3, rep.Runs)
	require.True(t, rep.Complete)
	require.Len(t, rep.Results, 2, "one result per scenario and target")

	race := rep.Results[0]
	require.Equal(t, verdict.Fail, race.Verdict)
	require.Equal(t, "2 side effects [1 FAIL, 1 PASS, 1 UNKNOWN in 3 runs]", race.Message)
	require.Equal(t, int64(2), race.Evidence.Record.Seed, "the failing run's record: its seed repeats it")
	require.Equal(t, map[verdict.Verdict]int{verdict.Fail: 1, verdict.Pass: 1, verdict.Unknown: 1}, race.RunVerdicts)

	require.Equal(t, verdict.Pass, rep.Results[1].Verdict)
	require.Equal(t, "replayed [PASS in all 3 runs]", rep.Results[1].Message)
	require.InDelta(t, 5000, rep.DurationMS, 1, "from the first run's start to the last run's end")
}

func TestAPassOutranksRunsThatCouldNotSeeAndOnlyAllUnknownStaysUnknown(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	rep, err := rounds.Combine([]*verdict.Report{
		run(t0, result("a", verdict.Unknown, "timed out", 1), result("b", verdict.Unknown, "timed out", 1), result("c", verdict.Info, "not exercised", 1)),
		run(t0, result("a", verdict.Pass, "proved", 2), result("b", verdict.Unknown, "timed out", 2), result("c", verdict.NonStrict, "no marker", 2)),
	})
	require.NoError(t, err)
	require.Equal(t, verdict.Pass, rep.Results[0].Verdict)
	require.Equal(t, int64(2), rep.Results[0].Evidence.Record.Seed)
	require.Equal(t, verdict.Unknown, rep.Results[1].Verdict, "no run could judge it")
	require.Equal(t, "timed out [UNKNOWN in all 2 runs]", rep.Results[1].Message)
	require.Equal(t, verdict.NonStrict, rep.Results[2].Verdict, "a SHOULD missed once is missed")
}

func TestAnInterruptedRunMakesTheCombinationIncomplete(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	stopped := run(t0.Add(time.Second), result("a", verdict.Pass, "ok", 2))
	stopped.Complete, stopped.Interrupted = false, "interrupt signal received"
	stopped.NotRun = []verdict.NotRun{{ScenarioID: "b", Target: "api"}, {ScenarioID: "c", Target: "api"}}
	rep, err := rounds.Combine([]*verdict.Report{
		run(t0, result("a", verdict.Pass, "ok", 1), result("b", verdict.Pass, "ok", 1)),
		stopped,
	})
	require.NoError(t, err)
	require.False(t, rep.Complete)
	require.Equal(t, "run 2: interrupt signal received", rep.Interrupted)
	require.Equal(t, []verdict.NotRun{{ScenarioID: "c", Target: "api"}}, rep.NotRun, "b was judged by run 1; c by none")
	require.Equal(t, "ok [PASS in 1 of 2 runs]", rep.Results[1].Message)
}

func TestRunsOfAnotherBuildOrStrictnessAreRefused(t *testing.T) {
	a := run(time.Now(), result("a", verdict.Pass, "ok", 1))
	b := run(time.Now(), result("a", verdict.Pass, "ok", 2))
	b.Strict = true
	_, err := rounds.Combine([]*verdict.Report{a, b})
	require.ErrorContains(t, err, "combine runs of one check")

	var r rounds.Rounds
	require.NoError(t, r.Add(a))
	require.ErrorContains(t, r.Add(b), "run 2 is")
	require.Equal(t, 1, r.Report().Runs, "a refused run is not counted")
	require.Equal(t, "ok [PASS in 1 run]", r.Report().Results[0].Message)
	_, err = rounds.Combine(nil)
	require.Error(t, err)
}

func TestRoundsKeepOnlyTheWinningResultBetweenRuns(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	var r rounds.Rounds
	require.Nil(t, r.Report())
	for i := range 50 {
		v := verdict.Pass
		if i == 37 {
			v = verdict.Fail
		}
		require.NoError(t, r.Add(run(t0.Add(time.Duration(i)*time.Second), result("a", v, "run", int64(i)))))
	}
	rep := r.Report()
	require.Equal(t, 50, rep.Runs)
	require.Len(t, rep.Results, 1)
	require.Equal(t, verdict.Fail, rep.Results[0].Verdict)
	require.Equal(t, int64(37), rep.Results[0].Evidence.Record.Seed)
	require.Equal(t, "run [1 FAIL, 49 PASS in 50 runs]", rep.Results[0].Message)
	require.Equal(t, "run", r.Report().Results[0].Message[:3], "Report leaves the rounds as they were")
	require.Equal(t, rep.Results[0].Message, r.Report().Results[0].Message)
}

func TestUndecidedIsAFindingOutranksAPassButNotAViolation(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	r := rounds.Rounds{UndecidedIsFinding: true}
	for i, rep := range []*verdict.Report{
		run(t0, result("client/command-exit", verdict.Pass, "exit 0", 1), result("client/one-effect", verdict.Pass, "one", 1)),
		run(t0.Add(time.Second), result("client/command-exit", verdict.Unknown, "killed at the timeout", 2), result("client/one-effect", verdict.Fail, "two", 2)),
		run(t0.Add(2*time.Second), result("client/command-exit", verdict.Pass, "exit 0", 3), result("client/one-effect", verdict.Unknown, "unread", 3)),
	} {
		require.NoError(t, r.Add(rep), "run %d", i+1)
	}
	rep := r.Report()
	require.Equal(t, verdict.Unknown, rep.Results[0].Verdict, "one run that could not decide keeps the check red")
	require.Equal(t, "killed at the timeout [2 PASS, 1 UNKNOWN in 3 runs]", rep.Results[0].Message)
	require.Equal(t, int64(2), rep.Results[0].Evidence.Record.Seed)
	require.Equal(t, verdict.Fail, rep.Results[1].Verdict, "a violation still outranks an undecided run")
}
