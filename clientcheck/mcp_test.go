package clientcheck_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/clientcheck"
	"github.com/idemproof/idemproof/faultproxy/stdio"
	"github.com/idemproof/idemproof/transport/mcpstdio"
)

// The test binary is also the shim an agent starts over stdio (stdio.SelfShim).
func TestMain(m *testing.M) {
	stdio.RunShimIfAsked()
	os.Exit(m.Run())
}

func shim() []string { return stdio.SelfShim() }

// agentBug is what an agent harness does wrong, if anything.
type agentBug string

const (
	agentCorrect         agentBug = ""
	agentKeyPerAttempt   agentBug = "key-per-attempt"    // a fresh key on every retry
	agentFailedOnLoss    agentBug = "failed-on-loss"     // a lost answer reported failed, never retried
	agentOtherArguments  agentBug = "other-arguments"    // the retry changes the arguments under the key
	agentNewKeyAfterExit agentBug = "new-key-after-exit" // its key lived with the server connection: after the server died, the call goes again under a new one
)

// stdioAgent is an agent's tool runner over stdio: three refunds, each retried up to five
// times, its server started from env.MCPCommand and started again when it died.
func stdioAgent(bug agentBug) clientcheck.ClientFunc {
	return func(ctx context.Context, env clientcheck.Env) error {
		var cmd []string
		if err := json.Unmarshal([]byte(envValue(env, clientcheck.EnvMCPCommand)), &cmd); err != nil {
			return fmt.Errorf("IDEMPROOF_MCP_COMMAND: %w", err)
		}
		var c *mcpstdio.Client
		defer func() {
			if c != nil {
				c.Close()
			}
		}()
		var outcomes []string
		for i := 1; i <= 3; i++ {
			order := fmt.Sprintf("order-%d", i)
			key := fmt.Sprintf("agent-%d-%s", time.Now().UnixNano(), order)
			outcome, died := "unknown", false
			for attempt := 1; attempt <= 5 && outcome == "unknown"; attempt++ {
				if c == nil {
					var err error
					if c, err = mcpstdio.Start(ctx, stdio.Command{Args: cmd}, mcpstdio.Options{StopGrace: 200 * time.Millisecond}); err != nil {
						return err
					}
				}
				args := fmt.Sprintf(`{"order_id":%q,"amount":4900}`, order)
				meta := map[string]any{"idempotency_key": key}
				switch {
				case bug == agentKeyPerAttempt && attempt > 1:
					meta["idempotency_key"] = fmt.Sprintf("%s-try-%d", key, attempt)
				case bug == agentOtherArguments && attempt > 1:
					args = fmt.Sprintf(`{"order_id":%q,"amount":5000}`, order)
				case bug == agentNewKeyAfterExit && died:
					meta["idempotency_key"] = key + "-after-restart"
				}
				actx, cancel := context.WithTimeout(ctx, time.Second)
				_, _, err := c.CallTool(actx, "refund", json.RawMessage(args), meta)
				cancel()
				var rpc *mcpstdio.RPCError
				switch {
				case err == nil:
					outcome = "ok"
				case errors.As(err, &rpc) && rpc.Code == -32010:
					time.Sleep(time.Second)
				case errors.As(err, &rpc):
					outcome = "failed"
				case errors.Is(err, mcpstdio.ErrServerExited):
					c.Close()
					c, died = nil, true
				}
				if outcome == "unknown" && bug == agentFailedOnLoss {
					outcome = "failed"
				}
			}
			outcomes = append(outcomes, fmt.Sprintf(`{"operation":%q,"outcome":%q}`, order, outcome))
		}
		return os.WriteFile(env.OutcomeFile, []byte(strings.Join(outcomes, "\n")+"\n"), 0o644)
	}
}

func envValue(env clientcheck.Env, name string) string {
	for _, v := range env.Vars() {
		if k, val, ok := strings.Cut(v, "="); ok && k == name {
			return val
		}
	}
	return ""
}

func TestAgentOverStdio(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		bug     agentBug
		finding string // "" for none
	}{
		{agentCorrect, ""},
		{agentKeyPerAttempt, clientcheck.IDKeyPerAttempt},
		{agentFailedOnLoss, clientcheck.IDUnknownAsFailed},
		{agentOtherArguments, clientcheck.IDSamePayload},
		{agentNewKeyAfterExit, clientcheck.IDOneEffect},
	} {
		t.Run(string(tc.bug)+"-agent", func(t *testing.T) {
			t.Parallel()
			cfg := clientcheck.Config{MCP: "stdio", ShimCommand: shim(), Seed: 1, Timeout: time.Minute}
			res, err := clientcheck.Run(context.Background(), cfg, stdioAgent(tc.bug))
			require.NoError(t, err)
			if tc.finding == "" {
				require.NoError(t, res.Err(), "the correct agent: no findings")
				require.Equal(t, map[string]int{"order-1": 1, "order-2": 1, "order-3": 1}, res.Observation.Ledger)
			} else {
				require.ErrorContains(t, res.Err(), tc.finding)
			}
			// The schedule over stdio: a hold, a dropped answer, a killed server — in the journal.
			var faults []string
			for _, r := range res.Observation.Attempts {
				if r.Fault != "" {
					faults = append(faults, r.Fault+"/"+r.ClientResult)
				}
			}
			require.Subset(t, faults, []string{"after-hold/dropped", "after-reset/dropped", "after-kill/killed"}, "the journal shows the dropped lines and the killed process")
		})
	}
}

// An agent over Streamable HTTP, on the official SDK's client: the fixture behind the
// proxy, its 503 after the commit, its reset, its hold.
func TestAgentOverStreamableHTTP(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		perAttempt bool
		finding    string
	}{{false, ""}, {true, clientcheck.IDKeyPerAttempt}} {
		t.Run(fmt.Sprint("key-per-attempt=", tc.perAttempt), func(t *testing.T) {
			t.Parallel()
			agent := func(ctx context.Context, env clientcheck.Env) error {
				var outcomes []string
				for i := 1; i <= 3; i++ {
					order := fmt.Sprintf("order-%d", i)
					key := fmt.Sprintf("agent-%d-%s", time.Now().UnixNano(), order)
					outcome := "unknown"
					for attempt := 1; attempt <= 5 && outcome == "unknown"; attempt++ {
						if tc.perAttempt {
							key = fmt.Sprintf("agent-%d-%s-%d", time.Now().UnixNano(), order, attempt)
						}
						outcome = httpCall(ctx, env.MCPEndpoint, order, key)
					}
					outcomes = append(outcomes, fmt.Sprintf(`{"operation":%q,"outcome":%q}`, order, outcome))
				}
				return os.WriteFile(env.OutcomeFile, []byte(strings.Join(outcomes, "\n")+"\n"), 0o644)
			}
			res, err := clientcheck.Run(context.Background(), clientcheck.Config{MCP: "http", Seed: 1, Timeout: time.Minute}, agent)
			require.NoError(t, err)
			if tc.finding == "" {
				require.NoError(t, res.Err())
				require.Equal(t, map[string]int{"order-1": 1, "order-2": 1, "order-3": 1}, res.Observation.Ledger)
				return
			}
			require.ErrorContains(t, res.Err(), tc.finding)
		})
	}
}

// httpCall is one attempt of a refund on a session of its own (an agent that reconnects
// before it retries): ok, failed, or unknown (the answer was lost).
func httpCall(ctx context.Context, endpoint, order, key string) string {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	client := sdk.NewClient(&sdk.Implementation{Name: "test-agent", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: endpoint, MaxRetries: -1, DisableStandaloneSSE: true}, nil)
	if err != nil {
		return "unknown"
	}
	defer cs.Close()
	_, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "refund", Arguments: map[string]any{"order_id": order, "amount": 4900}, Meta: sdk.Meta{"idempotency_key": key}})
	if err == nil {
		return "ok"
	}
	if strings.Contains(err.Error(), "-32011") || strings.Contains(err.Error(), "-32602") {
		return "failed"
	}
	return "unknown"
}
