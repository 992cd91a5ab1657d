package faultproxy_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/faultproxy"
)

// pipeFaults is what a layer of another medium might apply: two types, one parameter.
func pipeFaults(spec faultproxy.FaultSpec) error {
	switch spec.Type {
	case faultproxy.FaultAfterDrop, faultproxy.FaultAfterKill:
		if spec.Status != 0 {
			return &faultproxy.FieldError{Field: "fault.status", Msg: "a line has no status"}
		}
		return nil
	}
	return &faultproxy.FieldError{Field: "fault.type", Msg: "not on a pipe: " + spec.Type}
}

func TestEngineChoosesNumbersAndJournalsAsTheProxy(t *testing.T) {
	t.Parallel()
	e, err := faultproxy.NewEngine(faultproxy.EngineConfig{CheckFault: pipeFaults, Seed: 3, Rules: []faultproxy.Rule{
		{Name: "drop-first", Match: faultproxy.Match{Key: "K*", Attempts: &faultproxy.Range{From: 1, To: 1}}, Fault: faultproxy.FaultSpec{Type: faultproxy.FaultAfterDrop}},
		{Name: "kill-marked", Match: faultproxy.Match{Path: "tools/*", Headers: map[string]string{"X-Kind": "kill"}}, Fault: faultproxy.FaultSpec{Type: faultproxy.FaultAfterKill}, Count: 1},
	}})
	require.NoError(t, err)

	first := e.Begin(faultproxy.Attempt{Path: "tools/call", Key: "K1", HasKey: true})
	require.Equal(t, 1, first.Ordinal)
	require.NotNil(t, first.Rule)
	require.Equal(t, "drop-first", first.Rule.Name)
	e.Finish(first, &faultproxy.Record{ClientResult: faultproxy.ClientDropped, RPCMethod: "tools/call"})

	retry := e.Begin(faultproxy.Attempt{Path: "tools/call", Key: "K1", HasKey: true})
	require.Equal(t, 2, retry.Ordinal)
	require.Nil(t, retry.Rule, "only the first attempt of a key")
	e.Finish(retry, &faultproxy.Record{ClientResult: faultproxy.ClientDelivered, ClientStatus: 200})

	marked := http.Header{"X-Kind": {"kill"}}
	kill := e.Begin(faultproxy.Attempt{Path: "tools/call", Header: marked})
	require.Equal(t, 0, kill.Ordinal, "no key, no ordinal")
	require.Equal(t, "kill-marked", kill.Rule.Name)
	e.Finish(kill, &faultproxy.Record{ClientResult: faultproxy.ClientKilled, Headers: map[string]string{"X-Kind": "kill"}})
	again := e.Begin(faultproxy.Attempt{Path: "tools/call", Header: marked})
	require.Nil(t, again.Rule, "count 1 used up")
	e.Finish(again, &faultproxy.Record{ClientResult: faultproxy.ClientDelivered, ClientStatus: 200})
	e.Log(&faultproxy.Record{RPCMethod: "notifications/initialized", ClientResult: faultproxy.ClientDelivered})

	recs, err := e.Journal(context.Background(), faultproxy.JournalQuery{})
	require.NoError(t, err)
	require.Len(t, recs, 5)
	require.Equal(t, []uint64{1, 2, 3, 4, 5}, []uint64{recs[0].Seq, recs[1].Seq, recs[2].Seq, recs[3].Seq, recs[4].Seq})
	require.Equal(t, "drop-first", recs[0].Rule)
	require.Equal(t, faultproxy.FaultAfterDrop, recs[0].Fault)
	require.Equal(t, 1, recs[0].Attempt)
	require.Equal(t, faultproxy.OutcomeInfo, recs[0].Outcome, "a dropped answer: the client cannot know")
	require.Equal(t, 2, recs[1].Attempt)
	require.Equal(t, faultproxy.OutcomeOK, recs[1].Outcome)
	require.Equal(t, faultproxy.FaultAfterKill, recs[2].Fault)
	require.NoError(t, e.WaitIdle(context.Background()), "every Begin finished")
}

func TestEngineRefusesFaultsItsLayerCannotApply(t *testing.T) {
	t.Parallel()
	e, err := faultproxy.NewEngine(faultproxy.EngineConfig{CheckFault: pipeFaults})
	require.NoError(t, err)
	err = e.AddRule(context.Background(), faultproxy.Rule{Name: "s", Fault: faultproxy.FaultSpec{Type: faultproxy.FaultAfterStatus, Status: 503}})
	var re *faultproxy.RuleError
	require.ErrorAs(t, err, &re)
	require.Equal(t, "fault.type", re.Field)
	require.ErrorContains(t, err, "not on a pipe")
	// The rule checks of the proxy hold too.
	err = e.AddRules(faultproxy.Rule{Name: "ok", Fault: faultproxy.FaultSpec{Type: faultproxy.FaultAfterDrop}}, faultproxy.Rule{Name: "", Fault: faultproxy.FaultSpec{Type: faultproxy.FaultAfterDrop}})
	require.ErrorAs(t, err, &re)
	require.Equal(t, "name", re.Field)
	require.Empty(t, e.Rules(), "all or none")

	_, err = faultproxy.NewEngine(faultproxy.EngineConfig{})
	require.ErrorContains(t, err, "CheckFault")
}

// The admin API is the proxy's: the same endpoints, answers and refusals.
func TestEngineAdminAPI(t *testing.T) {
	t.Parallel()
	e, err := faultproxy.NewEngine(faultproxy.EngineConfig{CheckFault: pipeFaults})
	require.NoError(t, err)
	h := e.AdminHandler("")
	code, _, raw := adminCall(t, h, "POST", "/rules", `{"name":"d","match":{"key":"*"},"fault":{"type":"after-drop"}}`, nil)
	require.Equal(t, 201, code, raw)
	code, m, _ := adminCall(t, h, "POST", "/rules", `{"name":"x","fault":{"type":"after-drop","status":503}}`, nil)
	require.Equal(t, 400, code)
	require.Equal(t, "fault.status", m["field"])
	tk := e.Begin(faultproxy.Attempt{Key: "K", HasKey: true})
	e.Finish(tk, &faultproxy.Record{Key: "K", HasKey: true, ClientResult: faultproxy.ClientDropped})
	code, _, raw = adminCall(t, h, "GET", "/journal?key=K", "", nil)
	require.Equal(t, 200, code)
	var page faultproxy.JournalPage
	require.NoError(t, json.Unmarshal([]byte(raw), &page))
	require.Len(t, page.Records, 1)
	require.Equal(t, "d", page.Records[0].Rule)
	code, _, _ = adminCall(t, h, "GET", "/rules", "", map[string]string{"Origin": "http://evil.example"})
	require.Equal(t, http.StatusForbidden, code)
	code, _, _ = adminCall(t, h, "POST", "/reset", "", nil)
	require.Equal(t, http.StatusNoContent, code)
	require.Empty(t, e.Rules())
}
