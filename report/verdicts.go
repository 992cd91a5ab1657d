package report

import (
	"fmt"
	"time"

	"github.com/idemproof/idemproof/verdict"
)

// verdictOrder is the column order of every count table: best to worst, then the
// verdicts that are neither.
var verdictOrder = []verdict.Verdict{
	verdict.Pass, verdict.Info, verdict.NA, verdict.NonStrict, verdict.Unknown, verdict.Fail,
}

// Failing reports whether a verdict is listed as a failing result: FAIL always; UNKNOWN
// and NON-STRICT only under strict. `idemproof check` exits 1 on FAIL (and NON-STRICT
// under strict) and 3 on UNKNOWN, which is never a pass whatever the strictness.
func Failing(v verdict.Verdict, strict bool) bool {
	switch v {
	case verdict.Fail:
		return true
	case verdict.Unknown, verdict.NonStrict:
		return strict
	}
	return false
}

// FailsRun reports whether one result of rep makes the run fail: a failing verdict
// (Failing) that the run's baseline did not already have (Result.KnownFailure).
func FailsRun(rep *verdict.Report, r verdict.Result) bool {
	return Failing(r.Verdict, rep.Strict) && !r.KnownFailure
}

// KnownFailures is every result the baseline already had failing, in report order.
func KnownFailures(rep *verdict.Report) []verdict.Result {
	var out []verdict.Result
	for _, r := range rep.Results {
		if r.KnownFailure {
			out = append(out, r)
		}
	}
	return out
}

// Counts is the number of results per verdict.
type Counts map[verdict.Verdict]int

// Total is the number of results counted.
func (c Counts) Total() int {
	n := 0
	for _, v := range c {
		n += v
	}
	return n
}

// CountByTarget counts the report's results per target, in the report's target order.
func CountByTarget(rep *verdict.Report) map[string]Counts {
	out := make(map[string]Counts, len(rep.Targets))
	for _, t := range rep.Targets {
		out[t] = Counts{}
	}
	for _, r := range rep.Results {
		if out[r.Target] == nil {
			out[r.Target] = Counts{}
		}
		out[r.Target][r.Verdict]++
	}
	return out
}

// targets is the report's target list, completed with any target only the results name,
// so a hand-made or partial report still renders every result.
func targets(rep *verdict.Report) []string { return rep.TargetNames() }

// scenarioOrder is the scenario IDs in order of first appearance: the catalogue's order,
// since the runner reports in it.
func scenarioOrder(rep *verdict.Report) []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range rep.Results {
		if !seen[r.ScenarioID] {
			seen[r.ScenarioID] = true
			out = append(out, r.ScenarioID)
		}
	}
	return out
}

// duration is the result's duration whether it came from the runner (Duration) or
// from JSON (DurationMS).
func duration(r verdict.Result) time.Duration {
	if r.Duration > 0 {
		return r.Duration
	}
	return time.Duration(r.DurationMS * float64(time.Millisecond))
}

// roundDuration keeps console durations short: 12ms, 1.24s.
func roundDuration(d time.Duration) time.Duration {
	switch {
	case d >= 10*time.Second:
		return d.Round(100 * time.Millisecond)
	case d >= time.Second:
		return d.Round(10 * time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(time.Millisecond)
	}
	return d.Round(time.Microsecond)
}

// IncompleteBanner is the sentence every report opens with when the run stopped before
// every selected scenario was judged, "" otherwise:
//
//	INCOMPLETE: the run was stopped (interrupt signal received); 37 of 49 scenario runs never started: nothing is proven for them
func IncompleteBanner(rep *verdict.Report) string {
	if !rep.Incomplete() {
		return ""
	}
	why := rep.Interrupted
	if why == "" {
		why = "stopped"
	}
	if len(rep.NotRun) == 0 { // every scenario started; the unfinished ones are UNKNOWN
		return fmt.Sprintf("INCOMPLETE: the run was stopped (%s) before every scenario finished: nothing is proven for the UNKNOWN ones", why)
	}
	return fmt.Sprintf("INCOMPLETE: the run was stopped (%s); %d of %d scenario runs never started: nothing is proven for them",
		why, len(rep.NotRun), len(rep.NotRun)+len(rep.Results))
}
