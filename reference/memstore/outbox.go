package memstore

import (
	"context"
	"sort"

	"github.com/idemproof/idemproof/reference/idempotency"
)

// PendingEffects lists the effects of kind that have no effect of doneKind with the id
// "done:"+id, oldest first, at most limit (the outbox worker's sweep; see
// reference/outbox). It scans the ledger of every entity: fine for a reference server.
func (s *Store) PendingEffects(_ context.Context, kind, doneKind string, limit int) ([]idempotency.Effect, error) {
	s.ledgerMu.Lock()
	var out []idempotency.Effect
	for k, list := range s.effects {
		if k.kind != kind {
			continue
		}
		for _, e := range list {
			if _, done := s.byID[ledgerKey{doneKind, "done:" + e.ID}]; !done {
				out = append(out, e)
			}
		}
	}
	s.ledgerMu.Unlock()
	sort.SliceStable(out, func(i, j int) bool { return out[i].Created.Before(out[j].Created) })
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}
