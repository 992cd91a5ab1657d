package report_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/report"
	"github.com/idemproof/idemproof/verdict"
)

func markdown(t *testing.T, rep *verdict.Report) string {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, report.WriteMarkdown(&buf, rep))
	return buf.String()
}

func TestMarkdownRendersTheFailingResults(t *testing.T) {
	md := markdown(t, sampleReport())
	require.True(t, strings.HasPrefix(md, "## idemproof: 1 failing\n"), md)
	require.Contains(t, md, "idemproof test · seed 42 · strict=false")
	require.Contains(t, md, "| target | PASS | INFO | N/A | NON-STRICT | UNKNOWN | FAIL | total |\n", "no known column without a baseline")
	require.Contains(t, md, "| reference | 4 | 1 | 0 | 0 | 0 | 0 | 5 |\n")
	require.Contains(t, md, "| stripe-like | 1 | 0 | 1 | 1 | 1 | 1 | 5 |\n")

	require.Contains(t, md, "### Failing (1)\n\n- **FAIL** `replay/after-503` @ stripe-like: 2 refunds for one key second line (duplicated=1)\n"+
		"  `idemproof check --seed 42 --only replay/after-503 --profile stripe-like`\n", "one line of evidence and the repeat command")
	require.Contains(t, md, "### Unknown (the outcome could not be seen; not a pass) (1)\n\n- **UNKNOWN** `before/503` @ stripe-like: ledger probe failed\n")
	require.NotContains(t, md, "Known failures")

	require.Contains(t, md, "### Matrix (6 scenarios; 1 PASS on every target not shown)\n")
	require.Contains(t, md, "| scenario | reference | stripe-like |\n|---|---|---|\n")
	require.Contains(t, md, "| `replay/after-503` | PASS | FAIL |\n")
	require.Contains(t, md, "| `recovery/crash-after-key` | – | N/A |\n")
	require.NotContains(t, md, "| `race/burst-50` |", "PASS everywhere: left out")
}

func TestMarkdownListsKnownFailuresAndSkippedScenarios(t *testing.T) {
	rep := sampleReport()
	rep.Baseline = "old/report.json"
	rep.Skipped = []string{"race/burst-1000", "recovery/slow-past-lock"}
	for i := range rep.Results {
		if rep.Results[i].Verdict == verdict.Fail {
			rep.Results[i].KnownFailure, rep.Results[i].BaselineVerdict = true, verdict.Fail
		}
	}
	md := markdown(t, rep)
	require.True(t, strings.HasPrefix(md, "## idemproof: no failures\n"), md)
	require.Contains(t, md, " · baseline `old/report.json`")
	require.Contains(t, md, "| stripe-like | 1 | 0 | 1 | 1 | 1 | 1 | 1 | 5 |\n")
	require.Contains(t, md, "### Known failures (failing in the baseline too; not failing this run) (1)\n\n"+
		"- **FAIL** `replay/after-503` @ stripe-like: 2 refunds for one key second line (duplicated=1) — known failure (baseline: FAIL)\n")
	require.Contains(t, md, "### Skipped (2, --skip)\n\n`race/burst-1000`, `recovery/slow-past-lock`\n")
	require.Contains(t, md, "| `replay/after-503` | PASS | FAIL (known) |\n")
}

func TestMarkdownEscapesTargetTextAndStaysSmall(t *testing.T) {
	rep := &verdict.Report{Tool: "idemproof test", Seed: 1, Targets: []string{"api"}}
	for i := 0; i < 200; i++ {
		rep.Results = append(rep.Results, verdict.Result{
			ScenarioID: "replay/after-503", Target: "api", Verdict: verdict.Fail,
			Message: "body <script>alert(1)</script> | `x` " + strings.Repeat("long ", 100),
		})
	}
	md := markdown(t, rep)
	require.NotContains(t, md, "<script>")
	require.Contains(t, md, `\<script\>`)
	require.Equal(t, report.MaxMarkdownResults, strings.Count(md, "- **FAIL**"))
	require.Contains(t, md, "- … 160 more in report.html\n")
	require.Less(t, len(md), 20000, "small enough for a pull request comment")
}

// Under strict the UNKNOWN results are detailed with the failing ones, but the title
// counts them apart: an UNKNOWN is incomplete (exit 3), never a FAIL.
func TestMarkdownTitleCountsUnknownApartUnderStrict(t *testing.T) {
	rep := sampleReport()
	rep.Strict = true
	var buf bytes.Buffer
	require.NoError(t, report.WriteMarkdown(&buf, rep))
	require.True(t, strings.HasPrefix(buf.String(), "## idemproof: 2 failing, 1 UNKNOWN\n"), buf.String())
}

// A result that describes the run (client-check's fault schedule) is listed under Notes
// whatever its verdict: the summary shows which faults never fired.
func TestMarkdownListsTheRunsNotes(t *testing.T) {
	rep := sampleReport()
	require.NotContains(t, markdown(t, rep), "### Notes")
	rep.Results = append(rep.Results, verdict.Result{ScenarioID: "client/fault-schedule", Target: "client", Verdict: verdict.Info,
		Labels: []string{verdict.SummaryLabel}, Message: "503 (seed 1) over 3 operation(s): hold: never applied"})
	require.Contains(t, markdown(t, rep), "### Notes\n\n- `client/fault-schedule`: 503 (seed 1) over 3 operation(s): hold: never applied\n")
}
