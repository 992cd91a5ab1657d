package report

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/verdict"
)

// DeclarePlan is, for one target, the path from the profile that ran to a fuller one:
// which declaration to add next, and which N/A scenarios each would have judged.
type DeclarePlan struct {
	Target string
	NA     int // the target's N/A results
	// Steps are ranked: each judges the most scenarios once the steps before it are
	// declared too (a greedy path: a scenario needing two declarations counts for the
	// second one declared).
	Steps []DeclareStep
	// Facts are the N/A results no declaration judges: what they lack is a fact of the
	// target (its transport, the key shapes it accepts, its body's form).
	Facts []verdict.Result
}

// DeclareStep is one declaration to add, or, where no single one judges a scenario,
// the few one scenario needs together; and the N/A results it would judge, ranked by
// level (SAFETY, MUST, SHOULD, POLICY) then ID.
type DeclareStep struct {
	Fields    []string
	Scenarios []verdict.Result
}

// Field is the step's fields as one name: "slow_operation", "crash.after_key +
// lock_timeout".
func (s DeclareStep) Field() string { return strings.Join(s.Fields, " + ") }

// What says what the step's declaration gives (profile.Declaration), "" when unknown.
func (s DeclareStep) What() string {
	if len(s.Fields) != 1 {
		return ""
	}
	d, _ := profile.DeclarationNamed(s.Fields[0])
	return d.What
}

// DeclareNext is the plan of every target with N/A results that a declaration would
// judge, in report order. It works from the results alone (Result.Undeclared), so it is
// the same for a report read back from JSON.
func DeclareNext(rep *verdict.Report) []DeclarePlan {
	var plans []DeclarePlan
	for _, t := range targets(rep) {
		plan := DeclarePlan{Target: t}
		var open []verdict.Result
		for _, r := range rep.Results {
			if r.Target != t || r.Verdict != verdict.NA {
				continue
			}
			plan.NA++
			if len(r.Undeclared) == 0 {
				plan.Facts = append(plan.Facts, r)
			} else {
				open = append(open, r)
			}
		}
		if len(open) == 0 {
			// Nothing a declaration would judge (or a report whose tool did not record
			// what its N/A results lack): no list to give.
			continue
		}
		plan.Steps = declareSteps(open)
		slices.SortStableFunc(plan.Facts, byLevel)
		plans = append(plans, plan)
	}
	return plans
}

// declareSteps orders the declarations greedily: at each step the one that judges the
// most of the scenarios left (with those already chosen), ties going to the one judging
// more SAFETY scenarios, then MUST, SHOULD, then to the name. When no single declaration
// judges any scenario left, the scenario needing the fewest declarations names them as
// one step.
func declareSteps(open []verdict.Result) []DeclareStep {
	declared := map[string]bool{}
	judged := func(r verdict.Result, extra []string) bool {
		for _, f := range r.Undeclared {
			if !declared[f] && !slices.Contains(extra, f) {
				return false
			}
		}
		return true
	}
	var steps []DeclareStep
	for len(open) > 0 {
		var candidates []string
		for _, r := range open {
			for _, f := range r.Undeclared {
				if !declared[f] && !slices.Contains(candidates, f) {
					candidates = append(candidates, f)
				}
			}
		}
		var best DeclareStep
		for _, f := range candidates {
			step := DeclareStep{Fields: []string{f}}
			for _, r := range open {
				if judged(r, step.Fields) {
					step.Scenarios = append(step.Scenarios, r)
				}
			}
			if len(step.Scenarios) > 0 && (best.Fields == nil || betterStep(step, best)) {
				best = step
			}
		}
		if best.Fields == nil { // every scenario left needs two or more new declarations
			fewest := slices.MinFunc(open, func(a, b verdict.Result) int {
				return cmp.Compare(len(undeclaredLeft(a, declared)), len(undeclaredLeft(b, declared)))
			})
			best.Fields = undeclaredLeft(fewest, declared)
			for _, r := range open {
				if judged(r, best.Fields) {
					best.Scenarios = append(best.Scenarios, r)
				}
			}
		}
		for _, f := range best.Fields {
			declared[f] = true
		}
		open = slices.DeleteFunc(open, func(r verdict.Result) bool { return judged(r, nil) })
		slices.SortStableFunc(best.Scenarios, byLevel)
		steps = append(steps, best)
	}
	return steps
}

func undeclaredLeft(r verdict.Result, declared map[string]bool) []string {
	var out []string
	for _, f := range r.Undeclared {
		if !declared[f] {
			out = append(out, f)
		}
	}
	return out
}

// betterStep reports whether a judges more scenarios than b, or as many and more of a
// stronger level, or ties and sorts first by name.
func betterStep(a, b DeclareStep) bool {
	if len(a.Scenarios) != len(b.Scenarios) {
		return len(a.Scenarios) > len(b.Scenarios)
	}
	la, lb := levelCounts(a.Scenarios), levelCounts(b.Scenarios)
	for i := range la {
		if la[i] != lb[i] {
			return la[i] > lb[i]
		}
	}
	return a.Field() < b.Field()
}

// levelOrder ranks the levels from the strongest; a level it does not know ranks last.
var levelOrder = []verdict.Level{verdict.LevelSafety, verdict.LevelMust, verdict.LevelShould, verdict.LevelPolicy}

func levelRank(l verdict.Level) int {
	if i := slices.Index(levelOrder, l); i >= 0 {
		return i
	}
	return len(levelOrder)
}

func levelCounts(rs []verdict.Result) []int {
	n := make([]int, len(levelOrder)+1)
	for _, r := range rs {
		n[levelRank(r.Level)]++
	}
	return n
}

func byLevel(a, b verdict.Result) int {
	return cmp.Or(cmp.Compare(levelRank(a.Level), levelRank(b.Level)), cmp.Compare(a.ScenarioID, b.ScenarioID))
}

// levelsText is "6 SAFETY, 1 MUST, 1 SHOULD".
func levelsText(rs []verdict.Result) string {
	counts := levelCounts(rs)
	var parts []string
	for i, n := range counts {
		if n == 0 {
			continue
		}
		name := "other"
		if i < len(levelOrder) {
			name = string(levelOrder[i])
		}
		parts = append(parts, fmt.Sprintf("%d %s", n, name))
	}
	return strings.Join(parts, ", ")
}

// idsText is the results' scenario IDs, the first show of them and how many more.
func idsText(rs []verdict.Result, show int, quote func(string) string) string {
	var ids []string
	for i, r := range rs {
		if i == show {
			ids = append(ids, fmt.Sprintf("and %d more", len(rs)-show))
			break
		}
		ids = append(ids, quote(r.ScenarioID))
	}
	return strings.Join(ids, ", ")
}

// capitalized is s with its first letter in upper case, for a heading.
func capitalized(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// declareNextHeading is the plan's heading: "what to declare next (26 N/A)", with the
// target's name when the report has several.
func declareNextHeading(rep *verdict.Report, plan DeclarePlan) string {
	h := fmt.Sprintf("what to declare next (%d N/A)", plan.NA)
	if len(targets(rep)) > 1 {
		h = fmt.Sprintf("what to declare next for %s (%d N/A)", plan.Target, plan.NA)
	}
	return h
}

// writeDeclareNext prints the plans at the end of the console summary:
//
//	what to declare next (26 N/A; each line judges its scenarios once the lines above are declared too):
//	  +8  slow_operation  a way to hold the work in flight: race/concurrent-pair, … (6 SAFETY, 1 MUST, 1 SHOULD)
//	  +1  no declaration judges replay/new-session: plain HTTP: requests belong to no session
func writeDeclareNext(w io.Writer, rep *verdict.Report) {
	for _, plan := range DeclareNext(rep) {
		fmt.Fprintf(w, "\n%s; each line judges its scenarios once the lines above are declared too:\n", declareNextHeading(rep, plan))
		width := 0
		for _, s := range plan.Steps {
			width = max(width, len(s.Field()))
		}
		for _, s := range plan.Steps {
			what := ""
			if w := s.What(); w != "" {
				what = w + ": "
			}
			fmt.Fprintf(w, "  %+3d  %-*s  %s%s (%s)\n", len(s.Scenarios), width, s.Field(), what,
				idsText(s.Scenarios, 4, func(id string) string { return id }), levelsText(s.Scenarios))
		}
		if len(plan.Facts) > 0 {
			fmt.Fprintf(w, "  %+3d  no declaration: %s (what they lack is a fact of the target: %s)\n", len(plan.Facts),
				idsText(plan.Facts, 4, func(id string) string { return id }), factsText(plan.Facts))
		}
	}
}

// factsText is why the results are N/A, each reason once: their messages without the
// leading "needs".
func factsText(rs []verdict.Result) string {
	var why []string
	for _, r := range rs {
		m := strings.TrimPrefix(flat(r.Message), "needs ")
		if !slices.Contains(why, m) {
			why = append(why, m)
		}
	}
	return strings.Join(why, "; ")
}
