package shard

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/idemproof/idemproof/scenarios"
	"github.com/idemproof/idemproof/verdict"
)

// Merge joins the reports of the shards of one run (or of runs against different
// targets) into one report: the targets in order of first appearance, the results
// ordered by target and then by catalogue order, the skipped scenarios and the shards
// united. It refuses reports of different idemproof builds or strictness, and a scenario
// reported twice for one target (two copies of one shard). The merged seed is the first
// report's; each result keeps the seed that reproduces it in its record. The merge is
// complete only when every shard was; the scenarios a shard never ran stay listed.
func Merge(reps ...*verdict.Report) (*verdict.Report, error) {
	if len(reps) == 0 {
		return nil, errors.New("merge: no report given")
	}
	first := reps[0]
	out := &verdict.Report{
		SchemaVersion: verdict.ReportSchemaVersion, Tool: first.Tool, Seed: first.Seed,
		Strict: first.Strict, Started: first.Started, Baseline: first.Baseline, Runs: first.Runs,
	}
	// The merge is complete only when every shard was: a shard stopped early lacks
	// scenarios, and the merged report must say so instead of looking whole.
	out.Complete = true
	var interrupted []string
	var end time.Time
	seen := map[[2]string]int{}
	skipped := map[string]bool{}
	for i, rep := range reps {
		if rep.Tool != first.Tool {
			return nil, fmt.Errorf("merge: report %d is from %q, report 1 from %q: merge shards of one build", i+1, rep.Tool, first.Tool)
		}
		if rep.Strict != first.Strict {
			return nil, fmt.Errorf("merge: report %d has strict=%t, report 1 strict=%t", i+1, rep.Strict, first.Strict)
		}
		if max(rep.Runs, 1) != max(first.Runs, 1) {
			return nil, fmt.Errorf("merge: report %d is of %d run(s) (--repeat), report 1 of %d: merge shards run alike", i+1, max(rep.Runs, 1), max(first.Runs, 1))
		}
		if !rep.Started.IsZero() && (out.Started.IsZero() || rep.Started.Before(out.Started)) {
			out.Started = rep.Started
		}
		if e := rep.Started.Add(time.Duration(rep.DurationMS * float64(time.Millisecond))); e.After(end) {
			end = e
		}
		for _, t := range rep.Targets {
			if !slices.Contains(out.Targets, t) {
				out.Targets = append(out.Targets, t)
			}
		}
		for t, src := range rep.TargetSources {
			if out.TargetSources == nil {
				out.TargetSources = map[string]string{}
			}
			out.TargetSources[t] = src
		}
		for _, id := range rep.Skipped {
			skipped[id] = true
		}
		if rep.Incomplete() {
			out.Complete = false
			out.NotRun = append(out.NotRun, rep.NotRun...)
			if rep.Interrupted != "" && !slices.Contains(interrupted, rep.Interrupted) {
				interrupted = append(interrupted, rep.Interrupted)
			}
		}
		if rep.Shard != "" {
			out.Shards = append(out.Shards, rep.Shard)
		}
		out.Shards = append(out.Shards, rep.Shards...)
		for _, r := range rep.Results {
			k := [2]string{r.Target, r.ScenarioID}
			if prev, dup := seen[k]; dup {
				return nil, fmt.Errorf("merge: %s @ %s is in report %d and report %d: each scenario must come from one shard", r.ScenarioID, r.Target, prev, i+1)
			}
			seen[k] = i + 1
			if !slices.Contains(out.Targets, r.Target) {
				out.Targets = append(out.Targets, r.Target)
			}
			out.Results = append(out.Results, r)
		}
	}
	if !end.IsZero() && !out.Started.IsZero() {
		out.DurationMS = float64(end.Sub(out.Started)) / float64(time.Millisecond)
	}
	if !out.Complete {
		out.Interrupted = strings.Join(interrupted, "; ")
		if out.Interrupted == "" {
			out.Interrupted = "a merged shard was incomplete"
		}
	}
	for id := range skipped {
		out.Skipped = append(out.Skipped, id)
	}
	slices.Sort(out.Skipped)
	order := map[string]int{}
	for i, s := range scenarios.Catalogue() {
		order[s.ID] = i
	}
	slices.SortStableFunc(out.Results, func(a, b verdict.Result) int {
		if ta, tb := slices.Index(out.Targets, a.Target), slices.Index(out.Targets, b.Target); ta != tb {
			return ta - tb
		}
		oa, okA := order[a.ScenarioID]
		ob, okB := order[b.ScenarioID]
		switch {
		case okA && okB:
			return oa - ob
		case okA:
			return -1
		case okB:
			return 1
		}
		return 0
	})
	return out, nil
}
