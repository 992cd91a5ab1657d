package report_test

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/report"
	"github.com/idemproof/idemproof/verdict"
)

// interruptedReport is the sample cut short: two scenarios never ran against stripe-like.
func interruptedReport() *verdict.Report {
	rep := sampleReport()
	rep.Complete = false
	rep.Interrupted = "interrupt signal received"
	rep.NotRun = []verdict.NotRun{{ScenarioID: "key/missing", Target: "stripe-like"}, {ScenarioID: "key/empty", Target: "stripe-like"}}
	return rep
}

const wantBanner = "INCOMPLETE: the run was stopped (interrupt signal received); 2 of 12 scenario runs never started: nothing is proven for them"

func TestIncompleteBanner(t *testing.T) {
	require.Equal(t, wantBanner, report.IncompleteBanner(interruptedReport()))
	require.Empty(t, report.IncompleteBanner(sampleReport()), "a report that records no interruption is not incomplete")
	done := sampleReport()
	done.Complete = true
	require.Empty(t, report.IncompleteBanner(done))
}

// Stopped after every scenario had started (a merged shard, a signal during the last
// ones): nothing is listed as not run, and no empty "not run:" line is printed.
func TestIncompleteWithNothingNotRun(t *testing.T) {
	rep := interruptedReport()
	rep.NotRun = nil
	want := "INCOMPLETE: the run was stopped (interrupt signal received) before every scenario finished: nothing is proven for the UNKNOWN ones"
	require.Equal(t, want, report.IncompleteBanner(rep))
	var buf bytes.Buffer
	report.WriteSummary(&buf, rep)
	require.True(t, strings.HasPrefix(buf.String(), want+"\n\n"), buf.String())
	require.NotContains(t, buf.String(), "not run:")
	buf.Reset()
	require.NoError(t, report.WriteHTML(&buf, rep))
	require.Contains(t, buf.String(), `<div class="incomplete" id="incomplete">`+want+`</div>`)
	require.NotContains(t, buf.String(), "not run:")
	buf.Reset()
	require.NoError(t, report.WriteMarkdown(&buf, rep))
	require.NotContains(t, buf.String(), "not run:")
}

func TestConsoleSummaryOpensWithIncomplete(t *testing.T) {
	var buf bytes.Buffer
	report.WriteSummary(&buf, interruptedReport())
	out := buf.String()
	require.True(t, strings.HasPrefix(out, wantBanner+"\nnot run: key/missing, key/empty @ stripe-like\n\n"), out)

	rep := interruptedReport()
	rep.Results = rep.Results[:1]
	buf.Reset()
	report.WriteSummary(&buf, rep)
	require.Contains(t, buf.String(), "no failures among the results, but the run is INCOMPLETE")
	require.NotContains(t, buf.String(), "\nno failures (")
}

func TestJSONSaysComplete(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, report.WriteJSON(&buf, interruptedReport()))
	var doc map[string]any
	require.NoError(t, json.Unmarshal(buf.Bytes(), &doc))
	require.Equal(t, false, doc["complete"])
	require.Equal(t, "interrupt signal received", doc["interrupted"])
	require.Len(t, doc["not_run"], 2)
	back, err := report.ReadJSON(&buf)
	require.NoError(t, err)
	require.True(t, back.Incomplete())
	require.Equal(t, interruptedReport().NotRun, back.NotRun)

	buf.Reset()
	require.NoError(t, report.WriteJSON(&buf, sampleReport()))
	require.Contains(t, buf.String(), `"complete": true,`, "a report that records no interruption is written complete")

	old := `{"schema_version": 1, "seed": 3, "targets": ["a"], "results": []}`
	back, err = report.ReadJSON(strings.NewReader(old))
	require.NoError(t, err)
	require.True(t, back.Complete, "a report from before the field was complete")
}

func TestHTMLOpensWithIncomplete(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, report.WriteHTML(&buf, interruptedReport()))
	page := buf.String()
	body := page[strings.Index(page, "<body>"):]
	require.True(t, strings.HasPrefix(body, `<body>
<div class="incomplete" id="incomplete">`+wantBanner+`<div class="notrun">not run: key/missing, key/empty @ stripe-like</div></div>`), body[:300])
	require.Contains(t, page, `<div class="status bad">1 failing result(s)</div>`)

	rep := interruptedReport()
	rep.Results = rep.Results[:1]
	buf.Reset()
	require.NoError(t, report.WriteHTML(&buf, rep))
	require.Contains(t, buf.String(), `<div class="status bad">incomplete</div>`)
	require.NotContains(t, buf.String(), "no failures")

	buf.Reset()
	require.NoError(t, report.WriteHTML(&buf, sampleReport()))
	require.NotContains(t, buf.String(), `id="incomplete"`)
}

func TestMarkdownOpensWithIncomplete(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, report.WriteMarkdown(&buf, interruptedReport()))
	require.True(t, strings.HasPrefix(buf.String(), "## idemproof: 1 failing, INCOMPLETE\n\n> **"+wantBanner+"**\n> not run: key/missing, key/empty @ stripe-like\n\n"), buf.String())

	rep := interruptedReport()
	rep.Results = rep.Results[:1]
	buf.Reset()
	require.NoError(t, report.WriteMarkdown(&buf, rep))
	require.True(t, strings.HasPrefix(buf.String(), "## idemproof: no failures, INCOMPLETE\n\n"), buf.String())

	buf.Reset()
	require.NoError(t, report.WriteMarkdown(&buf, sampleReport()))
	require.NotContains(t, buf.String(), "INCOMPLETE")
}

func TestJUnitOpensWithIncompleteAndErrsEachScenarioNotRun(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, report.WriteJUnit(&buf, interruptedReport()))
	out := buf.String()
	require.True(t, strings.HasPrefix(out, xml.Header+"<!-- "+wantBanner+" -->\n<testsuites "), out[:300])
	var suites report.JUnitSuites
	require.NoError(t, xml.Unmarshal(buf.Bytes(), &suites))
	require.Equal(t, resultCount()+2, suites.Tests)
	var stripe report.JUnitSuite
	for _, s := range suites.Suites {
		require.Contains(t, s.Properties, report.JUnitProperty{Name: "complete", Value: "false"})
		if s.Name == "stripe-like" {
			stripe = s
		}
	}
	notRun := 0
	for _, c := range stripe.Cases {
		if c.Error != nil && c.Error.Type == "NOT-RUN" {
			notRun++
			require.Contains(t, c.Error.Message, "not run: the run was stopped before this scenario started (interrupt signal received)")
		}
	}
	require.Equal(t, 2, notRun)
	require.Equal(t, 3, stripe.Errors, "the UNKNOWN and the two not run")

	buf.Reset()
	require.NoError(t, report.WriteJUnit(&buf, sampleReport()))
	require.NotContains(t, buf.String(), "INCOMPLETE")
	require.Contains(t, buf.String(), `<property name="complete" value="true">`)
}
