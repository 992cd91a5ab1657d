package clientcheck

import (
	"slices"
	"strings"

	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/profile"
)

// An API may tell its refusals apart by a header alone (409 for both a repeat in flight
// and a changed payload, with Idempotency-Outcome: in_progress or conflict). The 409 and
// 422 kinds stand in for those refusals, so they carry the header the profile's rules
// read: a refusal without it would be an answer the profile does not name, never seen as
// what the kind stands for.

// ruleHeaders are the header sets an injected refusal of class with status may carry for
// one of the class's rules to recognise it, one per rule that reads headers, in the
// rules' order: an equals predicate gives its value, exists: true the value "1", and an
// absent header is left out. A rule with a pattern (matches) gives none — the proxy
// sends values — and is named in unbuildable instead.
func ruleHeaders(p *profile.Profile, class outcome.Class, status int) (sets []map[string]string, unbuildable []string) {
	if p.Outcomes == nil {
		return nil, nil
	}
	for _, cr := range p.Outcomes.Classes {
		if cr.Class != class {
			continue
		}
	rules:
		for _, rule := range cr.Rules {
			if len(rule.Header) == 0 || (len(rule.Status) > 0 && !slices.Contains(rule.Status, status)) {
				continue
			}
			set := map[string]string{}
			for _, h := range rule.Header {
				switch {
				case h.Equals != nil:
					set[h.Name] = *h.Equals
				case h.Exists != nil && *h.Exists:
					set[h.Name] = "1"
				case h.Exists != nil:
				default:
					unbuildable = append(unbuildable, rule.String())
					continue rules
				}
			}
			sets = append(sets, set)
		}
	}
	return sets, unbuildable
}

// withRuleHeaders gives fault the headers of the first rule of class that then
// recognises its answer (answerOf builds the answer as the client will get it). ok is
// false when none does; why then names the rules that read a header no injected answer
// can carry ("" when there are none).
func withRuleHeaders(p *profile.Profile, class outcome.Class, fault faultproxy.FaultSpec, cl outcome.Classifier, answerOf func(faultproxy.FaultSpec) outcome.Answer) (out faultproxy.FaultSpec, ok bool, why string) {
	sets, unbuildable := ruleHeaders(p, class, fault.Status)
	for _, set := range sets {
		f := fault
		f.Headers = set
		if cl.Classify(answerOf(f)) == class {
			return f, true, ""
		}
	}
	if len(unbuildable) > 0 {
		why = "; its " + string(class) + " rules read a header by a pattern, which an injected answer cannot carry (" + strings.Join(unbuildable, "; ") + "): give the rule the header's value (equals)"
	}
	return fault, false, why
}
