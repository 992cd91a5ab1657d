package shard_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/scenarios"
	"github.com/idemproof/idemproof/scenarios/shard"
	"github.com/idemproof/idemproof/verdict"
)

func TestShardsCoverTheCatalogueExactlyOnce(t *testing.T) {
	all := scenarios.Catalogue()
	for _, n := range []int{1, 2, 3, 7} {
		seen := map[string]int{}
		var sizes, slow []int
		for i := 1; i <= n; i++ {
			part := shard.Part{Index: i, Count: n}.Of(all)
			sizes = append(sizes, len(part))
			s := 0
			for _, sc := range part {
				seen[sc.ID]++
				if slices.Contains(sc.Labels, shard.SlowLabel) {
					s++
				}
			}
			slow = append(slow, s)
		}
		require.Len(t, seen, len(all), "n=%d", n)
		for id, c := range seen {
			require.Equal(t, 1, c, "n=%d: %s", n, id)
		}
		require.LessOrEqual(t, slices.Max(sizes)-slices.Min(sizes), 1, "n=%d sizes %v", n, sizes)
		require.LessOrEqual(t, slices.Max(slow)-slices.Min(slow), 1, "n=%d slow scenarios spread evenly: %v", n, slow)
	}
}

func TestShardOfIsDeterministicAndKeepsOrder(t *testing.T) {
	all := scenarios.Catalogue()
	p := shard.Part{Index: 2, Count: 3}
	first := p.Of(all)
	reversed := slices.Clone(all)
	slices.Reverse(reversed)
	second := p.Of(reversed)
	ids := func(l []scenarios.Scenario) []string {
		var out []string
		for _, s := range l {
			out = append(out, s.ID)
		}
		return out
	}
	a, b := ids(first), ids(second)
	slices.Reverse(b)
	require.Equal(t, a, b, "membership by ID, whatever the input order")
}

func TestParse(t *testing.T) {
	p, err := shard.Parse("2/3")
	require.NoError(t, err)
	require.Equal(t, shard.Part{Index: 2, Count: 3}, p)
	require.Equal(t, "2/3", p.String())
	for _, bad := range []string{"", "3", "0/3", "4/3", "a/b", "1/0"} {
		_, err := shard.Parse(bad)
		require.Error(t, err, bad)
	}
}

func TestMergeOfAnIncompleteShardIsIncomplete(t *testing.T) {
	done := &verdict.Report{Tool: "idemproof t", Complete: true, Targets: []string{"a"},
		Results: []verdict.Result{{ScenarioID: "replay/after-503", Target: "a", Verdict: verdict.Pass}}}
	cut := &verdict.Report{Tool: "idemproof t", Targets: []string{"a"}, Interrupted: "interrupt",
		NotRun: []verdict.NotRun{{ScenarioID: "race/burst-50", Target: "a"}}}
	merged, err := shard.Merge(done, cut)
	require.NoError(t, err)
	require.True(t, merged.Incomplete())
	require.Equal(t, "interrupt", merged.Interrupted)
	require.Len(t, merged.NotRun, 1)

	whole, err := shard.Merge(done, done2(done))
	require.NoError(t, err)
	require.False(t, whole.Incomplete())
	require.True(t, whole.Complete)
}

func done2(r *verdict.Report) *verdict.Report {
	c := *r
	c.Results = []verdict.Result{{ScenarioID: "replay/after-502", Target: "a", Verdict: verdict.Pass}}
	return &c
}

func TestMergeKeepsTheRunsOfRepeatedShardsAndRefusesMixedOnes(t *testing.T) {
	a := &verdict.Report{Tool: "idemproof t", Complete: true, Targets: []string{"a"}, Runs: 5,
		Results: []verdict.Result{{ScenarioID: "replay/after-503", Target: "a", Verdict: verdict.Pass,
			RunVerdicts: map[verdict.Verdict]int{verdict.Pass: 5}}}}
	b := done2(a)
	merged, err := shard.Merge(a, b)
	require.NoError(t, err)
	require.Equal(t, 5, merged.Runs)
	for _, r := range merged.Results {
		if r.ScenarioID == "replay/after-503" {
			require.Equal(t, map[verdict.Verdict]int{verdict.Pass: 5}, r.RunVerdicts)
		}
	}

	once := done2(a)
	once.Runs = 0
	_, err = shard.Merge(a, once)
	require.ErrorContains(t, err, "report 2 is of 1 run(s) (--repeat), report 1 of 5")
}
