package clientcheck

import (
	"fmt"
	"strings"

	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/verdict"
)

// OperationIDPrefix starts the ID of a per-operation result: "client/operation/order-1".
const OperationIDPrefix = "client/operation/"

// MaxOperationResults bounds the per-operation results of one report.
const MaxOperationResults = 200

// maxAnswersInMessage bounds the answers a per-operation message lists.
const maxAnswersInMessage = 6

// Operations returns one INFO result per logical operation (at most
// MaxOperationResults, in sorted order): its attempts, keys, side effects, the answers
// it got with their classes and the client's own outcome, with its journal and its
// per-attempt history as the record, so every report draws a timeline per operation, and
// the time from its first attempt to its last answer as its duration. They never fail a
// run; the checks do.
func Operations(o Observation) []verdict.Result {
	a := analyse(&o)
	var out []verdict.Result
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
		effects := "side effects unknown"
		if n, ok := o.Ledger[op]; ok {
			effects = fmt.Sprintf("%d side effect(s)", n)
		}
		span := a.span(attempts)
		out = append(out, verdict.Result{
			ScenarioID:  OperationIDPrefix + op,
			Description: "what happened to one logical operation",
			Requirement: "one key, one effect, an honest outcome",
			Source:      "client-check",
			Level:       verdict.LevelPolicy,
			Labels:      []string{"client", "operation"},
			Target:      Target,
			Verdict:     verdict.Info,
			Message: fmt.Sprintf("%d attempt(s) under %d key(s), %s, faults: %s; answers: %s; %s",
				len(attempts), len(keys), effects, faultsText(attempts), a.answersText(attempts), client),
			Evidence:   verdict.Evidence{Record: a.record(op, attempts)},
			Duration:   span,
			DurationMS: millis(span),
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

// answersText lists what each attempt got and its class: "reset (info), 201 (success)".
func (a *analysis) answersText(attempts []faultproxy.Record) string {
	var parts []string
	for i, r := range attempts {
		if i == maxAnswersInMessage {
			parts = append(parts, fmt.Sprintf("… %d more", len(attempts)-i))
			break
		}
		parts = append(parts, fmt.Sprintf("%s (%s)", deliveredText(r), a.classOf(r)))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
