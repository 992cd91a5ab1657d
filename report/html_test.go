package report_test

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"html"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/report"
)

func renderHTML(t *testing.T) string {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, report.WriteHTML(&buf, sampleReport()))
	// IDEMPROOF_HTML_SAMPLE=/tmp/x.html keeps the page to look at in a browser.
	if p := os.Getenv("IDEMPROOF_HTML_SAMPLE"); p != "" {
		require.NoError(t, os.WriteFile(p, buf.Bytes(), 0o644))
	}
	return buf.String()
}

func TestHTMLMatrixHasACellPerResult(t *testing.T) {
	page := renderHTML(t)
	for _, r := range sampleReport().Results {
		cell := fmt.Sprintf(`data-scenario="%s" data-target="%s" data-verdict="%s"`, r.ScenarioID, r.Target, html.EscapeString(string(r.Verdict)))
		require.Equal(t, 1, strings.Count(page, cell), cell)
	}
	cells := regexp.MustCompile(`<td class="v v-[a-z-]+" data-scenario=`).FindAllString(page, -1)
	require.Len(t, cells, resultCount())
	// recovery/crash-after-key has no result for "reference": an empty cell, not a verdict.
	require.Equal(t, 1, strings.Count(page, `<td class="v" data-target="reference">—</td>`))
	require.Contains(t, page, `<td class="v v-fail" data-scenario="replay/after-503" data-target="stripe-like"`)
	require.Contains(t, page, `<td class="v v-n-a" data-scenario="recovery/crash-after-key"`)
	require.Contains(t, page, `<title>idemproof report: reference vs stripe-like</title>`)
}

func TestHTMLHasAWellFormedSVGPerResult(t *testing.T) {
	page := renderHTML(t)
	svgs := regexp.MustCompile(`(?s)<svg .*?</svg>`).FindAllString(page, -1)
	require.Len(t, svgs, resultCount())
	for i, s := range svgs {
		var root struct {
			XMLName xml.Name
			Texts   []string `xml:"text"`
		}
		require.NoError(t, xml.Unmarshal([]byte(s), &root), "svg %d: %s", i, s)
		require.Equal(t, "svg", root.XMLName.Local)
		require.Contains(t, root.Texts, "client")
		require.Contains(t, root.Texts, "fault proxy")
		require.Contains(t, root.Texts, "upstream")
	}
	// Arrival times relative to the first attempt.
	require.Contains(t, svgs[0], ">+0ms<")
	require.Contains(t, svgs[0], ">+5ms<")
	// The failing stripe-like replay: the reset drawn as a fault, the duplicate delivered
	// twice, the ledger showing two refunds.
	fail := svgs[1]
	require.Contains(t, fail, "⚡ after-reset<")
	require.Contains(t, fail, "deliver 2 of 2")
	require.Contains(t, fail, "ledger after the run: refund=2")
	require.Contains(t, fail, `K1=k\x01ctl`)
	// Diagrams follow the matrix: grouped by scenario group, then target order.
	// The burst is cut after MaxTimelineRows attempts and summarised.
	require.Contains(t, svgs[4], "26 more attempts: 26× 409 → 409")
	// The UNKNOWN result has no journal: the client's view and the failed probe.
	require.Contains(t, svgs[7], "no proxy journal: the client&#39;s view only")
	require.Contains(t, svgs[7], "probe failed: GET /v1/refunds: connection refused")
	require.Contains(t, svgs[len(svgs)-1], "no attempts recorded")
}

func TestHTMLIsSelfContained(t *testing.T) {
	page := renderHTML(t)
	require.NotContains(t, strings.ToLower(page), "<script")
	require.NotContains(t, page, "<link")
	require.NotContains(t, page, " src=")
	external := regexp.MustCompile(`https?://[^"\s<]+`).FindAllString(page, -1)
	for _, u := range external {
		require.Equal(t, "http://www.w3.org/2000/svg", u, "only the SVG namespace may be a URL")
	}
	// Failing results are listed above the matrix and expanded; passing ones folded.
	require.Contains(t, page, `<li><a href="#r-replay-after-503-stripe-like"><span class="badge v-fail">FAIL</span> <b>replay/after-503</b> @ stripe-like</a>`)
	require.Equal(t, 1, strings.Count(page, "<li><a href=\"#r-"), "only the one FAIL is failing without strict")
	require.Contains(t, page, `<details id="r-replay-after-503-stripe-like" open>`)
	require.Contains(t, page, `<details id="r-replay-after-503-reference">`)
	require.Contains(t, page, `2 refunds for one key`)
	require.Contains(t, page, `repeat: <code>idemproof check --seed 42 --only replay/after-503 --profile stripe-like</code>`)
}
