package scenarios

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/transport/mcp"
	"github.com/idemproof/idemproof/verdict"
)

// Classifier returns how the profile's answers are classified. Without outcome rules
// (and over plain HTTP), by the statuses it declares (expect, business_error,
// validation_error). With `outcomes:`, by its rules in their order, the classes they do
// not cover by those statuses; over MCP, a tool result (isError true: a business error)
// is recognised for the classes the rules leave out (mcp.DefaultOutcomes). Each call
// returns a new classifier, whose rule matches (outcome.RuleReporter) count from zero.
func (p *Profile) Classifier() outcome.Classifier {
	s := outcome.Statuses{InFlight: p.Expect.InFlight, Mismatch: p.Expect.Mismatch}
	if p.Expect.MissingKey != "" && p.Expect.MissingKey != "optional" {
		s.MissingKey = atoiOr0(p.Expect.MissingKey)
	}
	if p.Business != nil {
		s.Business = p.Business.Status
	}
	if p.Validation != nil {
		s.Validation = p.Validation.Status
	}
	if p.Outcomes == nil && !p.isMCP() {
		return s
	}
	var classes []outcome.ClassRules
	covered := map[outcome.Class]bool{}
	if p.Outcomes != nil {
		classes = append(classes, p.Outcomes.Classes...)
		for _, c := range p.Outcomes.Classes {
			covered[c.Class] = len(c.Rules) > 0
		}
	}
	if p.isMCP() {
		classes = append(classes, mcp.DefaultOutcomes(covered)...)
	}
	return outcome.NewRules(classes, s)
}

// UnmatchedRules names the profile's own outcome rules that classified none of the
// answers cl saw — cl a classifier from Classifier(), through which the preflight (or a
// run) passed its answers: "outcomes.success (result.isError == false)",
// "outcomes.mismatch[1] (result.isError == true and text /reused/)". A rule that never
// matches is often a rule that cannot: a field the server leaves out, a code it never
// sends. The built-in MCP defaults are not named; nil for a classifier without rules.
func (p *Profile) UnmatchedRules(cl outcome.Classifier) []string {
	rep, ok := cl.(outcome.RuleReporter)
	if !ok || p.Outcomes == nil {
		return nil
	}
	own := map[outcome.Class]int{}
	for _, c := range p.Outcomes.Classes {
		own[c.Class] = len(c.Rules)
	}
	var out []string
	for _, m := range rep.Unmatched() {
		n, mine := own[m.Class]
		if !mine {
			continue
		}
		name := "outcomes." + string(m.Class)
		if n > 1 {
			name += "[" + strconv.Itoa(m.Index) + "]"
		}
		out = append(out, name+" ("+m.Rule+")")
	}
	return out
}

func atoiOr0(s string) int {
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// keyIgnored says so plainly when every request that reached the target executed: the
// target did not dedupe at all (a server whose SDK drops an unknown params field never
// sees the key). "" when at least one repeat was recognised, or nothing tells.
func keyIgnored(r verdict.Record, effects int) string {
	if calls := upstreamCalls(r); calls > 1 && effects >= calls {
		return "every repeat executed again (the key was not honoured for it: ignored, or scoped narrower than the retry, per session or per connection); "
	}
	return ""
}

// statusGuardNote explains an answer a rule of class want would have classed but for its
// status: a rule classes a 5xx or a 429 only when it names the status (package outcome),
// so an API that refuses with one (a 503 "in progress") needs the status in the rule.
func statusGuardNote(p *Profile, ops []verdict.Op, want outcome.Class) string {
	if p.Outcomes == nil {
		return ""
	}
	for _, op := range ops {
		if op.Status < 500 && op.Status != http.StatusTooManyRequests {
			continue
		}
		for _, cr := range p.Outcomes.Classes {
			if cr.Class != want {
				continue
			}
			for _, rule := range cr.Rules {
				if len(rule.Status) == 0 && rule.Matches(outcome.Answer{Status: op.Status, Body: op.Body}) {
					return fmt.Sprintf("; the profile's %s rule matches the %d's body, but a rule classes a 5xx or a 429 only when it names the status: if the %d is this API's %s answer, add status: %d to the rule", want, op.Status, op.Status, want, op.Status)
				}
			}
		}
	}
	return ""
}
