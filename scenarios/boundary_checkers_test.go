package scenarios_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/downstream"
	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/scenarios"
	"github.com/idemproof/idemproof/verdict"
)

// vendorCall is one recorded call of the downstream sink.
func vendorCall(seq uint64, key string, answer downstream.Answer) downstream.Call {
	return downstream.Call{Seq: seq, Key: key, HasKey: key != "", Entity: "e", Answer: answer}
}

func judgeBoundary(t *testing.T, id string, rec verdict.Record) (verdict.Verdict, string, verdict.Evidence) {
	t.Helper()
	sc, ok := scenarios.Lookup(id)
	require.True(t, ok, id)
	p := refProfile(t)
	p.Downstream = &profile.Downstream{Listen: "127.0.0.1:0", Entity: "order_id"}
	return sc.Check(rec, p)
}

func boundaryRecord(ledger int, calls ...downstream.Call) verdict.Record {
	rec := newHistory().at(0, "original", verdict.OpOK, 201, `{}`, nil).record(ledger)
	rec.Downstream = calls
	return rec
}

func TestBoundaryPassesOneVendorEffectUnderOneKey(t *testing.T) {
	t.Parallel()
	v, msg, _ := judgeBoundary(t, "boundary/retry-same-downstream-key", boundaryRecord(1,
		vendorCall(1, "k", downstream.Answer503After), vendorCall(2, "k", downstream.AnswerReplayed)))
	require.Equal(t, verdict.Pass, v, msg)
}

func TestBoundaryFailsAnUnkeyedRedriveAsDuplicated(t *testing.T) {
	t.Parallel()
	v, msg, ev := judgeBoundary(t, "boundary/retry-same-downstream-key", boundaryRecord(1,
		vendorCall(1, "", downstream.Answer503After), vendorCall(2, "", downstream.AnswerCommitted)))
	require.Equal(t, verdict.Fail, v, msg)
	require.Equal(t, map[string]int{verdict.CatDuplicated: 1, scenarios.CatUnkeyed: 2}, ev.Categories)
}

func TestBoundaryFailsALostVendorCallAndIsInfoWithoutARedrive(t *testing.T) {
	t.Parallel()
	v, msg, ev := judgeBoundary(t, "boundary/crash-between-commit-and-call", boundaryRecord(1))
	require.Equal(t, verdict.Fail, v, msg)
	require.Equal(t, map[string]int{verdict.CatLost: 1}, ev.Categories)
	require.Contains(t, msg, "2s settle window")

	v, msg, _ = judgeBoundary(t, "boundary/retry-same-downstream-key", boundaryRecord(1, vendorCall(1, "k", downstream.Answer503After)))
	require.Equal(t, verdict.Info, v, "the key's stability was never exercised: no pass without proof (%s)", msg)
}

func TestBoundaryFailsASecondCallOnAReplayAndChangedKeys(t *testing.T) {
	t.Parallel()
	v, msg, _ := judgeBoundary(t, "boundary/replay-no-second-call", boundaryRecord(1,
		vendorCall(1, "k", downstream.AnswerCommitted), vendorCall(2, "k", downstream.AnswerReplayed)))
	require.Equal(t, verdict.Fail, v, "deduplicated by the vendor, but the replay called it again: %s", msg)

	v, msg, ev := judgeBoundary(t, "boundary/vendor-5xx-then-retry", boundaryRecord(1,
		vendorCall(1, "k1", downstream.Answer503Before), vendorCall(2, "k2", downstream.AnswerCommitted)))
	require.Equal(t, verdict.Fail, v, msg)
	require.Equal(t, map[string]int{scenarios.CatKeyChanged: 1}, ev.Categories)
}

func TestBoundaryIsUnknownWhenTheAPIDidNotCommitOnceOrNothingWasRefused(t *testing.T) {
	t.Parallel()
	v, _, _ := judgeBoundary(t, "boundary/replay-no-second-call", boundaryRecord(2, vendorCall(1, "k", downstream.AnswerCommitted)))
	require.Equal(t, verdict.Unknown, v)

	rec := boundaryRecord(1, vendorCall(1, "k", downstream.AnswerCommitted))
	v, _, _ = judgeBoundary(t, "boundary/no-call-on-refusal", rec)
	require.Equal(t, verdict.Unknown, v, "no step was refused")

	rec.History = append(rec.History,
		verdict.Op{Type: verdict.OpInvoke, Step: "mismatch"},
		verdict.Op{Type: verdict.OpFail, Step: "mismatch", Status: 422, Class: outcome.Mismatch})
	v, msg, _ := judgeBoundary(t, "boundary/no-call-on-refusal", rec)
	require.Equal(t, verdict.Pass, v, msg)
	rec.Downstream = append(rec.Downstream, vendorCall(2, "k", downstream.AnswerReplayed))
	v, _, ev := judgeBoundary(t, "boundary/no-call-on-refusal", rec)
	require.Equal(t, verdict.Fail, v)
	require.Equal(t, map[string]int{scenarios.CatCalledOnRefusal: 1}, ev.Categories)
}

func TestDownstreamProfileFieldsAreValidated(t *testing.T) {
	t.Parallel()
	_, err := profile.Parse("x.yaml", []byte("extends: reference\nbase_url: http://127.0.0.1:1\ndownstream: {listen: nowhere, key_header: 'a b'}\n"))
	require.ErrorContains(t, err, "downstream.listen: must be host:port")
	require.ErrorContains(t, err, "downstream.entity: required")
	require.ErrorContains(t, err, "downstream.key_header: must be a header name")

	p, err := profile.Parse("x.yaml", []byte("extends: reference\nbase_url: http://127.0.0.1:1\ndownstream: {listen: 127.0.0.1:9090, entity: order_id, settle: 3s}\n"))
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:9090", p.Downstream.Listen)
	require.Empty(t, p.Missing(profile.CapDownstream))
}

func TestAFreePortSinkNeedsTheTargetsStarter(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	counts := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if r.Method == http.MethodPost {
			var body struct {
				OrderID string `json:"order_id"`
			}
			_ = json.NewDecoder(r.Body).Decode(&body)
			counts[body.OrderID]++
			w.WriteHeader(http.StatusCreated)
			return
		}
		fmt.Fprintf(w, `{"count":%d}`, counts[r.URL.Query().Get("order_id")])
	}))
	defer srv.Close()
	p, err := profile.Parse("x.yaml", []byte("extends: reference\nbase_url: "+srv.URL+"\ndownstream: {listen: 127.0.0.1:0, entity: order_id}\n"))
	require.NoError(t, err)
	_, err = scenarios.Run(t.Context(), scenarios.RunConfig{Profiles: []*profile.Profile{p}, Only: []string{"boundary/*"}})
	require.ErrorContains(t, err, "picks a free port the target cannot know")
}

// A target's own timeout can fire while a loaded machine's sink is slow to answer: the
// target never had the answer, and calling again with the same key is what a correct
// at-least-once sender does. Only calls after a delivered answer are a second call.
func TestBoundaryAllowsAKeyedResendAfterTheCallerLostTheVendorsAnswer(t *testing.T) {
	t.Parallel()
	lost := vendorCall(1, "k", downstream.AnswerCommitted)
	lost.CallerLeft = true
	for _, id := range []string{"boundary/replay-no-second-call", "boundary/no-call-on-refusal"} {
		rec := boundaryRecord(1, lost, vendorCall(2, "k", downstream.AnswerReplayed))
		if id == "boundary/no-call-on-refusal" {
			rec.History = append(rec.History, newHistory().at(1, "repeat", verdict.OpFail, 409, `{}`, nil).record(1).History...)
		}
		v, msg, _ := judgeBoundary(t, id, rec)
		require.Equal(t, verdict.Pass, v, "%s: %s", id, msg)
		require.Contains(t, msg, "1 re-sent after the target hung up")
	}

	// One lost answer justifies one more call, not two.
	v, msg, ev := judgeBoundary(t, "boundary/replay-no-second-call", boundaryRecord(1,
		lost, vendorCall(2, "k", downstream.AnswerReplayed), vendorCall(3, "k", downstream.AnswerReplayed)))
	require.Equal(t, verdict.Fail, v, msg)
	require.Equal(t, map[string]int{verdict.CatDuplicated: 1}, ev.Categories)
	require.Contains(t, msg, "1 of them re-sent because the target hung up")
	require.Contains(t, ev.Examples[0], "#1 key=k committed (caller gone before the answer)")

	// The re-send without a key made a second effect: still a duplicate.
	v, msg, _ = judgeBoundary(t, "boundary/replay-no-second-call", boundaryRecord(1,
		downstream.Call{Seq: 1, Entity: "e", Answer: downstream.AnswerCommitted, CallerLeft: true},
		downstream.Call{Seq: 2, Entity: "e", Answer: downstream.AnswerCommitted}))
	require.Equal(t, verdict.Fail, v, msg)

	// The last call's caller leaving justifies nothing after it.
	last := vendorCall(2, "k", downstream.AnswerReplayed)
	last.CallerLeft = true
	v, msg, _ = judgeBoundary(t, "boundary/replay-no-second-call", boundaryRecord(1,
		vendorCall(1, "k", downstream.AnswerCommitted), last))
	require.Equal(t, verdict.Fail, v, msg)
}
