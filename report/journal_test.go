package report_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/report"
	"github.com/idemproof/idemproof/scenarios"
	"github.com/idemproof/idemproof/verdict"
)

// A concurrent pair as the proxy journals it: numbered when each attempt finished, so
// the later arrival has the lower sequence number; two payloads; a test hook header.
func concurrentPair() *verdict.Record {
	return &verdict.Record{
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

// A record with hundreds of keys (expiry/not-evicted sends 500 newer ones): the timeline
// shows its first rows, and the key legend names only the keys those rows show, counting
// the rest, instead of a line hundreds of keys long.
func TestTimelineKeyLegendNamesOnlyShownKeys(t *testing.T) {
	rec := &verdict.Record{Ledger: map[string]int{"refund": 1}}
	const keys = 300
	for i := range keys {
		key := fmt.Sprintf("newer-key-%03d", i)
		rec.History = append(rec.History,
			verdict.Op{Index: 2 * i, Type: verdict.OpInvoke, Key: key, Step: "newer-keys", Time: t0},
			verdict.Op{Index: 2*i + 1, Type: verdict.OpOK, Key: key, Step: "newer-keys", Status: 201, Time: t0})
	}
	out := report.Timeline(rec)
	legend := out[strings.Index(out, "  keys: "):]
	legend = legend[:strings.Index(legend, "\n")]
	shown := report.MaxTimelineRows // the history shows 2*MaxTimelineRows events, two per key
	require.Contains(t, legend, "K1=newer-key-000")
	require.Contains(t, legend, fmt.Sprintf("K%d=", shown))
	require.NotContains(t, legend, fmt.Sprintf("K%d=", shown+1), "a key no printed row names is not in the legend")
	require.Contains(t, legend, fmt.Sprintf("(%d more keys in rows not shown)", keys-shown))
}

// The payload legend is bounded likewise: 500 newer keys, each with a payload of its
// own, are named up to the bound and counted after it.
func TestTimelinePayloadLegendIsBounded(t *testing.T) {
	rec := &verdict.Record{Ledger: map[string]int{"refund": 1}}
	const payloads = 300
	for i := range payloads {
		rec.Journal = append(rec.Journal, faultproxy.Record{Seq: uint64(i + 1), Key: fmt.Sprintf("k-%03d", i), HasKey: true, Attempt: 1,
			Method: "POST", Path: "/v1/refunds", BodySHA256: fmt.Sprintf("%064x", i+1), ReachedUpstream: true, UpstreamStatus: 201, Time: t0})
	}
	out := report.Timeline(rec)
	legend := out[strings.Index(out, "  payloads: "):]
	legend = legend[:strings.Index(legend, "\n")]
	require.Contains(t, legend, "P1=")
	require.Contains(t, legend, "P12=")
	require.NotContains(t, legend, "P13=")
	require.Contains(t, legend, "(288 more payloads)")
}
