package scenarios

import (
	"fmt"
	"net/http"

	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/verdict"
)

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
func statusGuardNote(p *profile.Profile, ops []verdict.Op, want outcome.Class) string {
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
				if len(rule.Status) == 0 && rule.Matches(opAnswer(op)) {
					return fmt.Sprintf("; the profile's %s rule matches the %d's body, but a rule classes a 5xx or a 429 only when it names the status: if the %d is this API's %s answer, add status: %d to the rule", want, op.Status, op.Status, want, op.Status)
				}
			}
		}
	}
	return ""
}
