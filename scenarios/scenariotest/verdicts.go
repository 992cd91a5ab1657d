package scenariotest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/scenarios"
	"github.com/idemproof/idemproof/verdict"
)

// RequireVerdicts runs exactly the scenarios named in want against p (seed 1, bounded by
// a few minutes) and fails t unless every one got the verdict pinned for it. It is how
// a team pins what a third-party API does today, FAILs included, so a change in either
// direction is noticed. The failure lists each differing scenario with what it observed.
// A scenario UNKNOWN where its pin is not is run once more alone (SecondLook) first.
func RequireVerdicts(t testing.TB, p *profile.Profile, want map[string]verdict.Verdict) {
	t.Helper()
	only := make([]string, 0, len(want))
	for id := range want {
		only = append(only, id)
	}
	slices.Sort(only)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cfg := scenarios.RunConfig{Profiles: []*profile.Profile{p}, Only: only, Seed: 1}
	rep, err := scenarios.Run(ctx, cfg)
	if err != nil {
		t.Fatalf("scenariotest.RequireVerdicts: %v", err)
	}
	// An UNKNOWN not pinned as one is asked once more, alone (SecondLook).
	notes, err := SecondLook(ctx, cfg, rep, func(id string) bool { return want[id] != verdict.Unknown })
	for _, n := range notes {
		t.Log(n)
	}
	if err != nil {
		t.Fatalf("scenariotest.RequireVerdicts: %v", err)
	}
	got := map[string]verdict.Result{}
	for _, r := range rep.Results {
		got[r.ScenarioID] = r
	}
	var diffs []string
	for _, id := range only {
		r, ok := got[id]
		switch {
		case !ok:
			diffs = append(diffs, fmt.Sprintf("%s: want %s, not run", id, want[id]))
		case r.Verdict != want[id]:
			diffs = append(diffs, fmt.Sprintf("%s: want %s, got %s — %s", id, want[id], r.Verdict, r.Message))
		}
	}
	if rep.Incomplete() {
		diffs = append(diffs, "the run was incomplete: "+rep.Interrupted)
	}
	if len(diffs) > 0 {
		t.Fatalf("%d of %d pinned verdicts differ for %s:\n  %s", len(diffs), len(only), p.Name, strings.Join(diffs, "\n  "))
	}
}
