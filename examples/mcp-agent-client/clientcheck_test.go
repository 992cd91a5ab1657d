package main

import (
	"context"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/clientcheck"
	"github.com/idemproof/idemproof/examples/mcp-gosdk-refunds/refunds"
	"github.com/idemproof/idemproof/profile"
)

// The README's claim, held to: under client-check with this folder's profile, against
// the correct MCP refund server, the correct loop has no findings and the key minted per
// attempt is named.
func TestUnderClientCheck(t *testing.T) {
	up := httptest.NewServer(refunds.NewApp(refunds.Config{WorkMin: time.Millisecond, WorkMax: time.Millisecond}).Handler())
	t.Cleanup(up.Close)
	doc, err := os.ReadFile("client-check.yaml")
	require.NoError(t, err)
	t.Setenv("MCP_GOSDK_BASE_URL", up.URL)
	p, err := profile.Parse("client-check.yaml", doc)
	require.NoError(t, err)

	agent := func(keyPerAttempt bool) clientcheck.ClientFunc {
		return func(ctx context.Context, env clientcheck.Env) error {
			endpoint := env.MCPEndpoint
			if !strings.HasPrefix(endpoint, "http") {
				endpoint = strings.TrimSuffix(env.BaseURL, "/") + endpoint
			}
			outcomes, err := Run(ctx, Config{Endpoint: endpoint, Refunds: 3, OrderPrefix: "order-", KeyField: env.KeyField,
				Tool: "refund", KeyPerAttempt: keyPerAttempt, Attempts: 5, AttemptTimeout: time.Second})
			if werr := writeOutcomes(env.OutcomeFile, outcomes); werr != nil && err == nil {
				err = werr
			}
			return err
		}
	}
	cfg := clientcheck.Config{Profile: p, Seed: 1, Timeout: 2 * time.Minute}
	res, err := clientcheck.Run(context.Background(), cfg, agent(false))
	require.NoError(t, err)
	require.NoError(t, res.Err(), "the correct loop: no findings")
	require.Equal(t, map[string]int{"order-1": 1, "order-2": 1, "order-3": 1}, res.Observation.Ledger)

	// The same server again: this run counts from the ledger's counts before it.
	res, err = clientcheck.Run(context.Background(), cfg, agent(true))
	require.NoError(t, err)
	require.ErrorContains(t, res.Err(), "key minted per attempt")

	// The server's own refusals, as JSON-RPC errors inside a 200 answering each call's
	// id: the loop retries the in-flight one (-32010) under its key and takes the
	// mismatch (-32011) as final; no findings.
	cfg.FaultSpec = "409,422"
	res, err = clientcheck.Run(context.Background(), cfg, agent(false))
	require.NoError(t, err)
	require.NoError(t, res.Err(), "the correct loop under the server's refusals: no findings")
	var refused []string
	for _, order := range []string{"order-1", "order-2", "order-3"} {
		if a := res.Attempts(order); len(a) > 0 && a[0].Fault == "before-status" {
			refused = append(refused, string(a[0].Class))
			if a[0].Class == "in_flight" {
				// The injected refusal said 1 s where the profile's rule says (the 409
				// kind's Retry-After), and client/409-hammered held the loop to it.
				require.Equal(t, time.Second, a[0].RetryAfter, order)
				require.Equal(t, "error.data.retry_after_ms", a[0].RetryFrom, order)
			}
		}
	}
	require.Len(t, refused, 3, "409,422 dealt over the three calls")
	require.Subset(t, refused, []string{"in_flight", "mismatch"}, "each refusal taken as the class its JSON-RPC error names")
}
