package main_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/scenarios/report"
)

func TestShardsMergeToTheVerdictsOfOneRun(t *testing.T) {
	dir := t.TempDir()
	only := "replay/*,key/*,fingerprint/mismatch"
	whole := filepath.Join(dir, "whole")
	out, errOut, code := runCLI(t, "check", "--flaw", "no-fingerprint", "--only", only, "--seed", "5", "--report-dir", whole)
	require.Equal(t, 1, code, "%s\n%s", out, errOut)

	var shards []string
	for i := 1; i <= 3; i++ {
		d := filepath.Join(dir, fmt.Sprintf("shard-%d", i))
		out, errOut, code := runCLI(t, "check", "--flaw", "no-fingerprint", "--only", only, "--seed", "5", "--shard", fmt.Sprintf("%d/3", i), "--report-dir", d)
		require.Contains(t, []int{0, 1}, code, "%s\n%s", out, errOut)
		shards = append(shards, filepath.Join(d, report.JSONFile))
	}
	merged := filepath.Join(dir, "merged")
	out, errOut, code = runCLI(t, append([]string{"report", "merge", "--report-dir", merged}, shards...)...)
	require.Equal(t, 1, code, "the merged run fails as the whole run did:\n%s\n%s", out, errOut)
	require.Contains(t, out, "FAIL fingerprint/mismatch @ reference+no-fingerprint")

	one := readReportFile(t, filepath.Join(whole, report.JSONFile))
	all := readReportFile(t, filepath.Join(merged, report.JSONFile))
	require.Equal(t, []string{"1/3", "2/3", "3/3"}, all.Shards)
	require.Len(t, all.Results, len(one.Results), "every scenario exactly once")
	for i := range one.Results {
		require.Equal(t, one.Results[i].ScenarioID, all.Results[i].ScenarioID, "same order as one run")
		require.Equal(t, one.Results[i].Verdict, all.Results[i].Verdict, one.Results[i].ScenarioID)
	}

	// A shard given twice is refused.
	_, errOut, code = runCLI(t, "report", "merge", shards[0], shards[0])
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "is in report 1 and report 2: each scenario must come from one shard")
}

func TestDidYouMean(t *testing.T) {
	_, errOut, code := runCLI(t, "chek")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `idemproof: unknown command "chek"; did you mean "check"?`)

	_, errOut, code = runCLI(t, "check", "--sede", "3")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "idemproof check: unknown flag -sede; did you mean --seed?")
	require.Contains(t, errOut, "Run 'idemproof check -h' for its flags.")
	require.NotContains(t, errOut, "usage:", "the mistake and the guess, not the whole usage")

	_, errOut, code = runCLI(t, "check", "--seed", "abc")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `invalid value "abc" for flag -seed`)
	require.Contains(t, errOut, "Run 'idemproof check -h' for its flags.")

	_, errOut, code = runCLI(t)
	require.Equal(t, 2, code, "no command is a usage error")
	require.Contains(t, errOut, "usage: idemproof <command> [flags]")

	_, errOut, code = runCLI(t, "check", "--report-di", "x")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "did you mean --report-dir?")

	_, errOut, code = runCLI(t, "check", "--zzzzzz")
	require.Equal(t, 2, code)
	require.NotContains(t, errOut, "did you mean", "nothing close: no guess")

	_, errOut, code = runCLI(t, "report", "merg")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `did you mean "merge"?`)
}
