package scenarios

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/idemproof/idemproof/downstream"
	"github.com/idemproof/idemproof/profile"
)

// vendorQuiet is how long the target's vendor calls for an entity must have stopped
// before the settle step ends early: longer than an outbox's first retry backoff.
const vendorQuiet = 300 * time.Millisecond

// installVendorFaults arms the sink's faults for this run's entity; it reports whether
// the scenario watches the vendor at all.
func (e *execution) installVendorFaults() (bool, error) {
	if !slices.Contains(e.sc.Needs, profile.CapDownstream) || e.t.sink == nil {
		return false, nil
	}
	for _, vf := range e.sc.Vendor {
		if err := e.t.sink.AddRule(downstream.Rule{Entity: e.entity, Nth: vf.Nth, Fault: vf.Fault}); err != nil {
			return true, fmt.Errorf("scenario %s: %w", e.sc.ID, err)
		}
	}
	return true, nil
}

// settleVendor is the SETTLE step of a boundary scenario: a target may call its vendor
// after the client's answer (an outbox worker), so the calls are read once they went
// quiet, or once the profile's downstream.settle has passed since the last answer.
func (e *execution) settleVendor(ctx context.Context) ([]downstream.Call, string) {
	deadline := time.Now().Add(e.t.p.Downstream.SettleTime().Std())
	// A vendor fault on call n loses that call's answer or effect: a correct target
	// calls again, so the settle step waits for call n+1 before it may stop early.
	minCalls := 1
	for _, vf := range e.sc.Vendor {
		minCalls = max(minCalls, vf.Nth+1)
	}
	calls, err := e.t.sink.SettleCalls(ctx, e.entity, minCalls, vendorQuiet, deadline)
	if err != nil {
		return nil, err.Error()
	}
	return calls, ""
}
