// Package rounds combines the reports of one catalogue run several times over
// (`idemproof check --repeat N`) into one report: a race that a target loses only now
// and then shows in some runs and not in others, and one run's PASS proves only that run.
//
// Each scenario against each target gets the most telling of its runs' verdicts, with
// that run's message and evidence (so its record, and the seed that repeats it), and the
// count of every verdict it got across the runs:
//
//	FAIL > NON-STRICT > PASS > INFO > N/A > UNKNOWN
//
// A definite violation seen once is a violation, whatever the other runs saw. A PASS is
// proof from the run that made it; a run that could not see the outcome (UNKNOWN)
// contradicts nothing, so it gives way to any run that did. Only a scenario that no run
// could judge stays UNKNOWN.
//
// client-check counts an undecided check as a finding (a client killed at its timeout
// may be a stuck client), so its rounds set UndecidedIsFinding: UNKNOWN then ranks just
// below NON-STRICT, and one run that could not decide keeps the combined check red.
package rounds

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/idemproof/idemproof/verdict"
)

// rank orders verdicts by how much they tell: the higher wins.
var rank = map[verdict.Verdict]int{
	verdict.Unknown:   0,
	verdict.NA:        1,
	verdict.Info:      2,
	verdict.Pass:      3,
	verdict.NonStrict: 4,
	verdict.Fail:      5,
}

// rankUndecidedFirst is rank when an UNKNOWN is a finding.
var rankUndecidedFirst = map[verdict.Verdict]int{
	verdict.NA:        0,
	verdict.Info:      1,
	verdict.Pass:      2,
	verdict.Unknown:   3,
	verdict.NonStrict: 4,
	verdict.Fail:      5,
}

// order is how a tally lists the verdicts.
var order = []verdict.Verdict{verdict.Fail, verdict.NonStrict, verdict.Pass, verdict.Info, verdict.NA, verdict.Unknown}

// Combine joins the reports of the runs, in the order they ran, into one (Rounds.Add
// for each, then Rounds.Report).
func Combine(runs []*verdict.Report) (*verdict.Report, error) {
	if len(runs) == 0 {
		return nil, errors.New("combine: no run given")
	}
	var r Rounds
	for _, rep := range runs {
		if err := r.Add(rep); err != nil {
			return nil, err
		}
	}
	return r.Report(), nil
}

// Rounds combines runs one at a time: it keeps, per scenario and target, only the
// result that is winning and the tally, so a thousand runs cost the memory of one and
// their best results, not of a thousand reports. The zero value is ready to use.
type Rounds struct {
	// UndecidedIsFinding makes an UNKNOWN outrank PASS, INFO and N/A (client-check's
	// rule): set it before the first Add.
	UndecidedIsFinding bool

	out         *verdict.Report
	runs        int
	best        map[[2]string]int // index into out.Results
	tally       map[[2]string]map[verdict.Verdict]int
	keys        [][2]string
	notRun      []verdict.NotRun
	interrupted []string
	end         time.Time
}

// Add takes the next run's report. The runs must be of one build, strictness and
// selection (as `idemproof check --repeat` makes them).
func (c *Rounds) Add(rep *verdict.Report) error {
	if c.out == nil {
		first := *rep
		first.Results, first.NotRun = nil, nil
		first.Complete, first.Interrupted = true, ""
		c.out, c.end = &first, rep.Started
		c.best, c.tally = map[[2]string]int{}, map[[2]string]map[verdict.Verdict]int{}
	}
	if rep.Tool != c.out.Tool || rep.Strict != c.out.Strict {
		// Refused before anything is counted: the rounds stay as they were.
		return fmt.Errorf("combine: run %d is %q strict=%t, run 1 %q strict=%t: combine runs of one check", c.runs+1, rep.Tool, rep.Strict, c.out.Tool, c.out.Strict)
	}
	c.runs++
	if e := rep.Started.Add(time.Duration(rep.DurationMS * float64(time.Millisecond))); e.After(c.end) {
		c.end = e
	}
	if !rep.Complete {
		c.out.Complete = false
		if rep.Interrupted != "" {
			c.interrupted = append(c.interrupted, fmt.Sprintf("run %d: %s", c.runs, rep.Interrupted))
		}
	}
	for _, r := range rep.Results {
		k := [2]string{r.Target, r.ScenarioID}
		i, ok := c.best[k]
		switch {
		case !ok:
			c.best[k] = len(c.out.Results)
			c.tally[k] = map[verdict.Verdict]int{}
			c.keys = append(c.keys, k)
			c.out.Results = append(c.out.Results, r)
		case c.rank(r.Verdict) > c.rank(c.out.Results[i].Verdict):
			c.out.Results[i] = r
		}
		c.tally[k][r.Verdict]++
	}
	c.notRun = append(c.notRun, rep.NotRun...)
	return nil
}

func (c *Rounds) rank(v verdict.Verdict) int {
	if c.UndecidedIsFinding {
		return rankUndecidedFirst[v]
	}
	return rank[v]
}

// Report is the combined report of the runs added so far (nil before the first).
func (c *Rounds) Report() *verdict.Report {
	if c.out == nil {
		return nil
	}
	out := *c.out
	out.Runs = c.runs
	out.Results = make([]verdict.Result, len(c.out.Results))
	copy(out.Results, c.out.Results)
	for _, k := range c.keys {
		r := &out.Results[c.best[k]]
		r.RunVerdicts = maps.Clone(c.tally[k])
		r.Message = fmt.Sprintf("%s [%s]", r.Message, Tally(c.tally[k], c.runs))
	}
	// What some run did not finish but another did is judged; only what none finished
	// is not run.
	seen := map[[2]string]bool{}
	out.NotRun = nil
	for _, n := range c.notRun {
		k := [2]string{n.Target, n.ScenarioID}
		if _, judged := c.best[k]; !judged && !seen[k] {
			seen[k] = true
			out.NotRun = append(out.NotRun, n)
		}
	}
	out.Interrupted = strings.Join(c.interrupted, "; ")
	out.DurationMS = float64(c.end.Sub(out.Started)) / float64(time.Millisecond)
	return &out
}

// Tally says how often each verdict came: "PASS in all 10 runs" when every run agreed,
// "1 FAIL, 9 PASS in 10 runs" when they did not, and "in 2 of 3 runs" when a run never
// got to the scenario (interrupted).
func Tally(tally map[verdict.Verdict]int, runs int) string {
	var parts []string
	var only verdict.Verdict
	total := 0
	for _, v := range order {
		if n := tally[v]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, v))
			only = v
			total += n
		}
	}
	in := fmt.Sprintf("in %d runs", runs)
	if total < runs {
		in = fmt.Sprintf("in %d of %d runs", total, runs)
	}
	switch {
	case runs == 1 && total == 1:
		return fmt.Sprintf("%s in 1 run", only)
	case len(parts) == 1 && total == runs:
		return fmt.Sprintf("%s in all %d runs", only, runs)
	case len(parts) == 1:
		return fmt.Sprintf("%s %s", only, in)
	}
	return strings.Join(parts, ", ") + " " + in
}
