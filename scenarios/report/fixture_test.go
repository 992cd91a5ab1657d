package report_test

import (
	"strings"
	"time"

	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/scenarios"
)

var t0 = time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)

// sampleReport is a hand-made run of two targets covering every verdict, a lost
// response recovered by a retry, a duplicated effect, a burst larger than the timeline
// limit, a key with a control character and a failed ledger probe.
func sampleReport() *scenarios.Report {
	key := "k-" + strings.Repeat("a", 30)
	recovered := &scenarios.Record{
		Seed: 42, Entity: "order-1",
		Ledger: map[string]int{"refund": 1},
		History: []scenarios.Op{
			{Index: 0, Client: 1, Attempt: 1, Type: scenarios.OpInvoke, Key: key, Step: "original", Time: t0},
			{Index: 1, Client: 1, Attempt: 1, Type: scenarios.OpInfo, Key: key, Step: "original", Time: t0, Status: 503},
			{Index: 2, Client: 1, Attempt: 2, Type: scenarios.OpInvoke, Key: key, Step: "retry", Time: t0},
			{Index: 3, Client: 1, Attempt: 2, Type: scenarios.OpOK, Key: key, Step: "retry", Time: t0, Status: 201, Body: []byte(`{"id":"rf_1"}`)},
		},
		Journal: []faultproxy.Record{
			{Seq: 1, Time: t0, Method: "POST", Path: "/v1/refunds", Key: key, HasKey: true, Attempt: 1, Rule: "after-503", Fault: faultproxy.FaultAfterStatus,
				ReachedUpstream: true, UpstreamCalls: 1, UpstreamStatus: 201, UpstreamMillis: 3, ClientStatus: 503, ClientResult: faultproxy.ClientDelivered, Outcome: faultproxy.OutcomeInfo},
			{Seq: 2, Time: t0.Add(5 * time.Millisecond), Method: "POST", Path: "/v1/refunds", Key: key, HasKey: true, Attempt: 2,
				ReachedUpstream: true, UpstreamCalls: 1, UpstreamStatus: 201, UpstreamMillis: 1, ClientStatus: 201, ClientResult: faultproxy.ClientDelivered, Outcome: faultproxy.OutcomeOK},
		},
	}
	duplicated := &scenarios.Record{
		Seed: 42, Entity: "order-2",
		Ledger: map[string]int{"refund": 2},
		Journal: []faultproxy.Record{
			{Seq: 3, Method: "POST", Path: "/v1/refunds", Key: "k\x01ctl", HasKey: true, Attempt: 1, Rule: "reset", Fault: faultproxy.FaultAfterReset,
				ReachedUpstream: true, UpstreamCalls: 1, UpstreamStatus: 201, ClientResult: faultproxy.ClientReset, Outcome: faultproxy.OutcomeInfo},
			{Seq: 4, Method: "POST", Path: "/v1/refunds", Key: "k\x01ctl", HasKey: true, Attempt: 2, Rule: "dup", Fault: faultproxy.FaultDuplicate,
				ReachedUpstream: true, UpstreamCalls: 2, UpstreamStatus: 201, ClientStatus: 201, ClientResult: faultproxy.ClientDelivered, Outcome: faultproxy.OutcomeOK},
		},
	}
	burst := &scenarios.Record{Seed: 42, Entity: "order-3", Ledger: map[string]int{"refund": 1}}
	for i := 1; i <= 50; i++ {
		j := faultproxy.Record{Seq: uint64(10 + i), Method: "POST", Path: "/v1/refunds", Key: "burst", HasKey: true, Attempt: i,
			ReachedUpstream: true, UpstreamCalls: 1, UpstreamStatus: 409, ClientStatus: 409, ClientResult: faultproxy.ClientDelivered, Outcome: faultproxy.OutcomeFail}
		if i == 1 {
			j.UpstreamStatus, j.ClientStatus, j.Outcome = 201, 201, faultproxy.OutcomeOK
		}
		burst.Journal = append(burst.Journal, j)
	}
	before := &scenarios.Record{
		Seed: 42, Entity: "order-4", Ledger: map[string]int{"refund": 1},
		Journal: []faultproxy.Record{
			{Seq: 80, Method: "POST", Path: "/v1/refunds", Key: "b", HasKey: true, Attempt: 1, Rule: "before-503", Fault: faultproxy.FaultBeforeStatus,
				ClientStatus: 503, ClientResult: faultproxy.ClientDelivered, Outcome: faultproxy.OutcomeInfo},
			{Seq: 81, Method: "POST", Path: "/v1/refunds", Key: "b", HasKey: true, Attempt: 2,
				ReachedUpstream: true, UpstreamCalls: 1, UpstreamStatus: 201, ClientStatus: 201, ClientResult: faultproxy.ClientDelivered, Outcome: faultproxy.OutcomeOK},
		},
	}
	unknown := &scenarios.Record{Seed: 42, Entity: "order-5", LedgerErr: "GET /v1/refunds: connection refused",
		History: []scenarios.Op{
			{Index: 0, Client: 1, Attempt: 1, Type: scenarios.OpInvoke, Key: "u", Step: "original"},
			{Index: 1, Client: 1, Attempt: 1, Type: scenarios.OpOK, Key: "u", Step: "original", Status: 201},
		}}

	res := func(id string, level scenarios.Level, target string, v scenarios.Verdict, msg string, rec *scenarios.Record, cats map[string]int) scenarios.Result {
		return scenarios.Result{
			ScenarioID: id, Description: "description of " + id, Requirement: "requirement of " + id,
			Source: "draft-07 §2.6", Level: level, Labels: []string{"group:" + strings.Split(id, "/")[0], "level:" + strings.ToLower(string(level))},
			Target: target, Verdict: v, Message: msg,
			Evidence: scenarios.Evidence{Categories: cats, Record: rec}, Duration: 40 * time.Millisecond,
		}
	}
	return &scenarios.Report{
		SchemaVersion: scenarios.ReportSchemaVersion,
		Tool:          "idemproof test",
		Seed:          42,
		Started:       t0,
		DurationMS:    1234,
		Targets:       []string{"reference", "stripe-like"},
		Results: []scenarios.Result{
			res("replay/after-503", scenarios.LevelSafety, "reference", scenarios.Pass, "one refund; the retry got the committed 201", recovered, map[string]int{scenarios.CatRecovered: 1}),
			res("replay/after-503", scenarios.LevelSafety, "stripe-like", scenarios.Fail, "2 refunds for one key\nsecond line", duplicated, map[string]int{scenarios.CatDuplicated: 1}),
			res("race/burst-50", scenarios.LevelSafety, "reference", scenarios.Pass, "one refund; 49 × 409", burst, nil),
			res("race/burst-50", scenarios.LevelSafety, "stripe-like", scenarios.Pass, "one refund", burst, nil),
			res("before/503", scenarios.LevelSafety, "reference", scenarios.Pass, "executed once", before, nil),
			res("before/503", scenarios.LevelSafety, "stripe-like", scenarios.Unknown, "ledger probe failed", unknown, nil),
			res("replay/marker", scenarios.LevelShould, "reference", scenarios.Pass, "marker present", recovered, nil),
			res("replay/marker", scenarios.LevelShould, "stripe-like", scenarios.NonStrict, "no Idempotent-Replayed header on the replay", recovered, nil),
			res("fingerprint/json-key-order", scenarios.LevelPolicy, "reference", scenarios.Info, "reordered keys: 422", recovered, nil),
			res("recovery/crash-after-key", scenarios.LevelMust, "stripe-like", scenarios.NA, "profile declares no crash hook", nil, nil),
		},
	}
}

// resultCount is how many results the sample has, for assertions.
func resultCount() int { return len(sampleReport().Results) }
