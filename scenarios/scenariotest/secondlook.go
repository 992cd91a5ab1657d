package scenariotest

import (
	"context"
	"fmt"

	"github.com/idemproof/idemproof/scenarios"
	"github.com/idemproof/idemproof/verdict"
)

// SecondLook runs again, alone and one at a time, the scenarios of rep that are UNKNOWN
// and for which again says yes (nil: every one), with cfg's profiles and seed, and puts
// their new results in rep's place. UNKNOWN is an outcome a run could not see (an
// attempt a loaded CI machine timed out, a window its neighbours pushed it past), not a
// property of the target, so a suite that pins verdicts may ask once more; a decision
// (PASS, FAIL, INFO, N/A) is never run again. It returns a line per scenario asked
// again, saying what the first run saw, for the test's log.
func SecondLook(ctx context.Context, cfg scenarios.RunConfig, rep *verdict.Report, again func(id string) bool) ([]string, error) {
	var ids, notes []string
	for _, r := range rep.Results {
		if r.Verdict == verdict.Unknown && (again == nil || again(r.ScenarioID)) {
			ids = append(ids, r.ScenarioID)
			notes = append(notes, fmt.Sprintf("%s was UNKNOWN (%s): run again alone", r.ScenarioID, r.Message))
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	cfg.Only, cfg.Labels, cfg.Concurrency, cfg.Progress = ids, nil, 1, nil
	second, err := scenarios.Run(ctx, cfg)
	if err != nil {
		return notes, fmt.Errorf("run the UNKNOWN scenarios again: %w", err)
	}
	for _, r := range second.Results {
		for i := range rep.Results {
			if rep.Results[i].ScenarioID == r.ScenarioID && rep.Results[i].Target == r.Target {
				rep.Results[i] = r
			}
		}
	}
	return notes, nil
}
