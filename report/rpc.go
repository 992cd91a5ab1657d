package report

import (
	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/verdict"
)

// rpcText is "  tools/call #7" for an attempt that was a JSON-RPC request, "" otherwise:
// what the timeline shows of an MCP tool call besides its key.
func rpcText(method, id string) string {
	switch {
	case method == "" && id == "":
		return ""
	case id == "":
		return "  " + method
	}
	return "  " + method + " #" + id
}

// rpcAttempts finds the client's completion event of a journaled JSON-RPC attempt — by
// its JSON-RPC id, or by the hash of its request body, unique per attempt — so a journal
// arrow shows the method, id and class even where the proxy recorded none of them.
type rpcAttempts struct {
	byID, bySum map[string]verdict.Op
}

func newRPCAttempts(rec *verdict.Record) rpcAttempts {
	a := rpcAttempts{byID: map[string]verdict.Op{}, bySum: map[string]verdict.Op{}}
	for _, op := range rec.History {
		if op.Type == verdict.OpInvoke || op.RPCID == "" {
			continue
		}
		a.byID[op.RPCID] = op
		if op.RequestSHA256 != "" {
			a.bySum[op.RequestSHA256] = op
		}
	}
	return a
}

func (a rpcAttempts) op(j faultproxy.Record) (verdict.Op, bool) {
	if j.RPCID != "" {
		if op, ok := a.byID[j.RPCID]; ok {
			return op, true
		}
	}
	op, ok := a.bySum[j.BodySHA256]
	return op, ok && j.BodySHA256 != ""
}

// request is the method and id of a journaled attempt: the proxy's, else the client's.
func (a rpcAttempts) request(j faultproxy.Record) string {
	if j.RPCMethod != "" || j.RPCID != "" {
		return rpcText(j.RPCMethod, j.RPCID)
	}
	if op, ok := a.op(j); ok {
		return rpcText(op.RPCMethod, op.RPCID)
	}
	return ""
}

// class is the outcome class of what the client got: the proxy's, else the client's.
func (a rpcAttempts) class(j faultproxy.Record) string {
	if j.Class != "" {
		return j.Class
	}
	if op, ok := a.op(j); ok {
		return string(op.Class)
	}
	return ""
}

// meaningText is what an answer meant, for an arrow that already shows its status:
// its outcome class ("success", "in_flight": over JSON-RPC a 200's status says nothing
// of it), "outcome unknown to the client" for a lost one, or without a class the proxy's
// ok / fail / info.
func meaningText(class, jepsen string) string {
	switch {
	case class == string(outcome.Info) || (class == "" && jepsen == faultproxy.OutcomeInfo):
		return "outcome unknown to the client"
	case class != "":
		return class
	}
	return jepsen
}
