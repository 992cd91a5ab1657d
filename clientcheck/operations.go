package clientcheck

import (
	"fmt"
	"strings"

	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/scenarios"
)

// OperationIDPrefix starts the ID of a per-operation result: "client/operation/order-1".
const OperationIDPrefix = "client/operation/"

// MaxOperationResults bounds the per-operation results of one report.
const MaxOperationResults = 200

// Operations returns one INFO result per logical operation (at most
// MaxOperationResults, in sorted order): its attempts, keys, refunds and the client's own
// outcome, with its whole journal as the record, so the HTML report draws a timeline per
// operation. They never fail a run; the checks do.
func Operations(o Observation) []scenarios.Result {
	a := analyse(&o)
	var out []scenarios.Result
	for _, op := range a.allOperations() {
		if len(out) == MaxOperationResults {
			break
		}
		attempts := a.attempts[op]
		keys := map[string]bool{}
		for _, r := range attempts {
			if r.HasKey {
				keys[r.Key] = true
			}
		}
		client := "the client reported nothing"
		if oc, ok := a.outcomeOf(op); ok {
			client = "the client reported " + oc.Outcome
		}
		refunds := "refunds unknown"
		ledger := map[string]int{}
		if n, ok := o.Ledger[op]; ok {
			refunds, ledger = fmt.Sprintf("%d refund(s)", n), map[string]int{"refund": n}
		}
		out = append(out, scenarios.Result{
			ScenarioID:  OperationIDPrefix + op,
			Description: "what happened to one logical operation",
			Requirement: "one key, one effect, an honest outcome",
			Source:      "client-check",
			Level:       scenarios.LevelPolicy,
			Labels:      []string{"client", "operation"},
			Target:      Target,
			Verdict:     scenarios.Info,
			Message: fmt.Sprintf("%d attempt(s) under %d key(s), %s, faults: %s; %s",
				len(attempts), len(keys), refunds, faultsText(attempts), client),
			Evidence: scenarios.Evidence{Record: &scenarios.Record{Journal: attempts, Ledger: ledger, Entity: op, LedgerErr: o.LedgerErr}},
		})
	}
	return out
}

// faultsText lists the faults an operation's attempts met, in order.
func faultsText(attempts []faultproxy.Record) string {
	var faults []string
	for _, r := range attempts {
		if r.Fault != "" {
			faults = append(faults, r.Fault)
		}
	}
	if len(faults) == 0 {
		return "none"
	}
	return strings.Join(faults, ", ")
}
