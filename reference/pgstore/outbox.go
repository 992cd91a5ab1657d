package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/idemproof/idemproof/reference/idempotency"
)

// PendingEffects lists the effects of kind that have no effect of doneKind with the id
// 'done:' || id, oldest first, at most limit: the outbox worker's sweep (see
// reference/outbox). Jobs and their done markers are ledger rows like the refunds, so
// the job commits in the refund's own transaction with no schema change.
func (s *Store) PendingEffects(ctx context.Context, kind, doneKind string, limit int) ([]idempotency.Effect, error) {
	rows, err := s.pool.Query(ctx, `SELECT j.id, j.kind, j.entity, j.principal, j.data, j.created_at FROM ledger j
		WHERE j.kind = $1 AND NOT EXISTS (SELECT 1 FROM ledger d WHERE d.id = 'done:' || j.id AND d.kind = $2)
		ORDER BY j.seq LIMIT $3`, kind, doneKind, limit)
	if err != nil {
		return nil, fmt.Errorf("read pending jobs: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (idempotency.Effect, error) {
		var e idempotency.Effect
		err := row.Scan(&e.ID, &e.Kind, &e.Entity, &e.Principal, &e.Data, &e.Created)
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("read pending jobs: %w", err)
	}
	return out, nil
}
