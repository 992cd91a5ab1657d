package clientcheck

import (
	"context"
	"fmt"

	"github.com/idemproof/idemproof/profile"
)

// ledgerReader counts the side effects of one entity with the profile's side_effects
// probe, straight at the target (never through the faults), as check reads it
// (profile.LedgerReader: the probe's method, headers and body, rate limits waited out).
type ledgerReader struct{ r *profile.LedgerReader }

func (l ledgerReader) count(ctx context.Context, entity string) (int, error) {
	n, err := l.r.Count(ctx, entity)
	if err != nil {
		return 0, fmt.Errorf("ledger of %s: %w", entity, err)
	}
	return n, nil
}

// readLedger counts every entity's side effects.
func (l ledgerReader) readLedger(ctx context.Context, entities []string) (map[string]int, error) {
	out := make(map[string]int, len(entities))
	for _, e := range entities {
		n, err := l.count(ctx, e)
		if err != nil {
			return out, err
		}
		out[e] = n
	}
	return out, nil
}
