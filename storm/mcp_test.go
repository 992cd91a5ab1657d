package storm_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/reference"
	"github.com/idemproof/idemproof/reference/mcpserver"
	"github.com/idemproof/idemproof/storm"
)

// stormMCP storms the reference's MCP tool server over Streamable HTTP, keyed in _meta,
// with the mcp-refunds profile: every copy a client with its own session, answers
// judged by the profile's outcome rules (a JSON-RPC error inside a 200 is no success).
func stormMCP(t *testing.T, ops int, flaws ...string) *storm.Report {
	t.Helper()
	srvMCP, err := mcpserver.New(mcpserver.Config{TestHooks: true, Reference: []reference.Option{
		reference.WithFlaws(flaws...), reference.WithRetention(time.Hour)}})
	require.NoError(t, err)
	t.Cleanup(func() { srvMCP.Close() })
	srv := httptest.NewServer(srvMCP.Handler())
	t.Cleanup(srv.Close)
	p, err := profile.Builtin("mcp-refunds")
	require.NoError(t, err)
	p.BaseURL = srv.URL
	p.Retention = profile.Duration(time.Hour)
	p.ClientTimeout = profile.Duration(10 * time.Second) // a loaded machine is no finding here
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rep, err := storm.Run(ctx, storm.Config{Profile: p, Ops: ops, Seed: 7, NoShrink: true})
	require.NoError(t, err)
	return rep
}

func TestStormOverMCPFindsNothingOnTheCorrectToolServer(t *testing.T) {
	t.Parallel()
	rep := stormMCP(t, 300)
	t.Logf("%+v faulted %d attempts %d", rep.Counts, rep.Faulted, rep.Attempts)
	require.True(t, rep.Complete, rep.Interrupted)
	for _, c := range storm.Categories {
		require.Zero(t, rep.Counts[c], "%s: %v", c, rep.Findings[c])
	}
	require.Greater(t, rep.Faulted, 50, "about 30%% of 300 calls had their first answer lost: the proxy found their keys in _meta")
	require.Greater(t, rep.Attempts, 300+50, "every lost answer was retried")
}

func TestStormOverMCPCatchesCheckThenSet(t *testing.T) {
	t.Parallel()
	rep := stormMCP(t, 300, "check-then-set")
	t.Logf("%+v", rep.Counts)
	require.Positive(t, rep.Counts[storm.CatDuplicated], "%v", rep.Findings)
}

// A replay the tool server re-renders (a fresh id) differs from the committed answer the
// journal kept: the committed body is read over MCP as the client reads its answers.
func TestStormOverMCPComparesReplaysWithTheCommittedAnswer(t *testing.T) {
	t.Parallel()
	rep := stormMCP(t, 200, "replay-regenerates")
	require.Positive(t, rep.Counts[storm.CatDiffers], "%v", rep.Counts)
}
