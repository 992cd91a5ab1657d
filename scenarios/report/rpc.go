package report

import (
	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/scenarios"
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

// rpcClasses maps the client's JSON-RPC request ids to the outcome class the client
// recorded for their answers, so a journal arrow shows the class even when the proxy
// did not classify it.
type rpcClasses map[string]string

func newRPCClasses(rec *scenarios.Record) rpcClasses {
	c := rpcClasses{}
	for _, op := range rec.History {
		if op.RPCID != "" && op.Type != scenarios.OpInvoke {
			c[op.RPCID] = string(op.Class)
		}
	}
	return c
}

// of is the class of what the client got for a journal record: the proxy's own, else
// the client's for the same JSON-RPC id; "" when neither is known.
func (c rpcClasses) of(j faultproxy.Record) string {
	if j.Class != "" {
		return j.Class
	}
	if j.RPCID != "" {
		return c[j.RPCID]
	}
	return ""
}

// classText is "  [in_flight]", or "" without a class.
func classText(class string) string {
	if class == "" {
		return ""
	}
	return "  [" + class + "]"
}
