package report_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/report"
	"github.com/idemproof/idemproof/verdict"
)

// withBaseline is the sample with its FAIL known to a baseline and two skipped scenarios.
func withBaseline() *verdict.Report {
	rep := sampleReport()
	rep.Baseline = "old/report.json"
	rep.Skipped = []string{"race/burst-1000", "recovery/slow-past-lock"}
	for i := range rep.Results {
		if rep.Results[i].Verdict == verdict.Fail {
			rep.Results[i].KnownFailure, rep.Results[i].BaselineVerdict = true, verdict.Fail
		}
	}
	return rep
}

func TestKnownFailuresAreListedInEveryReport(t *testing.T) {
	rep := withBaseline()
	for _, r := range rep.Results {
		require.False(t, report.FailsRun(rep, r), "%s: a known failure does not fail the run", r.ScenarioID)
	}
	require.Len(t, report.KnownFailures(rep), 1)

	var console bytes.Buffer
	report.WriteSummary(&console, rep)
	require.Contains(t, console.String(), "1 known failure(s), failing in the baseline old/report.json too, not failing this run:\n"+
		"  FAIL replay/after-503 @ stripe-like, known failure (baseline: FAIL): 2 refunds for one key second line\n")
	require.Contains(t, console.String(), "2 scenario(s) skipped (--skip): race/burst-1000, recovery/slow-past-lock")
	require.Contains(t, console.String(), "no failures (seed 42")

	var page bytes.Buffer
	require.NoError(t, report.WriteHTML(&page, rep))
	html := page.String()
	require.Contains(t, html, "<h2>Known failures</h2>")
	require.Contains(t, html, "known failure (baseline: FAIL): 2 refunds for one key second line")
	require.Contains(t, html, `data-known="true"`)
	require.Contains(t, html, "<code>race/burst-1000</code>, <code>recovery/slow-past-lock</code>")
	require.Contains(t, html, `<div class="status ok">no failures</div>`)

	var junit bytes.Buffer
	require.NoError(t, report.WriteJUnit(&junit, rep))
	require.Contains(t, junit.String(), `<skipped message="known failure (baseline: FAIL): 2 refunds for one key`)
	require.Equal(t, 0, strings.Count(junit.String(), "<failure "), "no red testcase for a known failure")

	var js bytes.Buffer
	require.NoError(t, report.WriteJSON(&js, rep))
	require.Contains(t, js.String(), `"known_failure": true`)
	require.Contains(t, js.String(), `"baseline_verdict": "FAIL"`)
	require.Contains(t, js.String(), `"baseline": "old/report.json"`)
	back, err := report.ReadJSON(&js)
	require.NoError(t, err)
	require.Equal(t, rep.Skipped, back.Skipped)
}
