package report_test

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/report"
	"github.com/idemproof/idemproof/verdict"
)

const (
	committedBody = `{"id":"re_a","order_id":"o-1","amount":4900}`
	alteredBody   = `{"id":"re_b","order_id":"o-1","amount":5000}`
)

// mismatchAnswered2xx is a fingerprint/mismatch run against a target without a
// fingerprint: the altered payload (P2) got a 201 where 422 was due; the checker blamed
// that attempt (history event 3) against the committed response.
func mismatchAnswered2xx() verdict.Result {
	rec := &verdict.Record{
		Seed: 7, Entity: "o-1", Ledger: map[string]int{"operation": 1},
		History: []verdict.Op{
			{Index: 0, Attempt: 1, Type: verdict.OpInvoke, Key: "k-1", Step: "original", Time: t0},
			{Index: 1, Attempt: 1, Type: verdict.OpOK, Key: "k-1", Step: "original", Time: t0, Status: 201, Body: []byte(committedBody), Class: outcome.Success},
			{Index: 2, Attempt: 2, Type: verdict.OpInvoke, Key: "k-1", Step: "altered", Time: t0},
			{Index: 3, Attempt: 2, Type: verdict.OpOK, Key: "k-1", Step: "altered", Time: t0, Status: 201, Body: []byte(alteredBody), Class: outcome.Success},
		},
		Journal: []faultproxy.Record{
			{Seq: 4, Time: t0, Method: "POST", Path: "/v1/refunds", Key: "k-1", HasKey: true, Attempt: 1, BodySHA256: "2c925cbe00",
				ReachedUpstream: true, UpstreamCalls: 1, UpstreamStatus: 201, ClientStatus: 201, ClientResult: faultproxy.ClientDelivered, Outcome: faultproxy.OutcomeOK},
			{Seq: 5, Time: t0.Add(time.Millisecond), Method: "POST", Path: "/v1/refunds", Key: "k-1", HasKey: true, Attempt: 2, BodySHA256: "2f3991ef00",
				ReachedUpstream: true, UpstreamCalls: 1, UpstreamStatus: 201, ClientStatus: 201, ClientResult: faultproxy.ClientDelivered, Outcome: faultproxy.OutcomeOK},
		},
	}
	return verdict.Result{
		ScenarioID: "fingerprint/mismatch", Description: "the same key with another payload is refused",
		Requirement: "reuse with another payload gets 422", Source: "draft-07 §2.7", Level: verdict.LevelMust,
		Target: "reference+no-fingerprint", Verdict: verdict.Fail,
		Message: "another payload was answered 201, want 422",
		Evidence: verdict.Evidence{
			Categories: map[string]int{verdict.CatLeaked: 1},
			Examples:   []string{"altered got 201 " + alteredBody},
			Record:     rec,
			Blame: []verdict.Blame{{Index: 3, Want: "422 (mismatch)",
				Committed: &verdict.Response{Status: 201, Body: []byte(committedBody)}}},
		},
	}
}

func blameReport() *verdict.Report {
	r := mismatchAnswered2xx()
	return &verdict.Report{SchemaVersion: verdict.ReportSchemaVersion, Seed: 7, Started: t0, Targets: []string{r.Target}, Results: []verdict.Result{r}}
}

// answerArrows are the proxy → client arrows of a diagram (x1 > x2 on the client lane),
// in order, by their stroke colour.
func answerArrows(svg string) []string {
	re := regexp.MustCompile(`<line x1="430" y1="\d+" x2="110" y2="\d+" stroke="(#[0-9a-f]{6})"`)
	var out []string
	for _, m := range re.FindAllStringSubmatch(svg, -1) {
		out = append(out, m[1])
	}
	return out
}

func TestBlamedAttemptIsTheOnlyRedArrowAndSaysWhatWasWanted(t *testing.T) {
	svg := report.ResultSVG("m", mismatchAnswered2xx())
	require.Equal(t, []string{"#1b7f3b", "#d50000"}, answerArrows(svg), "the original's 201 stays green, the altered attempt's 201 is red")
	require.Contains(t, svg, `class="want">✗ want 422 (mismatch)<`)
	require.Equal(t, 1, strings.Count(svg, `class="blamed"`))

	plain := report.SequenceSVG("m", mismatchAnswered2xx().Evidence.Record)
	require.Equal(t, []string{"#1b7f3b", "#1b7f3b"}, answerArrows(plain), "without the blame nothing is red")
	require.NotContains(t, plain, "✗ want")
}

func TestBlamedAttemptMarkedInTheConsoleTimeline(t *testing.T) {
	var buf bytes.Buffer
	report.WriteSummary(&buf, blameReport())
	out := buf.String()
	require.Regexp(t, `(?m)^\s+5\s+K1\s+2\s+POST /v1/refunds\s+P2\s.*ok\s+✗ want 422 \(mismatch\)$`, out, "the journal row of the blamed attempt")
	require.Regexp(t, `(?m)^\s+4\s+K1\s+1\s+POST /v1/refunds\s+P1\s.*ok\s*$`, out, "the original's row is not marked")
	require.Regexp(t, `(?m)^\s+3\s+0\s+altered\s+2\s+ok\s+K1\s.*✗ want 422 \(mismatch\)$`, out, "the history event")
	require.Contains(t, out, "payloads: P1=operation.body (step original, sha256 2c925cbe…)  P2=operation.altered_body (step altered, sha256 2f3991ef…)")
	require.Contains(t, out, "keys: K1=k-1")
	require.Contains(t, out, `✗ #3 altered (K1, attempt 2): got 201 {"id":"re_b","order_id":"o-1","amount":5000}; want 422 (mismatch)`)
	require.Contains(t, out, `committed vs this answer: id: "re_a" → "re_b"; amount: 4900 → 5000`)
	require.NotContains(t, out, `\"`, "bodies are JSON text, never Go-quoted")
}

func TestHTMLShowsBodiesAsJSONWithTheDiffAndTheLegend(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, report.WriteHTML(&buf, blameReport()))
	page := buf.String()
	require.NotContains(t, page, `\&#34;`, "no backslash-escaped JSON")
	require.NotContains(t, page, `\"`)
	require.Contains(t, page, "{\n  &#34;id&#34;: &#34;re_b&#34;,\n  &#34;order_id&#34;: &#34;o-1&#34;,\n  &#34;amount&#34;: 5000\n}", "the blamed body, indented")
	require.Contains(t, page, "committed response · 201")
	require.Contains(t, page, `<li><code>amount</code>: <code class="from">4900</code> → <code class="to">5000</code></li>`)
	require.Contains(t, page, `<li><code>id</code>: <code class="from">&#34;re_a&#34;</code> → <code class="to">&#34;re_b&#34;</code></li>`)
	require.Contains(t, page, "✗ #5 altered (K1, attempt 2) got 201 — want 422 (mismatch)", "numbered as its arrow in the diagram: journal seq 5")
	require.Contains(t, page, "#5 K1 try 2")
	require.Contains(t, page, `id="timeline-legend"`)
	require.Contains(t, page, "payloads: P1=operation.body (step original, sha256 2c925cbe…)")
	require.Contains(t, page, "P2=operation.altered_body (step altered, sha256 2f3991ef…)")
	require.Contains(t, page, `stroke="#d50000"`)
}

func TestJUnitFailureCarriesTheBlameAndTheDiff(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, report.WriteJUnit(&buf, blameReport()))
	xml := buf.String()
	require.Contains(t, xml, "want 422 (mismatch)")
	require.Contains(t, xml, "amount: 4900 → 5000")
	require.Contains(t, xml, "payloads: P1=operation.body")
}

// Concurrent attempts can reach the proxy in another order than the client invoked them:
// the blamed 409 is marked on the journal record that answered 409.
func TestBlameFollowsTheStatusWhenOrdinalsCross(t *testing.T) {
	rec := &verdict.Record{
		History: []verdict.Op{
			{Index: 0, Client: 0, Attempt: 1, Type: verdict.OpInvoke, Key: "k", Step: "original"},
			{Index: 1, Client: 1, Attempt: 1, Type: verdict.OpInvoke, Key: "k", Step: "repeat"},
			{Index: 2, Client: 1, Attempt: 1, Type: verdict.OpFail, Key: "k", Step: "repeat", Status: 409, Class: outcome.InFlight},
			{Index: 3, Client: 0, Attempt: 1, Type: verdict.OpOK, Key: "k", Step: "original", Status: 201, Class: outcome.Success},
		},
		Journal: []faultproxy.Record{
			{Seq: 1, Time: t0, Method: "POST", Path: "/p", Key: "k", HasKey: true, Attempt: 1, ReachedUpstream: true, UpstreamStatus: 409, ClientStatus: 409, ClientResult: faultproxy.ClientDelivered, Outcome: faultproxy.OutcomeFail},
			{Seq: 2, Time: t0.Add(time.Millisecond), Method: "POST", Path: "/p", Key: "k", HasKey: true, Attempt: 2, ReachedUpstream: true, UpstreamStatus: 201, ClientStatus: 201, ClientResult: faultproxy.ClientDelivered, Outcome: faultproxy.OutcomeOK},
		},
	}
	r := verdict.Result{ScenarioID: "race/in-flight-409", Evidence: verdict.Evidence{Record: rec, Blame: []verdict.Blame{{Index: 2, Want: "the replay after a wait"}}}}
	out := report.ResultTimeline(r)
	require.Regexp(t, `(?m)^\s+1\s+K1\s+1\s.*409\s+409\s+fail\s+✗ want the replay after a wait$`, out)
	require.Regexp(t, `(?m)^\s+2\s+K1\s+2\s.*201\s+201\s+ok\s*$`, out)
	require.Equal(t, []string{"#d50000", "#1b7f3b"}, answerArrows(report.ResultSVG("x", r)))
}

// A burst is cut after 24 attempts, but the attempt the checker blamed is shown even
// when it came later.
func TestBlamedAttemptPastTheRowLimitIsStillShown(t *testing.T) {
	rec := &verdict.Record{Ledger: map[string]int{"operation": 1}}
	for i := 1; i <= 30; i++ {
		status, cls := 409, outcome.InFlight
		if i == 1 {
			status, cls = 201, outcome.Success
		}
		rec.History = append(rec.History,
			verdict.Op{Index: 2*i - 2, Client: i, Attempt: 1, Type: verdict.OpInvoke, Key: "k", Step: "burst"},
			verdict.Op{Index: 2*i - 1, Client: i, Attempt: 1, Type: verdict.OpFail, Key: "k", Step: "burst", Status: status, Class: cls})
		rec.Journal = append(rec.Journal, faultproxy.Record{Seq: uint64(100 + i), Time: t0.Add(time.Duration(i) * time.Millisecond), Method: "POST", Path: "/p",
			Key: "k", HasKey: true, Attempt: i, ReachedUpstream: true, UpstreamStatus: status, ClientStatus: status,
			ClientResult: faultproxy.ClientDelivered, Outcome: faultproxy.OutcomeFail})
	}
	// The 28th attempt: history completion index 55, journal seq 128.
	r := verdict.Result{ScenarioID: "race/burst-50", Evidence: verdict.Evidence{Record: rec, Blame: []verdict.Blame{{Index: 55, Want: "the committed success"}}}}
	out := report.ResultTimeline(r)
	require.Regexp(t, `(?s)6 more attempts.*\n\s+128\s+K1\s+28\s.*✗ want the committed success\n`, out)
	svg := report.ResultSVG("b", r)
	require.Contains(t, svg, "#128 K1 try 28")
	require.Contains(t, svg, "✗ want the committed success")
	require.Equal(t, "#d50000", answerArrows(svg)[len(answerArrows(svg))-1])
}

func TestMarkdownNamesTheBlamedAttempt(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, report.WriteMarkdown(&buf, blameReport()))
	require.Contains(t, buf.String(), "✗ altered (K1, attempt 2) got 201, want 422 (mismatch); committed vs this answer: id: ")
	require.Contains(t, buf.String(), "amount: 4900 → 5000")
}

func TestAnswerIdenticalToTheCommittedResponseIsSaidToBe(t *testing.T) {
	r := mismatchAnswered2xx()
	r.Evidence.Record.History[3].Body = []byte(committedBody)
	var buf bytes.Buffer
	report.WriteSummary(&buf, &verdict.Report{Results: []verdict.Result{r}, Targets: []string{r.Target}})
	require.Contains(t, buf.String(), "committed vs this answer: identical (the committed response itself)")
	buf.Reset()
	require.NoError(t, report.WriteHTML(&buf, &verdict.Report{Results: []verdict.Result{r}, Targets: []string{r.Target}}))
	require.Contains(t, buf.String(), "identical: this answer is the committed response itself")
	require.NotContains(t, buf.String(), `<ul class="diff">`)
}

// Without a proxy journal the diagram is drawn from the client's history; the blamed
// answer is red there too.
func TestBlamedAnswerIsRedInTheClientOnlyDiagram(t *testing.T) {
	r := mismatchAnswered2xx()
	r.Evidence.Record.Journal = nil
	svg := report.ResultSVG("h", r)
	answers := regexp.MustCompile(`<line x1="750" y1="\d+" x2="110" y2="\d+" stroke="(#[0-9a-f]{6})"`).FindAllStringSubmatch(svg, -1)
	require.Len(t, answers, 2)
	require.Equal(t, "#1b7f3b", answers[0][1])
	require.Equal(t, "#d50000", answers[1][1])
	require.Contains(t, svg, "✗ want 422 (mismatch)")
}
