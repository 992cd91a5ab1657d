package report_test

import (
	"strings"
	"time"

	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/verdict"
)

var t0 = time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)

// sampleReport is a hand-made run of two targets covering every verdict, a lost
// response recovered by a retry, a duplicated effect, a burst larger than the timeline
// limit, a key with a control character and a failed ledger probe.
func sampleReport() *verdict.Report {
	key := "k-" + strings.Repeat("a", 30)
	recovered := &verdict.Record{
		Seed: 42, Entity: "order-1",
		Ledger: map[string]int{"refund": 1},
		History: []verdict.Op{
			{Index: 0, Client: 1, Attempt: 1, Type: verdict.OpInvoke, Key: key, Step: "original", Time: t0},
			{Index: 1, Client: 1, Attempt: 1, Type: verdict.OpInfo, Key: key, Step: "original", Time: t0, Status: 503},
			{Index: 2, Client: 1, Attempt: 2, Type: verdict.OpInvoke, Key: key, Step: "retry", Time: t0},
			{Index: 3, Client: 1, Attempt: 2, Type: verdict.OpOK, Key: key, Step: "retry", Time: t0, Status: 201, Body: []byte(`{"id":"rf_1"}`)},
		},
		Journal: []faultproxy.Record{
			{Seq: 1, Time: t0, Method: "POST", Path: "/v1/refunds", Key: key, HasKey: true, Attempt: 1, Rule: "after-503", Fault: faultproxy.FaultAfterStatus,
				ReachedUpstream: true, UpstreamCalls: 1, UpstreamStatus: 201, UpstreamMillis: 3, ClientStatus: 503, ClientResult: faultproxy.ClientDelivered, Outcome: faultproxy.OutcomeInfo},
			{Seq: 2, Time: t0.Add(5 * time.Millisecond), Method: "POST", Path: "/v1/refunds", Key: key, HasKey: true, Attempt: 2,
				ReachedUpstream: true, UpstreamCalls: 1, UpstreamStatus: 201, UpstreamMillis: 1, ClientStatus: 201, ClientResult: faultproxy.ClientDelivered, Outcome: faultproxy.OutcomeOK},
		},
	}
	duplicated := &verdict.Record{
		Seed: 42, Entity: "order-2",
		Ledger: map[string]int{"refund": 2},
		Journal: []faultproxy.Record{
			{Seq: 3, Method: "POST", Path: "/v1/refunds", Key: "k\x01ctl", HasKey: true, Attempt: 1, Rule: "reset", Fault: faultproxy.FaultAfterReset,
				ReachedUpstream: true, UpstreamCalls: 1, UpstreamStatus: 201, ClientResult: faultproxy.ClientReset, Outcome: faultproxy.OutcomeInfo},
			{Seq: 4, Method: "POST", Path: "/v1/refunds", Key: "k\x01ctl", HasKey: true, Attempt: 2, Rule: "dup", Fault: faultproxy.FaultDuplicate,
				ReachedUpstream: true, UpstreamCalls: 2, UpstreamStatus: 201, ClientStatus: 201, ClientResult: faultproxy.ClientDelivered, Outcome: faultproxy.OutcomeOK},
		},
	}
	burst := &verdict.Record{Seed: 42, Entity: "order-3", Ledger: map[string]int{"refund": 1}}
	for i := 1; i <= 50; i++ {
		j := faultproxy.Record{Seq: uint64(10 + i), Method: "POST", Path: "/v1/refunds", Key: "burst", HasKey: true, Attempt: i,
			ReachedUpstream: true, UpstreamCalls: 1, UpstreamStatus: 409, ClientStatus: 409, ClientResult: faultproxy.ClientDelivered, Outcome: faultproxy.OutcomeFail}
		if i == 1 {
			j.UpstreamStatus, j.ClientStatus, j.Outcome = 201, 201, faultproxy.OutcomeOK
		}
		burst.Journal = append(burst.Journal, j)
	}
	before := &verdict.Record{
		Seed: 42, Entity: "order-4", Ledger: map[string]int{"refund": 1},
		Journal: []faultproxy.Record{
			{Seq: 80, Method: "POST", Path: "/v1/refunds", Key: "b", HasKey: true, Attempt: 1, Rule: "before-503", Fault: faultproxy.FaultBeforeStatus,
				ClientStatus: 503, ClientResult: faultproxy.ClientDelivered, Outcome: faultproxy.OutcomeInfo},
			{Seq: 81, Method: "POST", Path: "/v1/refunds", Key: "b", HasKey: true, Attempt: 2,
				ReachedUpstream: true, UpstreamCalls: 1, UpstreamStatus: 201, ClientStatus: 201, ClientResult: faultproxy.ClientDelivered, Outcome: faultproxy.OutcomeOK},
		},
	}
	unknown := &verdict.Record{Seed: 42, Entity: "order-5", LedgerErr: "GET /v1/refunds: connection refused",
		History: []verdict.Op{
			{Index: 0, Client: 1, Attempt: 1, Type: verdict.OpInvoke, Key: "u", Step: "original"},
			{Index: 1, Client: 1, Attempt: 1, Type: verdict.OpOK, Key: "u", Step: "original", Status: 201},
		}}

	res := func(id string, level verdict.Level, target string, v verdict.Verdict, msg string, rec *verdict.Record, cats map[string]int) verdict.Result {
		return verdict.Result{
			ScenarioID: id, Description: "description of " + id, Requirement: "requirement of " + id,
			Source: "draft-07 §2.6", Level: level, Labels: []string{"group:" + strings.Split(id, "/")[0], "level:" + strings.ToLower(string(level))},
			Target: target, Verdict: v, Message: msg,
			Evidence: verdict.Evidence{Categories: cats, Record: rec}, Duration: 40 * time.Millisecond,
		}
	}
	return &verdict.Report{
		SchemaVersion: verdict.ReportSchemaVersion,
		Tool:          "idemproof test",
		Seed:          42,
		Started:       t0,
		DurationMS:    1234,
		Targets:       []string{"reference", "stripe-like"},
		Results: []verdict.Result{
			res("replay/after-503", verdict.LevelSafety, "reference", verdict.Pass, "one refund; the retry got the committed 201", recovered, map[string]int{verdict.CatRecovered: 1}),
			res("replay/after-503", verdict.LevelSafety, "stripe-like", verdict.Fail, "2 refunds for one key\nsecond line", duplicated, map[string]int{verdict.CatDuplicated: 1}),
			res("race/burst-50", verdict.LevelSafety, "reference", verdict.Pass, "one refund; 49 × 409", burst, nil),
			res("race/burst-50", verdict.LevelSafety, "stripe-like", verdict.Pass, "one refund", burst, nil),
			res("before/503", verdict.LevelSafety, "reference", verdict.Pass, "executed once", before, nil),
			res("before/503", verdict.LevelSafety, "stripe-like", verdict.Unknown, "ledger probe failed", unknown, nil),
			res("replay/marker", verdict.LevelShould, "reference", verdict.Pass, "marker present", recovered, nil),
			res("replay/marker", verdict.LevelShould, "stripe-like", verdict.NonStrict, "no Idempotent-Replayed header on the replay", recovered, nil),
			res("fingerprint/json-key-order", verdict.LevelPolicy, "reference", verdict.Info, "reordered keys: 422", recovered, nil),
			res("recovery/crash-after-key", verdict.LevelMust, "stripe-like", verdict.NA, "profile declares no crash hook", nil, nil),
		},
	}
}

// resultCount is how many results the sample has, for assertions.
func resultCount() int { return len(sampleReport().Results) }
