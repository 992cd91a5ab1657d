package clientcheck

import (
	"time"

	"github.com/idemproof/idemproof/verdict"
)

const timeMillis = time.Millisecond

// Target is the name client-check gives its target in reports.
const Target = "client"

// Check runs every check over the observation and returns one Result per check, in a
// fixed order.
func Check(o Observation) []verdict.Result {
	var out []verdict.Result
	a := analyse(&o)
	for _, c := range checks() {
		if c.appliesTo != nil && !c.appliesTo(a) {
			continue
		}
		v := c.run(a)
		if v.verdict == verdict.Fail && c.level == verdict.LevelShould {
			v.verdict = verdict.NonStrict // a SHOULD missed fails only under --strict
		}
		out = append(out, verdict.Result{
			ScenarioID:  c.id,
			Description: c.description,
			Requirement: c.requirement,
			Source:      c.source,
			Level:       c.level,
			Labels:      []string{"client", "level:" + string(c.level)},
			Target:      Target,
			Verdict:     v.verdict,
			Message:     v.message,
			Evidence:    verdict.Evidence{Categories: v.categories, Examples: v.examples, Record: v.record},
			Duration:    o.ClientDuration,
			DurationMS:  millis(o.ClientDuration),
		})
	}
	return out
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Findings returns the results that make a run fail: FAIL and UNKNOWN (an undecided
// check is never counted as a pass). NON-STRICT counts only when strict.
func Findings(results []verdict.Result, strict bool) []verdict.Result {
	var out []verdict.Result
	for _, r := range results {
		if r.Verdict == verdict.Fail || r.Verdict == verdict.Unknown || (strict && r.Verdict == verdict.NonStrict) {
			out = append(out, r)
		}
	}
	return out
}
