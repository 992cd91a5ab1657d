package pgstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/idemproof/idemproof/internal/dockertest"
	"github.com/idemproof/idemproof/reference/pgstore"
	"github.com/idemproof/idemproof/reference/storetest"
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
	t.Run("schema creation is idempotent", func(t *testing.T) {
		again, err := pgstore.Open(ctx, pg.DSN)
		require.NoError(t, err)
		require.NoError(t, again.Close())
	})
	for _, tc := range httpCases {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, store) })
	}
}
