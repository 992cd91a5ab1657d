package scenarios

import (
	"context"
	"fmt"
)

// Ledger scopes (side_effects.scope).
const (
	// ScopeEntity: the ledger path names {{.Entity}} and counts that entity's effects, so
	// scenarios running at once never see each other's.
	ScopeEntity = "entity"
	// ScopeGlobal: one count of every effect (a counter, a balance, a total). It is read
	// before and after each scenario and the difference is the scenario's count, so the
	// target's scenarios run one at a time.
	ScopeGlobal = "global"
)

func (pr Probe) global() bool { return pr.Scope == ScopeGlobal }

// hasGlobalLedger reports whether any ledger of the profile counts every effect.
func (p *Profile) hasGlobalLedger() bool {
	return p.SideEffects.global() || (p.Other != nil && p.Other.SideEffects.global())
}

// concurrencyFor is how many scenarios run at once against p: one when a ledger of p is
// global, since a second scenario's effects would land in the first one's count. It says
// so once through cfg.Notice.
func concurrencyFor(p *Profile, cfg RunConfig) int {
	if !p.hasGlobalLedger() || cfg.Concurrency == 1 {
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
	if t.p.SideEffects.global() {
		n, err := t.readLedger(ctx, t.p.SideEffects, "")
		if err != nil {
			return nil, fmt.Errorf("before the scenario: %w", err)
		}
		base[LedgerOperation] = n
	}
	if withOther && t.p.Other != nil && t.p.Other.SideEffects.global() {
		n, err := t.readLedger(ctx, t.p.Other.SideEffects, "")
		if err != nil {
			return nil, fmt.Errorf("other_operation before the scenario: %w", err)
		}
		base[LedgerOther] = n
	}
	return base, nil
}
