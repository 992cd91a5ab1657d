package dockertest_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/internal/dockertest"
)

// The locally built PostgreSQL image must honour the official image's contract: the
// module's wait strategy passes and the configured user, password and database work.
func TestPostgresImageServesQueries(t *testing.T) {
	pg := dockertest.RunPostgres(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pg.DSN)
	require.NoError(t, err)
	defer conn.Close(ctx)
	var db string
	require.NoError(t, conn.QueryRow(ctx, "select current_database()").Scan(&db))
	require.Equal(t, "idemproof", db)
}
