package main

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/clientcheck"
	"github.com/idemproof/idemproof/faultproxy/stdio"
)

// The test binary is also the shim an agent starts over stdio (stdio.SelfShim), so the
// test needs no idemproof program on the PATH.
func TestMain(m *testing.M) {
	stdio.RunShimIfAsked()
	os.Exit(m.Run())
}

// agentUnderTest is this folder's loop, with one of its bugs or none, as client-check
// runs it: its server over stdio (IDEMPROOF_MCP_COMMAND) or Streamable HTTP.
func agentUnderTest(set func(*Config)) clientcheck.ClientFunc {
	return func(ctx context.Context, env clientcheck.Env) error {
		cfg := Config{Endpoint: env.MCPEndpoint, Command: env.MCPCommand, Refunds: 3, OrderPrefix: "order-",
			Tool: env.MCPTool, Attempts: 5, AttemptTimeout: time.Second, StateDir: env.StateDir}
		if set != nil {
			set(&cfg)
		}
		outcomes, err := Run(ctx, cfg)
		if werr := writeOutcomes(env.OutcomeFile, outcomes); werr != nil && err == nil {
			err = werr
		}
		return err
	}
}

// The loops under client-check, against the MCP fixture (the reference's refund as an
// MCP tool), over stdio and over Streamable HTTP: the correct one passes, each bad one is
// caught with the finding that names its bug.
func TestAgentsUnderClientCheck(t *testing.T) {
	t.Parallel()
	shim := stdio.SelfShim()
	for _, over := range []string{"stdio", "http"} {
		for _, tc := range []struct {
			name    string
			set     func(*Config)
			finding string
		}{
			{"correct", nil, ""},
			{"key-per-attempt", func(c *Config) { c.KeyPerAttempt = true }, clientcheck.IDKeyPerAttempt},
			{"new-key-on-reconnect", func(c *Config) { c.NewKeyOnReconnect = true }, clientcheck.IDOneEffect},
			{"other-arguments", func(c *Config) { c.OtherArguments = true }, clientcheck.IDSamePayload},
			{"failed-on-loss", func(c *Config) { c.FailedOnLoss = true }, clientcheck.IDUnknownAsFailed},
		} {
			t.Run(over+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				cfg := clientcheck.Config{MCP: over, ShimCommand: shim, Seed: 1, Timeout: 2 * time.Minute}
				res, err := clientcheck.Run(context.Background(), cfg, agentUnderTest(tc.set))
				require.NoError(t, err)
				if tc.finding == "" {
					require.NoError(t, res.Err(), "the correct loop: no findings")
					require.Equal(t, map[string]int{"order-1": 1, "order-2": 1, "order-3": 1}, res.Observation.Ledger)
					return
				}
				require.ErrorContains(t, res.Err(), tc.finding)
			})
		}
	}
}

// The key survives the agent: killed right after a lost answer and started again, the
// correct loop resumes the call under the key it kept in its state folder.
func TestTheKeySurvivesARestartOfTheAgent(t *testing.T) {
	t.Parallel()
	shim := stdio.SelfShim()
	cfg := clientcheck.Config{MCP: "stdio", ShimCommand: shim, Seed: 1, Timeout: 2 * time.Minute, Restart: true}
	res, err := clientcheck.Run(context.Background(), cfg, agentUnderTest(nil))
	require.NoError(t, err)
	require.NoError(t, res.Err())
	require.NotEmpty(t, res.Observation.Restarts, "the agent was restarted")
}
