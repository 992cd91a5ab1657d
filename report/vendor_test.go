package report_test

import (
	"encoding/xml"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/downstream"
	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/report"
	"github.com/idemproof/idemproof/verdict"
)

func vendorRecord() *verdict.Record {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return &verdict.Record{
		Journal: []faultproxy.Record{{Seq: 1, Time: t0, Method: "POST", Path: "/v1/refunds", Key: "k1", HasKey: true,
			ReachedUpstream: true, UpstreamStatus: 201, ClientResult: faultproxy.ClientDelivered, ClientStatus: 201, Outcome: faultproxy.OutcomeOK}},
		Ledger: map[string]int{"operation": 1},
		Downstream: []downstream.Call{
			{Seq: 7, Time: t0.Add(40 * time.Millisecond), Method: "POST", Path: "/v1/notifications", Key: "refund-notify-abc", HasKey: true, Answer: downstream.Answer503After},
			{Seq: 8, Time: t0.Add(95 * time.Millisecond), Method: "POST", Path: "/v1/notifications", Answer: downstream.AnswerCommitted},
		},
	}
}

func TestSequenceSVGDrawsTheVendorLaneWithCallsAndKeys(t *testing.T) {
	svg := report.SequenceSVG("v", vendorRecord())
	var root struct {
		Texts []string `xml:"text"`
	}
	require.NoError(t, xml.Unmarshal([]byte(svg), &root), svg)
	require.Contains(t, root.Texts, "vendor (sink)")
	require.Contains(t, root.Texts, "key refund-notify-abc")
	require.Contains(t, root.Texts, "no key")
	require.Contains(t, root.Texts, "503 (fault, done)")
	require.Contains(t, root.Texts, "+95ms")
	require.Contains(t, root.Texts, "vendor calls after settle: 2 call(s), 2 effect(s), 1 key(s)")

	plain := vendorRecord()
	plain.Downstream = nil
	require.NotContains(t, report.SequenceSVG("p", plain), "vendor (sink)", "no vendor lane without vendor calls")
}

func TestTimelineListsTheVendorCalls(t *testing.T) {
	text := report.Timeline(vendorRecord())
	require.Contains(t, text, "vendor calls (downstream sink, after settle): 2 call(s), 2 effect(s), 1 key(s), 1 without a key:")
	require.Regexp(t, `(?m)^    8 +\+95ms +POST /v1/notifications +no key +201 done`, text)
}

func TestTimelineSaysWhenTheTargetHungUpBeforeTheVendorsAnswer(t *testing.T) {
	rec := vendorRecord()
	rec.Downstream[1].CallerLeft = true
	require.Regexp(t, `(?m)^    8 +\+95ms +POST /v1/notifications +no key +201 done, caller gone before the answer`, report.Timeline(rec))
}
