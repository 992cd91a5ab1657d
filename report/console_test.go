package report_test

import (
	"bytes"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/report"
	"github.com/idemproof/idemproof/verdict"
)

func TestWriteLineIsOneAlignedLine(t *testing.T) {
	rep := sampleReport()
	var buf bytes.Buffer
	report.WriteLine(&buf, rep.Results[1])
	line := buf.String()
	require.Equal(t, 1, strings.Count(line, "\n"), "a multi-line message must stay on one line")
	require.True(t, strings.HasPrefix(line, "FAIL        replay/after-503  "), line)
	require.Contains(t, line, "stripe-like")
	require.Contains(t, line, "40ms")
	require.Contains(t, line, "2 refunds for one key second line")
}

func TestAProvisionalFailSaysSoOnItsLine(t *testing.T) {
	r := sampleReport().Results[1]
	r.Provisional = true
	for name, write := range map[string]func(*bytes.Buffer){
		"plain":   func(b *bytes.Buffer) { report.WriteLine(b, r) },
		"colored": func(b *bytes.Buffer) { report.ProgressWith(b, report.LiveOptions{Color: true})(r) },
	} {
		var buf bytes.Buffer
		write(&buf)
		require.Contains(t, buf.String(), "FAIL", name)
		require.Contains(t, buf.String(), "provisional, the ledger is read again when the target's run ends: 2 refunds for one key", name)
	}
	var buf bytes.Buffer
	r.Provisional = false
	report.WriteLine(&buf, r)
	require.NotContains(t, buf.String(), "provisional")
}

func TestProgressLinesDoNotInterleave(t *testing.T) {
	rep := sampleReport()
	var buf bytes.Buffer
	progress := report.Progress(&buf)
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, r := range rep.Results {
				progress(r)
			}
		}()
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	require.Len(t, lines, 20*len(rep.Results))
	for _, l := range lines {
		require.Regexp(t, `^(PASS|FAIL|NON-STRICT|INFO|N/A|UNKNOWN)\s+\S+/\S+\s+(reference|stripe-like)\s`, l)
	}
}

func TestSummaryCountsAndFailureDetails(t *testing.T) {
	rep := sampleReport()
	var buf bytes.Buffer
	report.WriteSummary(&buf, rep)
	out := buf.String()

	lines := strings.Split(out, "\n")
	require.Regexp(t, `^\s*target\s+PASS\s+INFO\s+N/A\s+NON-STRICT\s+UNKNOWN\s+FAIL\s+total$`, lines[0])
	require.Regexp(t, `^\s*reference\s+4\s+1\s+0\s+0\s+0\s+0\s+5$`, lines[1])
	require.Regexp(t, `^\s*stripe-like\s+1\s+0\s+1\s+1\s+1\s+1\s+5$`, lines[2])

	// Not strict: only the FAIL is detailed.
	require.Contains(t, out, "1 failing result(s) (seed 42, strict=false)")
	require.Contains(t, out, "FAIL replay/after-503 @ stripe-like: 2 refunds for one key second line")
	require.Contains(t, out, "evidence: duplicated=1")
	require.Contains(t, out, "proxy journal (ground truth, in arrival order):")
	require.Contains(t, out, "after-reset (reset)")
	require.Contains(t, out, `K1=k\x01ctl`, "control characters are escaped")
	require.Contains(t, out, "ledger: refund=2")
	require.Contains(t, out, "repeat: idemproof check --seed 42 --only replay/after-503 --profile stripe-like")
	require.NotContains(t, out, "UNKNOWN before/503")
	require.Contains(t, out, "1 UNKNOWN result(s), nothing proven for them (incomplete, never a pass): before/503 @ stripe-like")
	require.Contains(t, out, "1 NON-STRICT result(s), not failing without --strict: replay/marker @ stripe-like")

	rep.Strict = true
	buf.Reset()
	report.WriteSummary(&buf, rep)
	out = buf.String()
	require.Contains(t, out, "2 failing result(s) and 1 UNKNOWN (incomplete, never a pass) (seed 42, strict=true)")
	require.NotContains(t, out, "not failing without --strict")
	require.Contains(t, out, "UNKNOWN before/503 @ stripe-like")
	require.Contains(t, out, "ledger: probe failed: GET /v1/refunds: connection refused")
	require.Contains(t, out, "NON-STRICT replay/marker @ stripe-like")
}

func TestSummaryWithoutFailures(t *testing.T) {
	rep := &verdict.Report{Seed: 7, Targets: []string{"reference"}, Results: sampleReport().Results[:1]}
	var buf bytes.Buffer
	report.WriteSummary(&buf, rep)
	require.Contains(t, buf.String(), "no failures (seed 7, strict=false)")
}

func TestTimelineSummarisesLongBursts(t *testing.T) {
	rep := sampleReport()
	out := report.Timeline(rep.Results[2].Evidence.Record)
	require.Contains(t, out, "26 more attempts: 26× 409 → 409")
	rows := 0
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "POST /v1/refunds") {
			rows++
		}
	}
	require.Equal(t, report.MaxTimelineRows, rows)
	require.Contains(t, report.Timeline(nil), "(no record)")
}

func TestFailingFollowsStrict(t *testing.T) {
	require.True(t, report.Failing(verdict.Fail, false))
	require.False(t, report.Failing(verdict.Unknown, false))
	require.True(t, report.Failing(verdict.Unknown, true))
	require.False(t, report.Failing(verdict.NonStrict, false))
	require.True(t, report.Failing(verdict.NonStrict, true))
	for _, v := range []verdict.Verdict{verdict.Pass, verdict.Info, verdict.NA} {
		require.False(t, report.Failing(v, true), v)
	}
}

func TestRepeatCommandNamesTheEmbeddedVariant(t *testing.T) {
	rep := &verdict.Report{Seed: 9, Strict: true}
	cases := map[string]string{
		"reference":                    "idemproof check --seed 9 --only replay/marker --strict",
		"reference+no-replay-header":   "idemproof check --seed 9 --only replay/marker --flaw no-replay-header --strict",
		"reference+pin-5xx+a@postgres": "idemproof check --seed 9 --only replay/marker --flaw pin-5xx --flaw a --store postgres://… --strict",
		"referenced-api":               "idemproof check --seed 9 --only replay/marker --profile referenced-api --strict",
		"stripe-like":                  "idemproof check --seed 9 --only replay/marker --profile stripe-like --strict",
	}
	for target, want := range cases {
		got := report.RepeatCommand(rep, verdict.Result{ScenarioID: "replay/marker", Target: target})
		require.Equal(t, want, got, target)
	}
}

// TestRepeatCommandNamesTheProfileFile: a profile loaded from a file is repeated by its
// path (quoted for the shell), not by the name inside it, which --profile cannot find.
func TestRepeatCommandNamesTheProfileFile(t *testing.T) {
	rep := &verdict.Report{Seed: 9, TargetSources: map[string]string{
		"stripe-like": "profiles/stripe like.yaml",
		"tools-api":   "./ci/tools.yaml",
	}}
	cases := map[string]string{
		"stripe-like": "idemproof check --seed 9 --only replay/marker --profile 'profiles/stripe like.yaml'",
		"tools-api":   "idemproof check --seed 9 --only replay/marker --profile ./ci/tools.yaml",
		"unlisted":    "idemproof check --seed 9 --only replay/marker --profile unlisted",
	}
	for target, want := range cases {
		got := report.RepeatCommand(rep, verdict.Result{ScenarioID: "replay/marker", Target: target})
		require.Equal(t, want, got, target)
	}
}

// A message too long for the live line is cut between words; where there is room (the
// summary's details) it is shown whole.
func TestLongMessagesAreCutBetweenWordsAndWholeWhereThereIsRoom(t *testing.T) {
	t.Parallel()
	msg := "the original got 500 (server_error) before client_timeout (a gateway in front gave up, or the target failed): retry got 500 (server_error), want the committed success"
	r := verdict.Result{ScenarioID: "recovery/client-gave-up", Target: "api", Verdict: verdict.Fail, Level: verdict.LevelSafety, Message: msg}
	var line bytes.Buffer
	report.WriteLine(&line, r)
	require.Contains(t, line.String(), "want the committed …\n", "cut after a whole word")
	require.NotContains(t, line.String(), "succes…")

	var summary bytes.Buffer
	report.WriteSummary(&summary, &verdict.Report{Targets: []string{"api"}, Results: []verdict.Result{r}})
	require.Contains(t, summary.String(), "FAIL recovery/client-gave-up @ api: "+msg+"\n")
}
