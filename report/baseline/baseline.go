// Package baseline compares a run with an earlier one, so that a team can adopt idemproof
// against an API it cannot fix at once: with a baseline only regressions fail.
//
// Verdicts are ranked from good to bad: PASS, INFO and N/A (nothing wrong seen), then
// NON-STRICT (a SHOULD missed), UNKNOWN (nothing could be proved), FAIL. A result is a
// regression when its rank is worse than the same scenario's on the same target in the
// baseline, or when the scenario (or target) is not in the baseline and the result is
// failing. Every other failing result is a known failure: Apply marks it, the reports
// list it as such, and it does not fail the run. Results are matched by target name and
// scenario ID.
package baseline

import (
	"github.com/idemproof/idemproof/verdict"
)

// Rank orders verdicts from good (0) to bad (3).
func Rank(v verdict.Verdict) int {
	switch v {
	case verdict.NonStrict:
		return 1
	case verdict.Unknown:
		return 2
	case verdict.Fail:
		return 3
	}
	return 0
}

type key struct{ target, scenario string }

func index(rep *verdict.Report) map[key]verdict.Result {
	m := make(map[key]verdict.Result, len(rep.Results))
	for _, r := range rep.Results {
		m[key{r.Target, r.ScenarioID}] = r
	}
	return m
}

// failing is the rule `idemproof check` exits by: FAIL, and UNKNOWN and NON-STRICT under
// strict (report.Failing, repeated here so this package needs no renderer).
func failing(v verdict.Verdict, strict bool) bool {
	return v == verdict.Fail || (strict && (v == verdict.Unknown || v == verdict.NonStrict))
}

// Apply marks every failing result of rep that base already had at the same or a worse
// rank as a KnownFailure, with the baseline's verdict. It returns the regressions: the
// failing results left unmarked.
func Apply(rep, base *verdict.Report) []verdict.Result {
	old := index(base)
	var regressions []verdict.Result
	for i := range rep.Results {
		r := &rep.Results[i]
		if !failing(r.Verdict, rep.Strict) {
			continue
		}
		if b, ok := old[key{r.Target, r.ScenarioID}]; ok && Rank(b.Verdict) > 0 && Rank(r.Verdict) <= Rank(b.Verdict) {
			r.KnownFailure, r.BaselineVerdict = true, b.Verdict
			continue
		}
		regressions = append(regressions, *r)
	}
	return regressions
}

// Change is one scenario's verdict on one target in two runs. Before or After is empty
// when the scenario ran in only one of them.
type Change struct {
	Target, Scenario string
	Before, After    verdict.Verdict
}

// Worse reports whether the change is a regression: a worse rank, or a scenario new in
// the second run with a verdict that is not good.
func (c Change) Worse() bool {
	if c.After == "" {
		return false
	}
	if c.Before == "" {
		return Rank(c.After) > 0
	}
	return Rank(c.After) > Rank(c.Before)
}

// Diff lists every (target, scenario) whose verdict differs between a and b, in b's
// order, then the ones only a has.
func Diff(a, b *verdict.Report) []Change {
	old := index(a)
	seen := map[key]bool{}
	var out []Change
	for _, r := range b.Results {
		k := key{r.Target, r.ScenarioID}
		seen[k] = true
		before := old[k].Verdict
		if before != r.Verdict {
			out = append(out, Change{Target: r.Target, Scenario: r.ScenarioID, Before: before, After: r.Verdict})
		}
	}
	for _, r := range a.Results {
		if k := (key{r.Target, r.ScenarioID}); !seen[k] {
			seen[k] = true
			out = append(out, Change{Target: r.Target, Scenario: r.ScenarioID, Before: r.Verdict})
		}
	}
	return out
}
