package scenarios

import (
	"context"
	"time"

	"github.com/idemproof/idemproof/profile"
)

// Pace is how fast the target answered the preflight: one operation, sent to answered,
// and the slowest of its ledger reads. The runner fits the time limits and sizes of the
// scenarios that send many requests in a row to it (plan.go), so a slow but correct
// target is judged rather than cut off by a limit made for a fast one. Zero when nothing
// was measured: the scenarios then run as written.
type Pace struct {
	Operation time.Duration `json:"operation"`
	Ledger    time.Duration `json:"ledger"`
}

// PerRequest is the latency the plans count for each request: the slower of the two.
func (p Pace) PerRequest() time.Duration { return max(p.Operation, p.Ledger) }

// PreflightResult is what a Preflight found that does not stop the run: what it
// noticed (the notes PreflightNotes returns) and how fast the target answered.
type PreflightResult struct {
	Notes []string
	Pace  Pace
}

// PreflightTarget is Preflight, with its result: the notes, and the target's pace for
// RunConfig.Preflights.
func PreflightTarget(ctx context.Context, p *profile.Profile) (PreflightResult, error) {
	pf, err := runPreflight(ctx, p)
	if pf == nil {
		return PreflightResult{}, err
	}
	return PreflightResult{Notes: pf.notes, Pace: pf.pace}, err
}

// observeOperation and observeLedger keep what the preflight measured.
func (p *Pace) observeOperation(d time.Duration) { p.Operation = max(p.Operation, d) }
func (p *Pace) observeLedger(d time.Duration)    { p.Ledger = max(p.Ledger, d) }
