// Package baseline compares a run with an earlier one, so that a team can adopt idemproof
// against an API it cannot fix at once: with a baseline only regressions fail.
//
// Verdicts are ranked from good to bad: PASS, INFO and N/A (nothing wrong seen), then
// NON-STRICT (a SHOULD missed), UNKNOWN (nothing could be proved), FAIL. A result is a
// regression when its rank is worse than the same scenario's on the same target in the
// baseline, or when the scenario (or target) is not in the baseline and the result is
// failing. Every other failing result is a known failure: Apply marks it, the reports
// list it as such, and it does not fail the run.
//
// Results are matched by scenario ID on paired targets (Pair): targets pair by name;
// two reports of one target each, named differently (a renamed profile, a staging and a
// production profile), pair by position, and the Pairing says so. Two reports that pair
// nothing — no target, or no scenario of a paired target — are an error, never a
// comparison that silently found no difference.
package baseline

import (
	"fmt"
	"slices"
	"strings"

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

// index maps (target, scenario) to the result, the target renamed as rename says (the
// after side's name of a paired target); a target rename does not name is left out.
func index(rep *verdict.Report, rename map[string]string) map[key]verdict.Result {
	m := make(map[key]verdict.Result, len(rep.Results))
	for _, r := range rep.Results {
		if t, ok := rename[r.Target]; ok {
			m[key{t, r.ScenarioID}] = r
		}
	}
	return m
}

// TargetPair is a target of the earlier report and the one of the later report it is
// compared with.
type TargetPair struct{ Before, After string }

// Pairing is how the targets of two reports were matched.
type Pairing struct {
	Pairs []TargetPair
	// ByPosition: each report has one target, named differently; they were paired
	// because they are the only ones.
	ByPosition bool
	// OnlyBefore and OnlyAfter are the targets with no partner, in report order.
	OnlyBefore, OnlyAfter []string
	// sides name the two reports in Note ("the baseline", "this run").
	before, after string
}

// Note says how the targets were paired where it is not simply by name, every one: ""
// when it is.
func (p Pairing) Note() string {
	var parts []string
	if p.ByPosition && len(p.Pairs) == 1 {
		parts = append(parts, fmt.Sprintf("paired by position: target %q with %q (one target each, named differently)", p.Pairs[0].Before, p.Pairs[0].After))
	}
	for _, t := range p.OnlyAfter {
		parts = append(parts, fmt.Sprintf("target %q is not in %s: its failing results are new", t, p.before))
	}
	for _, t := range p.OnlyBefore {
		parts = append(parts, fmt.Sprintf("target %q of %s is not in %s", t, p.before, p.after))
	}
	return strings.Join(parts, "; ")
}

// Pair matches the targets of before with those of after: by name, or, when each has
// exactly one target and the names differ, by position. It fails when after has results
// and no target pairs.
func Pair(before, after *verdict.Report) (Pairing, error) {
	return pair(before, after, "the earlier report", "the later report")
}

func pair(before, after *verdict.Report, beforeSide, afterSide string) (Pairing, error) {
	p := Pairing{before: beforeSide, after: afterSide}
	bt, at := before.TargetNames(), after.TargetNames()
	if len(before.Results) == 0 {
		if len(after.Results) == 0 {
			return p, nil
		}
		return p, fmt.Errorf("%s has no results: nothing to compare with", beforeSide)
	}
	for _, t := range at {
		if slices.Contains(bt, t) {
			p.Pairs = append(p.Pairs, TargetPair{Before: t, After: t})
		} else {
			p.OnlyAfter = append(p.OnlyAfter, t)
		}
	}
	for _, t := range bt {
		if !slices.Contains(at, t) {
			p.OnlyBefore = append(p.OnlyBefore, t)
		}
	}
	if len(p.Pairs) == 0 && len(bt) == 1 && len(at) == 1 {
		p.Pairs = []TargetPair{{Before: bt[0], After: at[0]}}
		p.ByPosition, p.OnlyBefore, p.OnlyAfter = true, nil, nil
	}
	if len(p.Pairs) == 0 && len(after.Results) > 0 {
		return p, fmt.Errorf("no target of %s is in %s: it has %s; %s %s (several targets pair by name only)",
			afterSide, beforeSide, quoteList(bt), afterSide, quoteList(at))
	}
	return p, nil
}

// renames maps each paired target of the before side to its after name (itself when
// paired by name).
func (p Pairing) renames() map[string]string {
	m := make(map[string]string, len(p.Pairs))
	for _, tp := range p.Pairs {
		m[tp.Before] = tp.After
	}
	return m
}

// errNothingCompared is the error of two reports whose paired targets share no
// scenario.
func errNothingCompared(beforeSide, afterSide string, before *verdict.Report) error {
	var ids []string
	for _, r := range before.Results {
		if !slices.Contains(ids, r.ScenarioID) {
			ids = append(ids, r.ScenarioID)
		}
	}
	list := strings.Join(ids, ", ")
	if len(ids) > 5 {
		list = strings.Join(ids[:5], ", ") + fmt.Sprintf(" and %d more", len(ids)-5)
	}
	return fmt.Errorf("no scenario of %s is in %s (it has %s): nothing to compare with", afterSide, beforeSide, list)
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

// failing is the rule `idemproof check` exits by: FAIL, and UNKNOWN and NON-STRICT under
// strict (report.Failing, repeated here so this package needs no renderer).
func failing(v verdict.Verdict, strict bool) bool {
	return v == verdict.Fail || (strict && (v == verdict.Unknown || v == verdict.NonStrict))
}

// Apply marks every failing result of rep that base already had at the same or a worse
// rank (on the paired target, Pair) as a KnownFailure, with the baseline's verdict. It
// returns the regressions — the failing results left unmarked — and how the targets were
// paired. A baseline that pairs no target, or none of the run's scenarios, is an error
// and nothing is marked.
func Apply(rep, base *verdict.Report) ([]verdict.Result, Pairing, error) {
	pairing, err := pair(base, rep, "the baseline", "this run")
	if err != nil {
		return nil, pairing, err
	}
	old := index(base, pairing.renames())
	if len(rep.Results) > 0 && !anyCompared(old, rep) {
		return nil, pairing, errNothingCompared("the baseline", "this run", base)
	}
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
	return regressions, pairing, nil
}

// Change is one scenario's verdict on one target in two runs. Before or After is empty
// when the scenario ran in only one of them. Target is the later report's name of the
// target (the earlier one's for a scenario only it has); BeforeTarget is the earlier
// name where the targets were paired by position.
type Change struct {
	Target, BeforeTarget, Scenario string
	Before, After                  verdict.Verdict
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

// Diff lists every scenario whose verdict differs between a and b on paired targets
// (Pair), and the scenarios of unpaired targets: the worse first (a scenario new in b
// with a verdict that is not good among them), then the better, then the other new ones,
// then those only a has; in report order within each. Two reports that pair
// no target, or no scenario, are an error.
func Diff(a, b *verdict.Report) ([]Change, Pairing, error) {
	pairing, err := pair(a, b, "the first report", "the second report")
	if err != nil {
		return nil, pairing, err
	}
	renames := pairing.renames()
	old := index(a, renames)
	beforeName := map[string]string{}
	for _, tp := range pairing.Pairs {
		if tp.Before != tp.After {
			beforeName[tp.After] = tp.Before
		}
	}
	seen := map[key]bool{}
	var worse, better, added, gone []Change
	for _, r := range b.Results {
		k := key{r.Target, r.ScenarioID}
		seen[k] = true
		prev, ok := old[k]
		if ok && prev.Verdict == r.Verdict {
			continue
		}
		c := Change{Target: r.Target, Scenario: r.ScenarioID, After: r.Verdict}
		if ok {
			c.Before, c.BeforeTarget = prev.Verdict, beforeName[r.Target]
		}
		switch {
		case c.Worse(): // a new scenario that is not good is a regression too
			worse = append(worse, c)
		case !ok:
			added = append(added, c)
		default:
			better = append(better, c)
		}
	}
	for _, r := range a.Results {
		target, paired := renames[r.Target]
		if !paired {
			target = r.Target
		}
		if k := (key{target, r.ScenarioID}); !seen[k] {
			seen[k] = true
			gone = append(gone, Change{Target: r.Target, Scenario: r.ScenarioID, Before: r.Verdict})
		}
	}
	if len(old) > 0 && len(b.Results) > 0 && !anyCompared(old, b) {
		return nil, pairing, errNothingCompared("the first report", "the second report", a)
	}
	return slices.Concat(worse, better, added, gone), pairing, nil
}

// anyCompared reports whether some result of b has a counterpart in old.
func anyCompared(old map[key]verdict.Result, b *verdict.Report) bool {
	for _, r := range b.Results {
		if _, ok := old[key{r.Target, r.ScenarioID}]; ok {
			return true
		}
	}
	return false
}
