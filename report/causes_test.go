package report_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/report"
	"github.com/idemproof/idemproof/verdict"
)

// answered is a record of one key's attempts, each answered by the target with a status
// (and a body), as the journal and the client's history hold them.
func answered(key, step string, statuses ...int) *verdict.Record {
	rec := &verdict.Record{Ledger: map[string]int{verdict.LedgerOperation: 0}}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i, st := range statuses {
		at := t0.Add(time.Duration(i) * time.Second)
		class := outcome.Success
		if st >= 500 {
			class = outcome.ServerError
		}
		body := []byte(fmt.Sprintf(`{"n":%d}`, i))
		rec.Journal = append(rec.Journal, faultproxy.Record{Seq: uint64(i + 1), Time: at, Method: "POST", Path: "/v1/refunds", Key: key, HasKey: true,
			Attempt: i + 1, ReachedUpstream: true, UpstreamStatus: st, ClientStatus: st})
		rec.History = append(rec.History,
			verdict.Op{Index: 2 * i, Type: verdict.OpInvoke, Key: key, Step: step, Attempt: i + 1, Time: at},
			verdict.Op{Index: 2*i + 1, Type: verdict.OpOK, Key: key, Step: step, Attempt: i + 1, Time: at.Add(time.Millisecond), Status: st, Class: class, Body: body})
	}
	return rec
}

func result(id string, level verdict.Level, v verdict.Verdict, rec *verdict.Record) verdict.Result {
	return verdict.Result{Target: "api", ScenarioID: id, Level: level, Verdict: v, Message: "observed", Evidence: verdict.Evidence{Record: rec}}
}

const uuidKey = "0f8fad5b-d9cb-469f-a165-70867728950e"

// A target that answers 500 to every key that is not a UUID: one cause leads, with its
// count, its results ranked by level (SAFETY, MUST, SHOULD), FAIL before UNKNOWN, and
// the key shape the answers share. The 503 a fail hook asked for is no part of it.
func TestOneCauseLeadsWhenTheTargetAnswers5xxForAKeyShape(t *testing.T) {
	t.Parallel()
	blamed := result("replay/after-503", verdict.LevelSafety, verdict.Fail, answered("idemproof-a-1", "retry", 500))
	blamed.Evidence.Blame = []verdict.Blame{{Index: 1, Want: "the committed success"}}
	rep := &verdict.Report{Targets: []string{"api"}, Results: []verdict.Result{
		result("key/empty", verdict.LevelShould, verdict.NonStrict, answered("idemproof-a-2", "empty", 500)),
		result("expiry/inside-window", verdict.LevelMust, verdict.Unknown, answered("idemproof-a-3", "original", 500)),
		blamed,
		result("replay/sequential", verdict.LevelSafety, verdict.Unknown, answered("idemproof-a-4", "original", 500, 500)),
		result("key/valid-never-5xx", verdict.LevelMust, verdict.Pass, answered(uuidKey, "original", 201)),
		// The hooked step's 503 is the scenario's own doing; its retry succeeded.
		result("storage/5xx-not-pinned", verdict.LevelMust, verdict.Unknown, answered("idemproof-a-5", "failing", 503, 201)),
	}}
	causes := report.Causes(rep)
	require.Len(t, causes, 1)
	c := causes[0]
	require.Equal(t, "server-error-500", c.Kind)
	require.Equal(t, "4 results (1 FAIL, 2 UNKNOWN, 1 NON-STRICT)", c.Count())
	require.Equal(t, "the target answered 500 to every key that is not a UUID (4 keys), and a success to the UUID keys (1): the scenarios could not see the contract at work", c.Summary)
	var ids []string
	for _, r := range c.Results {
		ids = append(ids, r.ScenarioID)
	}
	require.Equal(t, []string{"replay/after-503", "replay/sequential", "expiry/inside-window", "key/empty"}, ids, "SAFETY first, FAIL before UNKNOWN, then MUST, SHOULD")

	var buf bytes.Buffer
	report.WriteSummary(&buf, rep)
	out := buf.String()
	require.Contains(t, out, "\n1 cause explains 4 of the 5 results that are not good:\n\n"+
		"4 results (1 FAIL, 2 UNKNOWN, 1 NON-STRICT) @ api: the target answered 500 to every key that is not a UUID")
	require.Contains(t, out, "  SAFETY (2): FAIL replay/after-503, UNKNOWN replay/sequential\n  MUST (1): UNKNOWN expiry/inside-window\n  SHOULD (1): NON-STRICT key/empty\n")
	require.Less(t, strings.Index(out, "cause explains"), strings.Index(out, "failing result(s)"), "the cause leads")

	var md bytes.Buffer
	require.NoError(t, report.WriteMarkdown(&md, rep))
	require.Contains(t, md.String(), "### 1 cause explains 4 of the 5 results that are not good\n\n- **4 results (1 FAIL, 2 UNKNOWN, 1 NON-STRICT)** @ api: the target answered 500")
	require.Contains(t, md.String(), "  - SAFETY (2): FAIL `replay/after-503`, UNKNOWN `replay/sequential`\n")
	var page bytes.Buffer
	require.NoError(t, report.WriteHTML(&page, rep))
	require.Contains(t, page.String(), "<h2>1 cause explains 4 of the 5 results that are not good</h2>")
	require.Contains(t, page.String(), `<li>SAFETY (2): <a href="#r-replay-after-503-api">`)
}

// A cause is shared evidence, never shared wording: results whose messages read alike
// but whose evidence differs lead with nothing; fewer than three results lead with
// nothing either.
func TestNoCauseFromWordingOrFromTwoResults(t *testing.T) {
	t.Parallel()
	same := "retry got 500 (server_error), want the committed success"
	mk := func(id, cat string) verdict.Result {
		r := result(id, verdict.LevelSafety, verdict.Fail, answered("k-"+id, "original", 201))
		r.Message = same
		r.Evidence.Categories = map[string]int{cat: 1}
		return r
	}
	rep := &verdict.Report{Results: []verdict.Result{mk("a/1", verdict.CatLost), mk("a/2", verdict.CatLeaked), mk("a/3", verdict.CatStuck)}}
	require.Empty(t, report.Causes(rep))

	two := &verdict.Report{Results: []verdict.Result{mk("a/1", verdict.CatLost), mk("a/2", verdict.CatLost)}}
	require.Empty(t, report.Causes(two))
}

// Replays that differ from the committed response in the same member lead as one
// cause, whatever else differs in some of them.
func TestDivergedReplaysShareTheMemberTheyDifferIn(t *testing.T) {
	t.Parallel()
	mk := func(id, replay string) verdict.Result {
		rec := answered("k-"+id, "original", 201, 201)
		rec.History[3].Body = []byte(replay)
		r := result(id, verdict.LevelSafety, verdict.Fail, rec)
		r.Evidence.Categories = map[string]int{verdict.CatDiverged: 1}
		r.Evidence.Blame = []verdict.Blame{{Index: 3, Want: "the committed 201", Committed: &verdict.Response{Status: 201, Body: []byte(`{"id":"re_1","n":0}`)}}}
		return r
	}
	rep := &verdict.Report{Results: []verdict.Result{
		mk("replay/a", `{"id":"re_2","n":0}`),
		mk("replay/b", `{"id":"re_3","n":0}`),
		mk("replay/c", `{"id":"re_4","n":9}`),
	}}
	causes := report.Causes(rep)
	require.Len(t, causes, 1)
	require.Equal(t, "diverged:id", causes[0].Kind)
	require.Equal(t, "replays differ from the committed response in id (and n in 1)", causes[0].Summary)
	require.Len(t, causes[0].Results, 3)
}

// Nothing is stored: repeats sent after their key's original had succeeded got
// responses the key had never given, with more side effects than one.
func TestRepeatsThatExecuteAgainLeadAsOneCause(t *testing.T) {
	t.Parallel()
	mk := func(id string) verdict.Result {
		r := result(id, verdict.LevelSafety, verdict.Fail, answered("k-"+id, "original", 201, 201))
		r.Evidence.Categories = map[string]int{verdict.CatDuplicated: 1}
		return r
	}
	rep := &verdict.Report{Results: []verdict.Result{mk("replay/sequential"), mk("before/503"), mk("race/duplicate-sequential")}}
	causes := report.Causes(rep)
	require.Len(t, causes, 1)
	require.Equal(t, "re-executed", causes[0].Kind)

	// The same duplicates with a repeat that got one of the key's responses again
	// (a replay of one of two executions): a duplicate, not proof that nothing is stored.
	for i := range rep.Results {
		rep.Results[i].Evidence.Record.History[3].Body = rep.Results[i].Evidence.Record.History[1].Body
	}
	causes = report.Causes(rep)
	require.Len(t, causes, 1)
	require.Equal(t, "category:duplicated", causes[0].Kind)
}
