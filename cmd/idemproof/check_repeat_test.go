package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/verdict"
)

func TestRepeatRunsTheSelectionWithSuccessiveSeedsAndCombinesTheVerdicts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "report.json")
	out, _, code := runCLI(t, "check", "--only", "replay/sequential", "--seed", "3", "--repeat", "2", "--json", path)
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "repeat with: --seed 3 --repeat 2")
	require.Contains(t, out, "run 1 of 2, seed 3")
	require.Contains(t, out, "run 2 of 2, seed 4")
	require.Contains(t, out, "no failures (seeds 3-4, 2 runs, strict=false)")

	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var rep verdict.Report
	require.NoError(t, json.Unmarshal(b, &rep))
	require.Equal(t, 2, rep.Runs)
	require.True(t, rep.Complete)
	require.Len(t, rep.Results, 1, "one result per scenario and target, not one per run")
	require.Equal(t, verdict.Pass, rep.Results[0].Verdict)
	require.Equal(t, map[verdict.Verdict]int{verdict.Pass: 2}, rep.Results[0].RunVerdicts)
	require.Contains(t, rep.Results[0].Message, "[PASS in all 2 runs]")
}

func TestRepeatFailsWhenAnyRunFails(t *testing.T) {
	out, _, code := runCLI(t, "check", "--flaw", "check-then-set", "--only", "race/concurrent-pair", "--seed", "1", "--repeat", "2")
	require.Equal(t, 1, code, out)
	require.Contains(t, out, "in all 2 runs]")
	require.Contains(t, out, "1 failing result(s) (seeds 1-2, 2 runs, strict=false)")
}

func TestRepeatOutOfRangeIsAUsageError(t *testing.T) {
	for _, n := range []string{"0", "-1", "1001"} {
		_, errOut, code := runCLI(t, "check", "--repeat", n)
		require.Equal(t, 2, code, n)
		require.Contains(t, errOut, "--repeat "+n+": must be 1 to 1000")
	}
}
