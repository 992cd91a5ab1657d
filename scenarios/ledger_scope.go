package scenarios

import (
	"context"
	"fmt"

	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/verdict"
)

// concurrencyFor is how many scenarios run at once against p: one when a ledger of p is
// global, since a second scenario's effects would land in the first one's count. It says
// so once through cfg.Notice.
func concurrencyFor(p *profile.Profile, cfg RunConfig) int {
	if !p.HasGlobalLedger() || cfg.Concurrency == 1 {
		return cfg.Concurrency
	}
	if cfg.Notice != nil {
		cfg.Notice(fmt.Sprintf("target %s has a global ledger: scenarios run one at a time", p.Name))
	}
	return 1
}

// ledgerBaseline holds the counts of the global ledgers before a scenario's first
// attempt (entity ledgers start at zero: the entity is fresh).
type ledgerBaseline map[string]int

// readBaseline reads the global ledgers the scenario will count.
func (t *target) readBaseline(ctx context.Context, withOther bool) (ledgerBaseline, error) {
	base := ledgerBaseline{}
	if t.p.SideEffects.Global() {
		n, err := t.readLedger(ctx, t.p.SideEffects, "")
		if err != nil {
			return nil, fmt.Errorf("before the scenario: %w", err)
		}
		base[verdict.LedgerOperation] = n
	}
	if withOther && t.p.Other != nil && t.p.Other.SideEffects.Global() {
		n, err := t.readLedger(ctx, t.p.Other.SideEffects, "")
		if err != nil {
			return nil, fmt.Errorf("other_operation before the scenario: %w", err)
		}
		base[verdict.LedgerOther] = n
	}
	return base, nil
}
