package scenarios

import (
	"context"

	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/verdict"
)

// readOperationLedger counts the operation's side effects of a scenario run: its
// entity's, plus its side entities' (Record.SideEntities).
func (t *target) readOperationLedger(ctx context.Context, rec *verdict.Record) (int, error) {
	total := 0
	for _, entity := range append([]string{rec.Entity}, rec.SideEntities...) {
		n, err := t.readLedger(ctx, t.p.SideEffects, entity)
		if err != nil {
			return 0, err
		}
		total += n
	}
	return total, nil
}

// readLedger counts the side effects for entity with the probe, through the target's
// transport: an HTTP GET, or over MCP a call of the ledger tool.
func (t *target) readLedger(ctx context.Context, pr profile.Probe, entity string) (int, error) {
	return profile.CountLedger(ctx, t.p, t.tr, t.ledgerBase(), pr, entity)
}
