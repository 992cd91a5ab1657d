package referencectr_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/testcontainers/testcontainers-go"

	"github.com/idemproof/idemproof/containers/referencectr"
	"github.com/idemproof/idemproof/internal/dockertest"
)

func TestRunServesRefundsOnLoopback(t *testing.T) {
	dockertest.Require(t, dockertest.AppImage())
	ctx := context.Background()
	ctr, err := referencectr.Run(ctx, dockertest.AppImage(), referencectr.WithTestHooks())
	testcontainers.CleanupContainer(t, ctr)
	require.NoError(t, err)

	base, err := ctr.URL(ctx)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(base, "http://127.0.0.1:"), "published on loopback: %s", base)

	hc := &http.Client{Timeout: 10 * time.Second}
	post := func() (int, string) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/refunds",
			strings.NewReader(`{"order_id": "o-1", "amount": 4900}`))
		require.NoError(t, err)
		req.Header.Set("Idempotency-Key", "k-1")
		req.Header.Set("Content-Type", "application/json")
		resp, err := hc.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, resp.Header.Get("Idempotent-Replayed") + "|" + string(b)
	}
	status1, body1 := post()
	status2, body2 := post()
	require.Equal(t, http.StatusCreated, status1)
	require.Equal(t, status1, status2)
	require.Equal(t, "true|"+strings.TrimPrefix(body1, "|"), body2, "the repeat is a replay of the same bytes")
}

func TestRunReportsAFailingServer(t *testing.T) {
	dockertest.Require(t, dockertest.AppImage())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// An unreachable store makes `serve` exit (at once: no --store-wait): Run must fail,
	// not hang, and still return the container so cleanup works.
	ctr, err := referencectr.Run(ctx, dockertest.AppImage(), referencectr.WithStore("postgres://x:y@nowhere.invalid:5432/db"),
		testcontainers.WithCmdArgs("--store-wait", "0"))
	testcontainers.CleanupContainer(t, ctr)
	require.ErrorContains(t, err, "run reference")
}
