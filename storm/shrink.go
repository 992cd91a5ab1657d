package storm

import (
	"context"
	"fmt"
	"sort"
	"strings"
)

// Shrinking: a finding is re-run alone, its operation's schedule reduced — the fault,
// the duplicate delivery or the outage dropped, fewer copies, no hold — smallest first,
// each candidate a few times (a race may need more than one try); the first that shows
// the finding in most of its runs is the shrunk schedule (else the first that showed it
// at all), printed as a command that repeats it.
const (
	maxShrunk   = 3 // findings shrunk per storm, one per category at most
	shrinkTries = 5 // operations per candidate run
)

// candidates are the schedules smaller than or equal to s, smallest first: fewer
// requests, then fewer parts.
func candidates(s Schedule) []Schedule {
	var out []Schedule
	seen := map[string]bool{}
	for copies := 1; copies <= max(s.Copies, 1); copies++ {
		for _, hold := range []bool{false, true} {
			if hold && (!s.Hold || copies < 2) {
				continue
			}
			for _, keepFault := range []bool{false, true} {
				c := Schedule{Copies: copies, Hold: hold}
				if keepFault {
					c.Fault, c.Duplicate, c.Outage = s.Fault, s.Duplicate, s.Outage
				}
				if !seen[c.String()] {
					seen[c.String()] = true
					out = append(out, c)
				}
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Requests() != out[j].Requests() {
			return out[i].Requests() < out[j].Requests()
		}
		return parts(out[i]) < parts(out[j])
	})
	return out
}

func parts(s Schedule) int {
	if s.String() == "plain" {
		return 0
	}
	return strings.Count(s.String(), "+") + 1
}

// shrinkFindings shrinks the first failing operation of each safety category.
func shrinkFindings(ctx context.Context, cfg Config, rep *Report, found []opResult) []Shrunk {
	var out []Shrunk
	done := map[string]bool{}
	s := &storm{cfg: cfg, p: cfg.Profile}
	for _, o := range found {
		for _, f := range s.findings(o) {
			if f.Category == CatFailed || done[f.Category] || len(out) >= maxShrunk || ctx.Err() != nil {
				continue
			}
			done[f.Category] = true
			if sh, ok := shrink(ctx, cfg, f.Category, o.Schedule); ok {
				out = append(out, sh)
			}
		}
	}
	return out
}

// shrink finds the smallest schedule under from that still shows category in most of
// its runs (a repeat command that fails now and then is a poor one); when none does, the
// smallest that showed it at all.
func shrink(ctx context.Context, cfg Config, category string, from Schedule) (Shrunk, bool) {
	var some *Shrunk
	for _, c := range candidates(from) {
		run := cfg
		run.Ops, run.Clients, run.Shard, run.Shards = shrinkTries, shrinkTries, 1, 1
		run.Schedule, run.NoShrink, run.NoPreflight, run.Progress = &c, true, true, nil
		rep, err := Run(ctx, run)
		if err != nil || ctx.Err() != nil {
			break
		}
		n := rep.Counts[category]
		if n == 0 {
			continue
		}
		found := Shrunk{
			Category: category, From: from.String(), Schedule: c.String(), Requests: c.Requests(),
			Tries: n, Runs: shrinkTries, Command: command(cfg, c),
		}
		if 2*n > shrinkTries {
			return found, true
		}
		if some == nil {
			some = &found
		}
	}
	if some != nil {
		return *some, true
	}
	return Shrunk{}, false
}

// command is the command line that repeats a schedule against the same profile.
func command(cfg Config, s Schedule) string {
	prefix := cfg.Command
	if prefix == "" {
		src := cfg.Profile.Source
		if src == "" {
			src = cfg.Profile.Name
		}
		prefix = "idemproof storm --profile " + src
	}
	return fmt.Sprintf("%s --schedule %s --ops %d --clients %d", prefix, s, shrinkTries, shrinkTries)
}
