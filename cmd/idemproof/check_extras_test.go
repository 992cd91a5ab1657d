package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/report"
	"github.com/idemproof/idemproof/verdict"
)

func readReportFile(t *testing.T, path string) *verdict.Report {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	rep, err := report.ReadJSON(f)
	require.NoError(t, err)
	return rep
}

func writeReportFile(t *testing.T, path string, rep *verdict.Report) {
	t.Helper()
	require.NoError(t, report.WriteFile(path, report.WriteJSON, rep))
}

func TestBaselineTurnsAKnownFailIntoAListedOneAndANewFailFails(t *testing.T) {
	dir := t.TempDir()
	first := filepath.Join(dir, "first")
	out, _, code := runCLI(t, "check", "--flaw", "no-fingerprint", "--only", "fingerprint/mismatch", "--seed", "3", "--report-dir", first)
	require.Equal(t, 1, code, out)

	// The same flaw again, with the first run as the baseline: a known failure, exit 0.
	second := filepath.Join(dir, "second")
	out, errOut, code := runCLI(t, "check", "--flaw", "no-fingerprint", "--only", "fingerprint/mismatch", "--seed", "3",
		"--baseline", filepath.Join(first, report.JSONFile), "--report-dir", second)
	require.Equal(t, 0, code, "%s\n%s", out, errOut)
	require.Contains(t, out, "1 known failure(s), failing in the baseline "+filepath.Join(first, report.JSONFile)+" too")
	require.Contains(t, out, "FAIL fingerprint/mismatch @ reference+no-fingerprint, known failure (baseline: FAIL): ")
	require.Contains(t, out, "no failures (seed 3")
	rep := readReportFile(t, filepath.Join(second, report.JSONFile))
	require.Equal(t, filepath.Join(first, report.JSONFile), rep.Baseline)
	require.Len(t, rep.Results, 1)
	require.Equal(t, verdict.Fail, rep.Results[0].Verdict, "the verdict stays what was observed")
	require.True(t, rep.Results[0].KnownFailure)
	md, err := os.ReadFile(filepath.Join(second, report.MarkdownFile))
	require.NoError(t, err)
	require.Contains(t, string(md), "### Known failures (failing in the baseline too; not failing this run) (1)")
	page, err := os.ReadFile(filepath.Join(second, report.HTMLFile))
	require.NoError(t, err)
	require.Contains(t, string(page), "<h2>Known failures</h2>")
	require.Contains(t, string(page), `data-known="true"`)
	junit, err := os.ReadFile(filepath.Join(second, report.JUnitFile))
	require.NoError(t, err)
	require.Contains(t, string(junit), `<skipped message="known failure (baseline: FAIL):`)

	// A baseline of another strictness is used, with a warning.
	out, _, code = runCLI(t, "check", "--flaw", "no-fingerprint", "--only", "fingerprint/mismatch", "--strict",
		"--baseline", filepath.Join(first, report.JSONFile))
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "warning: the baseline "+filepath.Join(first, report.JSONFile)+" ran with strict=false and this run with strict=true")

	// A baseline where the scenario passed: the FAIL is a regression, exit 1.
	passed := readReportFile(t, filepath.Join(first, report.JSONFile))
	passed.Results[0].Verdict = verdict.Pass
	passedPath := filepath.Join(dir, "passed.json")
	writeReportFile(t, passedPath, passed)
	out, _, code = runCLI(t, "check", "--flaw", "no-fingerprint", "--only", "fingerprint/mismatch", "--baseline", passedPath)
	require.Equal(t, 1, code, out)
	require.Contains(t, out, "1 failing result(s)")

	// A baseline without the scenario, but with another of the run's: a new failing
	// scenario, exit 1.
	other := readReportFile(t, filepath.Join(first, report.JSONFile))
	other.Results[0].ScenarioID, other.Results[0].Verdict = "replay/sequential", verdict.Pass
	otherPath := filepath.Join(dir, "other.json")
	writeReportFile(t, otherPath, other)
	out, _, code = runCLI(t, "check", "--flaw", "no-fingerprint", "--only", "fingerprint/mismatch,replay/sequential", "--baseline", otherPath)
	require.Equal(t, 1, code, out)

	// An empty baseline matches nothing: an error before the run.
	empty := readReportFile(t, filepath.Join(first, report.JSONFile))
	empty.Results = nil
	emptyPath := filepath.Join(dir, "empty.json")
	writeReportFile(t, emptyPath, empty)
	_, errOut, code = runCLI(t, "check", "--flaw", "no-fingerprint", "--only", "fingerprint/mismatch", "--baseline", emptyPath)
	require.Equal(t, 2, code, errOut)
	require.Contains(t, errOut, "the baseline has no results")
}

func TestSkipIsListedInTheReport(t *testing.T) {
	out, errOut, code := runCLI(t, "check", "--only", "replay/sequential,key/missing,key/empty", "--skip", "key/*", "--json", "-")
	require.Equal(t, 0, code, errOut)
	var rep verdict.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep), "with --json - stdout holds the JSON report only")
	require.Equal(t, []string{"key/empty", "key/missing"}, rep.Skipped)
	require.Len(t, rep.Results, 1)
	require.Equal(t, "replay/sequential", rep.Results[0].ScenarioID)
	require.Contains(t, errOut, "2 scenario(s) skipped (--skip): key/empty, key/missing", "the console went to stderr")
}

func TestSingleReportFiles(t *testing.T) {
	dir := t.TempDir()
	md, js, ju := filepath.Join(dir, "summary.md"), filepath.Join(dir, "r.json"), filepath.Join(dir, "j.xml")
	out, errOut, code := runCLI(t, "check", "--flaw", "no-fingerprint", "--only", "fingerprint/mismatch,replay/sequential",
		"--markdown", md, "--json", js, "--junit", ju)
	require.Equal(t, 1, code, "%s\n%s", out, errOut)
	require.Contains(t, out, "reports: "+js+" "+ju+" "+md)
	text, err := os.ReadFile(md)
	require.NoError(t, err)
	require.Contains(t, string(text), "## idemproof: 1 failing")
	require.Contains(t, string(text), "- **FAIL** `fingerprint/mismatch` @ reference+no-fingerprint: ")
	require.Contains(t, string(text), "--only fingerprint/mismatch --flaw no-fingerprint`")
	require.Len(t, readReportFile(t, js).Results, 2)
	xml, err := os.ReadFile(ju)
	require.NoError(t, err)
	require.Contains(t, string(xml), `<testsuites name="idemproof" tests="2" failures="1"`)

	out, _, code = runCLI(t, "check", "--only", "replay/sequential", "--markdown", "-")
	require.Equal(t, 0, code)
	require.Contains(t, out, "## idemproof: no failures\n")
	require.NotContains(t, out, "PASS  ", "only the Markdown on stdout")
}

func TestCheckExtrasUsageErrors(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"schema_version": 99}`), 0o644))
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"check", "--markdown", "-", "--json", "-"}, "only one report can go to stdout"},
		{[]string{"check", "--junit", "-"}, "--junit -: give a file path"},
		{[]string{"check", "--shard", "4/3"}, `--shard: "4/3": want 1 ≤ I ≤ N`},
		{[]string{"check", "--baseline", bad}, "--baseline: " + bad + ": read json report: schema_version 99"},
		{[]string{"check", "--baseline", bad + ".missing"}, "--baseline: open " + bad + ".missing"},
		{[]string{"check", "--skip", "no/such"}, `--skip: select "no/such": no scenario matches`},
		{[]string{"check", "--only", "key/missing", "--skip", "key/*"}, "--skip/--shard leave no scenario to run"},
	}
	for _, c := range cases {
		out, errOut, code := runCLI(t, c.args...)
		require.Equal(t, 2, code, "%v\n%s\n%s", c.args, out, errOut)
		require.Contains(t, errOut, c.want, "%v", c.args)
	}
}

func TestDiffPrintsVerdictChanges(t *testing.T) {
	dir := t.TempDir()
	a := &verdict.Report{SchemaVersion: verdict.ReportSchemaVersion, Targets: []string{"api"}, Results: []verdict.Result{
		{Target: "api", ScenarioID: "replay/after-503", Verdict: verdict.Pass},
		{Target: "api", ScenarioID: "key/empty", Verdict: verdict.NonStrict},
		{Target: "api", ScenarioID: "race/burst-50", Verdict: verdict.Pass},
	}}
	b := &verdict.Report{SchemaVersion: verdict.ReportSchemaVersion, Targets: []string{"api"}, Results: []verdict.Result{
		{Target: "api", ScenarioID: "replay/after-503", Verdict: verdict.Fail},
		{Target: "api", ScenarioID: "key/empty", Verdict: verdict.Pass},
		{Target: "api", ScenarioID: "race/burst-50", Verdict: verdict.Pass},
	}}
	pa, pb := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	writeReportFile(t, pa, a)
	writeReportFile(t, pb, b)

	out, _, code := runCLI(t, "diff", pa, pb)
	require.Equal(t, 1, code, out)
	require.Regexp(t, `(?m)^WORSE\s+api\s+replay/after-503\s+PASS\s+FAIL\s*$`, out)
	require.Regexp(t, `(?m)^better\s+api\s+key/empty\s+NON-STRICT\s+PASS\s*$`, out)
	require.NotContains(t, out, "race/burst-50")
	require.Contains(t, out, "2 changed (1 worse, 1 better)")

	out, _, code = runCLI(t, "diff", pb, pb)
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "0 changed (0 worse, 0 better)")
	require.NotContains(t, out, "INCOMPLETE")

	// A stopped run's missing scenarios are "gone", not worse: the diff says it is incomplete.
	stopped := *b
	stopped.Results = b.Results[:1]
	stopped.Interrupted = "interrupt signal received"
	stopped.NotRun = []verdict.NotRun{{ScenarioID: "key/empty", Target: "api"}, {ScenarioID: "race/burst-50", Target: "api"}}
	ps := filepath.Join(dir, "stopped.json")
	writeReportFile(t, ps, &stopped)
	out, _, code = runCLI(t, "diff", pb, ps)
	require.Equal(t, 0, code, out)
	require.Regexp(t, `(?m)^gone\s+api\s+key/empty\s`, out)
	require.Contains(t, out, ps+": INCOMPLETE: the run was stopped (interrupt signal received); 2 of 3 scenario runs never started")

	_, errOut, code := runCLI(t, "diff", pa)
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "usage: idemproof diff OLD/report.json NEW/report.json")
}

// Two single-target reports of differently named targets pair by position, and diff
// says so; in either direction the one changed scenario is counted, never 2×N rows of
// new and gone.
func TestDiffPairsDifferentlyNamedTargetsByPosition(t *testing.T) {
	dir := t.TempDir()
	old := &verdict.Report{SchemaVersion: verdict.ReportSchemaVersion, Targets: []string{"staging"}, Results: []verdict.Result{
		{Target: "staging", ScenarioID: "replay/after-503", Verdict: verdict.Pass},
		{Target: "staging", ScenarioID: "key/empty", Verdict: verdict.Pass},
	}}
	cur := &verdict.Report{SchemaVersion: verdict.ReportSchemaVersion, Targets: []string{"prod"}, Results: []verdict.Result{
		{Target: "prod", ScenarioID: "replay/after-503", Verdict: verdict.Fail},
		{Target: "prod", ScenarioID: "key/empty", Verdict: verdict.Pass},
	}}
	po, pc := filepath.Join(dir, "old.json"), filepath.Join(dir, "new.json")
	writeReportFile(t, po, old)
	writeReportFile(t, pc, cur)

	out, _, code := runCLI(t, "diff", po, pc)
	require.Equal(t, 1, code, out)
	require.Contains(t, out, `paired by position: target "staging" with "prod" (one target each, named differently)`)
	require.Regexp(t, `(?m)^WORSE\s+staging → prod\s+replay/after-503\s+PASS\s+FAIL\s*$`, out)
	require.Contains(t, out, "1 changed (1 worse, 0 better)")

	out, _, code = runCLI(t, "diff", pc, po)
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "1 changed (0 worse, 1 better)")

	// Several targets, none of the same name: nothing to pair, an error.
	two := *cur
	two.Targets = []string{"prod", "prod-eu"}
	two.Results = append(append([]verdict.Result{}, cur.Results...), verdict.Result{Target: "prod-eu", ScenarioID: "key/empty", Verdict: verdict.Pass})
	pt := filepath.Join(dir, "two.json")
	writeReportFile(t, pt, &two)
	_, errOut, code := runCLI(t, "diff", po, pt)
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `no target of the second report is in the first report: it has "staging"; the second report "prod", "prod-eu"`)
}

// --baseline pairs a renamed single target by position and says so; a baseline that
// matches nothing stops the run before it starts (exit 2), never applies nothing in
// silence.
func TestBaselinePairsByPositionAndRefusesOneThatMatchesNothing(t *testing.T) {
	dir := t.TempDir()
	first := filepath.Join(dir, "first")
	out, _, code := runCLI(t, "check", "--flaw", "no-fingerprint", "--only", "fingerprint/mismatch", "--seed", "3", "--report-dir", first)
	require.Equal(t, 1, code, out)
	renamed := readReportFile(t, filepath.Join(first, report.JSONFile))
	renamed.Targets = []string{"refunds-staging"}
	for i := range renamed.Results {
		renamed.Results[i].Target = "refunds-staging"
	}
	renamedPath := filepath.Join(dir, "renamed.json")
	writeReportFile(t, renamedPath, renamed)

	out, errOut, code := runCLI(t, "check", "--flaw", "no-fingerprint", "--only", "fingerprint/mismatch", "--baseline", renamedPath)
	require.Equal(t, 0, code, "%s\n%s", out, errOut)
	require.Contains(t, out, `baseline: paired by position: target "refunds-staging" with "reference+no-fingerprint" (one target each, named differently)`)
	require.Contains(t, out, "1 known failure(s)")

	elsewhere := readReportFile(t, filepath.Join(first, report.JSONFile))
	elsewhere.Results[0].ScenarioID = "replay/sequential"
	elsewherePath := filepath.Join(dir, "elsewhere.json")
	writeReportFile(t, elsewherePath, elsewhere)
	out, errOut, code = runCLI(t, "check", "--flaw", "no-fingerprint", "--only", "fingerprint/mismatch", "--baseline", elsewherePath)
	require.Equal(t, 2, code, "%s\n%s", out, errOut)
	require.Contains(t, errOut, "--baseline "+elsewherePath+": no scenario of this run is in the baseline (it has replay/sequential)")
	require.NotContains(t, out, "fingerprint/mismatch", "nothing ran")
}
