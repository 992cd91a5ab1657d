package scenarios_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/scenarios"
	"github.com/idemproof/idemproof/verdict"
)

// reapplying answers every replay correctly, then applies the refund again a little
// later, from a queue: the ledger is right when the scenario is judged and wrong after.
type reapplying struct {
	*fakeRefunds
	after time.Duration
}

func (s reapplying) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := httptest.NewRecorder()
	s.fakeRefunds.ServeHTTP(rec, r)
	if rec.Header().Get("Idempotent-Replayed") != "" {
		order := r.URL.Query().Get("order_id")
		if order == "" {
			order = entityOf(rec.Body.String())
		}
		time.AfterFunc(s.after, func() {
			s.mu.Lock()
			s.ledger[order]++
			s.mu.Unlock()
		})
	}
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

func TestAnEffectAppliedAfterEveryAnswerFailsWhenTheLedgerIsReadAgain(t *testing.T) {
	t.Parallel()
	inner := &fakeRefunds{}
	startFake(t, inner)
	srv := httptest.NewServer(reapplying{inner, 300 * time.Millisecond})
	t.Cleanup(srv.Close)
	p := patientProfile(t, srv.URL) // an attempt a loaded machine times out is UNKNOWN, not the verdict this is about
	var notices []string
	rep, err := scenarios.Run(t.Context(), scenarios.RunConfig{Profiles: []*profile.Profile{p}, Only: []string{"replay/sequential", "key/missing"},
		NoPreflight: true, Seed: 1, Notice: func(s string) { notices = append(notices, s) }})
	require.NoError(t, err)
	got := map[string]verdict.Result{}
	for _, r := range rep.Results {
		got[r.ScenarioID] = r
	}
	seq := got["replay/sequential"]
	require.Equal(t, verdict.Fail, seq.Verdict, seq.Message)
	require.Contains(t, seq.Message, "read again at the end of the run: 2 side effect(s), 1 side effect(s) when the scenario was judged")
	require.Equal(t, map[string]int{"operation": 1}, seq.Evidence.Record.Ledger, "the counts it was judged by stay")
	require.Equal(t, map[string]int{"operation": 2}, seq.Evidence.Record.LateLedger)
	require.Equal(t, 1, seq.Evidence.Categories["duplicated"])
	require.Len(t, notices, 1)
	require.Contains(t, notices[0], "replay/sequential @ fake is FAIL after all")

	require.Equal(t, verdict.Pass, got["key/missing"].Verdict, "nothing was replayed there, nothing changed: %s", got["key/missing"].Message)
}

// Only a result judged from a ledger is read again at the end of a run, so a run with
// nothing to read again (N/A, UNKNOWN, a duplicate's FAIL) has no late-read wait: a
// one-scenario run of an N/A scenario costs nothing.
func TestLateReadsOnlyResultsJudgedFromALedger(t *testing.T) {
	t.Parallel()
	p, err := profile.Builtin("reference")
	require.NoError(t, err)
	judged := &verdict.Record{Ledger: map[string]int{verdict.LedgerOperation: 1}}
	duplicated := &verdict.Record{Ledger: map[string]int{verdict.LedgerOperation: 2}}
	all := []verdict.Result{
		{ScenarioID: "na", Verdict: verdict.NA},
		{ScenarioID: "unknown", Verdict: verdict.Unknown},
		{ScenarioID: "ledger-failed", Verdict: verdict.Unknown, Evidence: verdict.Evidence{Record: &verdict.Record{LedgerErr: "503"}}},
		{ScenarioID: "pass", Verdict: verdict.Pass, Evidence: verdict.Evidence{Record: judged}},
		{ScenarioID: "duplicate", Verdict: verdict.Fail, Evidence: verdict.Evidence{Record: duplicated, Categories: map[string]int{verdict.CatDuplicated: 1}}},
		{ScenarioID: "lost", Verdict: verdict.Fail, Evidence: verdict.Evidence{Record: judged, Categories: map[string]int{verdict.CatLost: 1}}},
	}
	ran := []bool{true, true, true, true, true, true}
	require.Equal(t, []int{3, 5}, scenarios.LateReads(p, all, ran))
	require.Empty(t, scenarios.LateReads(p, all[:3], ran[:3]), "N/A and UNKNOWN alone: nothing to wait for")
}
