package main_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/report"
	"github.com/idemproof/idemproof/verdict"
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

// report merge exits as check does: 3 when a shard was interrupted or UNKNOWN results
// exceed --allow-unknown, 1 on a FAIL (which wins), 0 otherwise.
func TestMergeExitsLikeCheck(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, rep verdict.Report) string {
		rep.SchemaVersion, rep.Tool, rep.Seed, rep.Targets = verdict.ReportSchemaVersion, "idemproof test", 5, []string{"api"}
		var buf bytes.Buffer
		require.NoError(t, report.WriteJSON(&buf, &rep))
		path := filepath.Join(dir, name+".json")
		require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
		return path
	}
	result := func(id string, v verdict.Verdict) verdict.Result {
		return verdict.Result{ScenarioID: id, Target: "api", Level: verdict.LevelSafety, Verdict: v, Message: string(v)}
	}
	pass1 := write("pass1", verdict.Report{Complete: true, Shard: "1/2", Results: []verdict.Result{result("replay/after-503", verdict.Pass)}})
	pass2 := write("pass2", verdict.Report{Complete: true, Shard: "2/2", Results: []verdict.Result{result("replay/after-504", verdict.Pass)}})
	stopped := write("stopped", verdict.Report{Complete: false, Interrupted: "interrupt signal received", Shard: "2/2",
		Results: []verdict.Result{result("replay/after-504", verdict.Unknown)}})
	unknown := write("unknown", verdict.Report{Complete: true, Shard: "2/2", Results: []verdict.Result{result("replay/after-504", verdict.Unknown)}})
	failed := write("failed", verdict.Report{Complete: true, Shard: "2/2", Results: []verdict.Result{result("replay/after-504", verdict.Fail)}})

	for _, c := range []struct {
		name  string
		args  []string
		code  int
		wants string
	}{
		{"complete", []string{pass1, pass2}, 0, "no failures"},
		{"a shard interrupted", []string{pass1, stopped}, 3, "incomplete: interrupt signal received (exit 3)"},
		{"an UNKNOWN", []string{pass1, unknown}, 3, "incomplete: 1 UNKNOWN result(s), --allow-unknown 0 (exit 3)"},
		{"an UNKNOWN tolerated", []string{"--allow-unknown", "1", pass1, unknown}, 0, ""},
		{"a FAIL", []string{pass1, failed}, 1, "FAIL replay/after-504 @ api"},
	} {
		out, errOut, code := runCLI(t, append([]string{"report", "merge"}, c.args...)...)
		require.Equal(t, c.code, code, "%s:\n%s\n%s", c.name, out, errOut)
		require.Contains(t, out, c.wants, c.name)
	}
}

// The usual mistakes get one line that says what to fix: a mistyped flag without Go's
// raw flag error first, a mistyped built-in profile or flaw with its closest name, a
// preset given as a target with what a preset is for.
func TestUsualMistakesGetOneLineThatSaysWhatToFix(t *testing.T) {
	_, errOut, code := runCLI(t, "check", "--prfile", "x.yaml")
	require.Equal(t, 2, code)
	require.Equal(t, "idemproof check: unknown flag -prfile; did you mean --profile?\nRun 'idemproof check -h' for its flags.\n", errOut)

	_, errOut, code = runCLI(t, "check", "--no-such-flag")
	require.Equal(t, 2, code)
	require.Equal(t, "idemproof check: unknown flag -no-such-flag\nRun 'idemproof check -h' for its flags.\n", errOut)

	_, errOut, code = runCLI(t, "check", "--profile", "refrence")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `built-in profile "refrence" does not exist; did you mean "reference"?`)

	_, errOut, code = runCLI(t, "check", "--flaw", "no-fingerprnt")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `--flaw no-fingerprnt: no such flaw; did you mean "no-fingerprint"? (idemproof scenarios --flaws lists them)`)

	_, errOut, code = runCLI(t, "check", "--profile", "stripe")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `--profile stripe: "stripe" is an expectation preset, not a target: name it in your own profile with extends: stripe (idemproof init writes a first one)`)
	require.NotContains(t, errOut, "required", "not the preset's missing target fields")
}
