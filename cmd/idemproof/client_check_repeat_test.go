package main_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/report"
	"github.com/idemproof/idemproof/verdict"
)

// The client is wrong only when the seed deals the reset to order-2: of seeds 1-6 that
// is seeds 1 and 6. A repeated run finds it when any of its runs does, names the seed,
// and its combined report keeps the failing run's verdict.
func TestClientCheckRepeatFindsAFlawThatOnlySomeSeedsReach(t *testing.T) {
	needCurl(t)
	client := "testdata/new-key-after-reset-on-order-2.sh"
	stdout, stderr, code := runCLI(t, "client-check", "--faults", "reset,503,502", "--seed", "2", "--repeat", "4", "--", client)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	for _, seed := range []string{"2", "3", "4", "5"} {
		require.Contains(t, stdout, "seed "+seed+": fault schedule reset,503,502 over 3 operation(s): no findings")
	}
	require.Regexp(t, `(?m)^PASS +client/same-key-on-retry +client +\S+ .*\[PASS in all 4 runs\]$`, stdout)
	require.Contains(t, stdout, "client-check: no findings in any run (seeds 2-5, 4 runs)")

	dir := t.TempDir()
	stdout, stderr, code = runCLI(t, "client-check", "--faults", "reset,503,502", "--seed", "2", "--repeat", "5", "--report-dir", dir, "--", client)
	require.Equal(t, 1, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	require.Contains(t, stdout, "run 5 of 5, seed 6: fault schedule reset,503,502 over 3 operation(s): 3 finding(s)")
	require.Contains(t, stdout, "  repeat: idemproof client-check --seed 6 --faults reset,503,502 -- "+client)
	require.Regexp(t, `(?m)^FAIL +client/same-key-on-retry +client +\S+ .*\[1 FAIL, 4 PASS in 5 runs\]$`, stdout)
	require.Contains(t, stdout, "client-check: findings in 1 of 5 runs (seeds 6)")

	rep := readReportFile(t, filepath.Join(dir, report.JSONFile))
	require.Equal(t, 5, rep.Runs)
	require.Equal(t, int64(2), rep.Seed)
	require.Equal(t, "idemproof client-check --seed 2 --repeat 5 --faults reset,503,502 -- "+client, rep.Repeat)
	found := false
	for _, r := range rep.Results {
		if r.ScenarioID == "client/same-key-on-retry" {
			found = true
			require.Equal(t, verdict.Fail, r.Verdict)
			require.Equal(t, map[verdict.Verdict]int{verdict.Fail: 1, verdict.Pass: 4}, r.RunVerdicts)
			require.Equal(t, int64(6), r.Evidence.Record.Seed, "the failing run's evidence: its seed repeats it")
		}
	}
	require.True(t, found, "client/same-key-on-retry is in the report")
}

func TestClientCheckRepeatRefusesWhatItCannotRepeatHonestly(t *testing.T) {
	for _, n := range []string{"0", "1001"} {
		_, errOut, code := runCLI(t, "client-check", "--repeat", n, "--", "true")
		require.Equal(t, 2, code, n)
		require.Contains(t, errOut, "--repeat "+n+": must be 1 to 1000")
	}
	_, errOut, code := runCLI(t, "client-check", "--repeat", "2", "--state-dir", t.TempDir(), "--", "true")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "each run needs a fresh state folder")
}
