package report_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/scenarios"
	"github.com/idemproof/idemproof/scenarios/report"
)

// A concurrent pair as the proxy journals it: numbered when each attempt finished, so
// the later arrival has the lower sequence number; two payloads; a test hook header.
func concurrentPair() *scenarios.Record {
	return &scenarios.Record{
		Ledger: map[string]int{"refund": 1},
		Journal: []faultproxy.Record{
			{Seq: 7, Time: t0.Add(3 * time.Millisecond), Method: "POST", Path: "/v1/refunds", Key: "k", HasKey: true, Attempt: 2,
				BodySHA256: "bbb", Headers: map[string]string{scenarios.StepHeader: "other-payload", "Content-Type": "application/json"},
				ReachedUpstream: true, UpstreamCalls: 1, UpstreamStatus: 409, ClientStatus: 409, ClientResult: faultproxy.ClientDelivered, Outcome: faultproxy.OutcomeFail},
			{Seq: 8, Time: t0, Method: "POST", Path: "/v1/refunds", Key: "k", HasKey: true, Attempt: 1,
				BodySHA256: "aaa", Headers: map[string]string{"X-Test-Delay": "400ms"},
				ReachedUpstream: true, UpstreamCalls: 1, UpstreamStatus: 201, ClientStatus: 201, ClientResult: faultproxy.ClientDelivered, Outcome: faultproxy.OutcomeOK},
		},
	}
}

func TestTimelineInArrivalOrderWithRequestNotes(t *testing.T) {
	out := report.Timeline(concurrentPair())
	first := strings.Index(out, "X-Test-Delay=400ms")
	second := strings.Index(out, "P2 step=other-payload")
	require.Positive(t, first, out)
	require.Greater(t, second, first, "the attempt that arrived first is listed first:\n%s", out)
	require.Regexp(t, `(?m)^\s+8\s+K1\s+1\s+POST /v1/refunds\s+P1 X-Test-Delay=400ms\s+-\s+201\s+201\s+ok`, out)
}

func TestSequenceDiagramInArrivalOrder(t *testing.T) {
	svg := report.SequenceSVG("pair", concurrentPair())
	first := strings.Index(svg, "#8 K1 try 1")
	second := strings.Index(svg, "#7 K1 try 2")
	require.Positive(t, first)
	require.Greater(t, second, first)
	require.Contains(t, svg, ">P1 X-Test-Delay=400ms<")
	require.Contains(t, svg, ">P2 step=other-payload<")
	require.Contains(t, svg, ">+3ms<")
}
