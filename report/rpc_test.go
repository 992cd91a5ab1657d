package report_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/report"
	"github.com/idemproof/idemproof/verdict"
)

// An MCP attempt's arrows show the JSON-RPC method and id, and the outcome class of its
// answer: the proxy's when it classified it, else the client's for the same id.
func TestSequenceShowsJSONRPCMethodIDAndClass(t *testing.T) {
	rec := &verdict.Record{
		History: []verdict.Op{
			{Index: 0, Type: verdict.OpInvoke, Key: "k", Step: "original", Attempt: 1},
			{Index: 1, Type: verdict.OpOK, Key: "k", Step: "original", Attempt: 1, Status: 200, Class: "success", RPCID: "7", RPCMethod: "tools/call"},
			{Index: 2, Type: verdict.OpInvoke, Key: "k", Step: "repeat", Attempt: 2},
			{Index: 3, Type: verdict.OpFail, Key: "k", Step: "repeat", Attempt: 2, Status: 200, Class: "in_flight", RPCID: "8", RPCMethod: "tools/call"},
		},
		Journal: []faultproxy.Record{
			{Seq: 1, Method: "POST", Path: "/mcp", Key: "k", HasKey: true, Attempt: 1, ReachedUpstream: true, UpstreamCalls: 1, UpstreamStatus: 200,
				ClientStatus: 200, ClientResult: faultproxy.ClientDelivered, Outcome: "ok", RPCID: "7", RPCMethod: "tools/call", Class: "success"},
			{Seq: 2, Method: "POST", Path: "/mcp", Key: "k", HasKey: true, Attempt: 2, ReachedUpstream: true, UpstreamCalls: 1, UpstreamStatus: 200,
				ClientStatus: 200, ClientResult: faultproxy.ClientDelivered, Outcome: "ok", RPCID: "8", RPCMethod: "tools/call"},
		},
		Ledger: map[string]int{"operation": 1},
	}
	svg := report.SequenceSVG("rpc", rec)
	require.Contains(t, svg, "POST /mcp  tools/call #7")

	// A proxy that journals no JSON-RPC fields: the attempt is found by its body's hash.
	rec.History[3].RequestSHA256 = "ab12"
	rec.Journal[1].RPCID, rec.Journal[1].RPCMethod, rec.Journal[1].BodySHA256 = "", "", "ab12"
	svg = report.SequenceSVG("rpc", rec)
	require.Contains(t, svg, "POST /mcp  tools/call #7")
	require.Contains(t, svg, "POST /mcp  tools/call #8")
	require.Contains(t, svg, ">200  success<", "the status and what it meant")
	require.Contains(t, svg, ">200  in_flight<", "the client's class for id 8, the proxy journaled none; not the proxy's ok for a 200")
	require.NotContains(t, svg, "→ ok")

	rec.Journal = nil
	svg = report.SequenceSVG("rpc-history", rec)
	require.Contains(t, svg, "repeat K1 attempt 2  tools/call #8")
	require.Contains(t, svg, "in_flight  200")
}

// The MCP retry in a new session re-sends the same tool call under another JSON-RPC id:
// the diagram names the sessions (S1, S2) and sees one payload, not two (the bodies
// differ only by their ids).
func TestANewSessionIsShownAndTheSameCallIsOnePayload(t *testing.T) {
	rec := &verdict.Record{
		History: []verdict.Op{
			{Index: 0, Type: verdict.OpInvoke, Key: "k", Step: "original", Attempt: 1},
			{Index: 1, Type: verdict.OpInfo, Key: "k", Step: "original", Attempt: 1, Error: "reset", Class: "info", RPCID: "7", RPCMethod: "tools/call", RequestSHA256: "aa01", PayloadSHA256: "call1"},
			{Index: 2, Type: verdict.OpInvoke, Key: "k", Step: "retry", Attempt: 2},
			{Index: 3, Type: verdict.OpOK, Key: "k", Step: "retry", Attempt: 2, Status: 200, Class: "success", RPCID: "9", RPCMethod: "tools/call", RequestSHA256: "bb02", PayloadSHA256: "call1"},
		},
		Journal: []faultproxy.Record{
			{Seq: 1, Method: "POST", Path: "/mcp", Key: "k", HasKey: true, Attempt: 1, BodySHA256: "aa01", Headers: map[string]string{"Mcp-Session-Id": "sess-a"},
				ReachedUpstream: true, UpstreamCalls: 1, UpstreamStatus: 200, Fault: "after-reset", ClientResult: faultproxy.ClientReset, Outcome: "info"},
			{Seq: 2, Method: "POST", Path: "/mcp", Key: "k", HasKey: true, Attempt: 2, BodySHA256: "bb02", Headers: map[string]string{"Mcp-Session-Id": "sess-b"},
				ReachedUpstream: true, UpstreamCalls: 1, UpstreamStatus: 200, ClientStatus: 200, ClientResult: faultproxy.ClientDelivered, Outcome: "ok"},
		},
		Ledger: map[string]int{"operation": 1},
	}
	svg := report.SequenceSVG("new-session", rec)
	require.Contains(t, svg, "session S1")
	require.Contains(t, svg, "session S2")
	require.Contains(t, svg, "S1=sess-a")
	require.NotContains(t, svg, "P2", "one tool call, sent twice: one payload")

	text := report.Timeline(rec)
	require.Contains(t, text, "session S2")
	require.NotContains(t, text, "P2")
}
