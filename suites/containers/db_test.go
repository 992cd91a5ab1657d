package containers_test

import (
	"context"
	"fmt"

	"github.com/idemproof/idemproof/internal/dockertest"
)

// refundsQuery counts refund rows per order directly in the reference's PostgreSQL
// schema: the ground truth, independent of the server's own ledger endpoint.
const refundsQuery = `SELECT entity, count(*) FROM ledger WHERE kind = 'refund' AND entity = ANY($1) GROUP BY entity`

// dbRefundCounts returns the refund count of each order (0 for orders with none).
func dbRefundCounts(ctx context.Context, pg *dockertest.Postgres, orders []string) (map[string]int, error) {
	conn, err := connectPostgres(ctx, pg)
	if err != nil {
		return nil, err
	}
	defer conn.Close(ctx)
	counts := make(map[string]int, len(orders))
	for _, o := range orders {
		counts[o] = 0
	}
	rows, err := conn.Query(ctx, refundsQuery, orders)
	if err != nil {
		return nil, fmt.Errorf("count refunds: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var order string
		var n int
		if err := rows.Scan(&order, &n); err != nil {
			return nil, fmt.Errorf("count refunds: %w", err)
		}
		counts[order] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("count refunds: %w", err)
	}
	return counts, nil
}

// dbRefundCount is dbRefundCounts for one order.
func dbRefundCount(ctx context.Context, pg *dockertest.Postgres, order string) (int, error) {
	counts, err := dbRefundCounts(ctx, pg, []string{order})
	if err != nil {
		return 0, err
	}
	return counts[order], nil
}
