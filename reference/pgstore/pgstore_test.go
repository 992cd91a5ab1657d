package pgstore_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/idemproof/idemproof/internal/dockertest"
	"github.com/idemproof/idemproof/reference/pgstore"
	"github.com/idemproof/idemproof/reference/storetest"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// TestPostgres runs everything that needs PostgreSQL against one container: the shared
// store suite, then the HTTP-level race, crash and benchmark-free checks (postgres_http_test.go).
func TestPostgres(t *testing.T) {
	pg := dockertest.RunPostgres(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	store, err := pgstore.Open(ctx, pg.DSN)
	require.NoError(t, err)
	t.Cleanup(func() { store.Close() })

	t.Run("store suite", func(t *testing.T) { storetest.Run(t, store) })
	t.Run("one-transaction store suite", func(t *testing.T) { storetest.RunLocal(t, store) })
	t.Run("schema creation is idempotent", func(t *testing.T) {
		again, err := pgstore.Open(ctx, pg.DSN)
		require.NoError(t, err)
		require.NoError(t, again.Close())
	})
	t.Run("a table of an earlier layout is refused with what to do", func(t *testing.T) {
		_, err := store.Pool().Exec(ctx, `CREATE DATABASE earlier`)
		require.NoError(t, err)
		dsn := strings.Replace(pg.DSN, "/idemproof?", "/earlier?", 1)
		require.NotEqual(t, pg.DSN, dsn)
		conn, err := pgx.Connect(ctx, dsn)
		require.NoError(t, err)
		_, err = conn.Exec(ctx, `CREATE TABLE idempotency_keys (principal text, endpoint text, idempotency_key text,
			PRIMARY KEY (principal, endpoint, idempotency_key))`)
		require.NoError(t, err)
		require.NoError(t, conn.Close(ctx))
		_, err = pgstore.Open(ctx, dsn)
		require.ErrorContains(t, err, "earlier idemproof schema")
		require.ErrorContains(t, err, "point the store at a new database")
		require.NotContains(t, err.Error(), "is PostgreSQL running", "the database is reachable: no connection hint")
	})
	for _, tc := range httpCases {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, store) })
	}
	for _, tc := range localCases {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, store, pg.DSN) })
	}
}
