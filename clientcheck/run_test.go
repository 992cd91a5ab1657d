package clientcheck_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/clientcheck"
	"github.com/idemproof/idemproof/verdict"
)

// refundLoop posts one refund per order, up to 4 attempts each; keyFor decides the key of
// each attempt, which is all that differs between a correct and a broken client.
func refundLoop(orders int, keyFor func(order, attempt int) string) clientcheck.ClientFunc {
	return func(ctx context.Context, env clientcheck.Env) error {
		httpClient := &http.Client{Timeout: 300 * time.Millisecond}
		out := clientcheck.NewOutcomeWriter(env.OutcomeFile)
		for order := 1; order <= orders; order++ {
			id := fmt.Sprintf("order-%d", order)
			outcome := clientcheck.OutcomeUnknown
			for attempt := 1; attempt <= 4 && outcome == clientcheck.OutcomeUnknown; attempt++ {
				req, err := http.NewRequestWithContext(ctx, "POST", env.BaseURL+"/v1/refunds",
					strings.NewReader(`{"order_id":"`+id+`","amount":4900}`))
				if err != nil {
					return err
				}
				req.Header.Set(env.KeyHeader, keyFor(order, attempt))
				resp, err := httpClient.Do(req)
				if err != nil {
					continue
				}
				resp.Body.Close()
				switch {
				case resp.StatusCode == http.StatusConflict:
					// A slow attempt timed out and its retry found it still in flight:
					// honour the server's Retry-After (1s) as a correct client must.
					select {
					case <-time.After(time.Second):
					case <-ctx.Done():
						return ctx.Err()
					}
				case resp.StatusCode == 201:
					outcome = clientcheck.OutcomeOK
				case resp.StatusCode >= 400 && resp.StatusCode < 500 && resp.StatusCode != 409:
					outcome = clientcheck.OutcomeFailed
				}
			}
			if err := out.Write(clientcheck.Outcome{Operation: id, Outcome: outcome}); err != nil {
				return err
			}
		}
		return nil
	}
}

func fastConfig() clientcheck.Config {
	return clientcheck.Config{FaultSpec: "hold=1s,reset=0.5,503", Seed: 7, Timeout: 30 * time.Second}
}

func TestRunPassesAClientThatKeepsItsKey(t *testing.T) {
	res, err := clientcheck.Run(context.Background(), fastConfig(), refundLoop(4, func(order, _ int) string {
		return fmt.Sprintf("refund-order-%d", order)
	}))
	require.NoError(t, err)
	require.NoError(t, res.Err())
	require.Equal(t, map[string]int{"order-1": 1, "order-2": 1, "order-3": 1, "order-4": 1}, res.Observation.Ledger)
	require.GreaterOrEqual(t, len(res.Observation.Attempts), 8, "every first attempt is faulted, so each order took two")
	require.Len(t, res.Observation.Outcomes, 4)
}

func TestRunNamesAKeyMintedPerAttempt(t *testing.T) {
	res, err := clientcheck.Run(context.Background(), fastConfig(), refundLoop(3, func(order, attempt int) string {
		return fmt.Sprintf("refund-order-%d-try-%d", order, attempt)
	}))
	require.NoError(t, err)
	failed := map[string]bool{}
	for _, f := range res.Findings() {
		failed[f.ScenarioID] = true
	}
	require.True(t, failed[clientcheck.IDKeyPerAttempt], res.Err())
	require.True(t, failed[clientcheck.IDOneEffect], res.Err())
	// Every fresh key is a first attempt, so every attempt was faulted after it committed.
	require.Equal(t, 4, res.Observation.Ledger["order-1"])
	require.ErrorContains(t, res.Err(), "key minted per attempt")
}

func TestRunReportsAClientThatNeverCalls(t *testing.T) {
	res, err := clientcheck.Run(context.Background(), fastConfig(), func(context.Context, clientcheck.Env) error {
		return nil
	})
	require.NoError(t, err)
	findings := res.Findings()
	require.Len(t, findings, 1)
	require.Equal(t, verdict.Unknown, findings[0].Verdict)
}

func TestRunRefusesABadFaultSpec(t *testing.T) {
	_, err := clientcheck.Run(context.Background(), clientcheck.Config{FaultSpec: "hold=forever"}, clientcheck.ClientFunc(nil))
	require.ErrorContains(t, err, `fault "hold=forever"`)
}

// hammerer sends the same refund twice at once, each asking the server to hold the work
// (test hook X-Test-Delay), and retries at once on every 409: whichever request loses the
// race gets the server's own 409 (with its Retry-After) and hammers.
func hammerer(ctx context.Context, env clientcheck.Env) error {
	body := `{"order_id":"order-1","amount":4900}`
	sendUntilNot409 := func() error {
		for i := 0; i < 2000; i++ { // bounded: the held refund ends after 500ms
			req, err := http.NewRequestWithContext(ctx, "POST", env.BaseURL+"/v1/refunds", strings.NewReader(body))
			if err != nil {
				return err
			}
			req.Header.Set(env.KeyHeader, "held-key")
			req.Header.Set("X-Test-Delay", "500ms")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return err
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusConflict {
				return nil
			}
		}
		return nil
	}
	other := make(chan error, 1)
	go func() { other <- sendUntilNot409() }()
	return errors.Join(sendUntilNot409(), <-other)
}

func TestRunCatchesA409HammeredWithTheServersRetryAfter(t *testing.T) {
	res, err := clientcheck.Run(context.Background(), clientcheck.Config{FaultSpec: "none", Timeout: 30 * time.Second}, hammerer)
	require.NoError(t, err)
	var hammered *verdict.Result
	for _, f := range res.Findings() {
		if f.ScenarioID == clientcheck.ID409Hammered {
			hammered = &f
		}
	}
	require.NotNil(t, hammered, "409-hammered not found: %v", res.Err())
	require.Contains(t, hammered.Evidence.Examples[0], "Retry-After 1s")
	require.Equal(t, 1, res.Observation.Ledger["order-1"])
}

// A client killed by SIGKILL runs no exit handler, so a temporary file it made would
// outlive it; made in the TMPDIR client-check gives it, it goes with that folder when the
// run ends. A restart and the timeout kill the same way.
func TestRunRemovesTheClientsTemporaryFolder(t *testing.T) {
	state := t.TempDir()
	cfg := fastConfig()
	cfg.StateDir = state
	script := `f=$(mktemp) && echo "$TMPDIR $f" > "$IDEMPROOF_STATE_DIR/made" && kill -9 $$`
	res, err := clientcheck.Run(context.Background(), cfg, clientcheck.Command([]string{"sh", "-c", script}, io.Discard, io.Discard))
	require.NoError(t, err)
	require.ErrorContains(t, res.Err(), "killed", "the client's own SIGKILL is its exit")
	made, err := os.ReadFile(filepath.Join(state, "made"))
	require.NoError(t, err)
	dir, file, ok := strings.Cut(strings.TrimSpace(string(made)), " ")
	require.True(t, ok && dir != "", "the client got a TMPDIR: %q", made)
	require.Equal(t, dir, filepath.Dir(file), "mktemp made its file in the client's TMPDIR")
	require.NoDirExists(t, dir)
}

// A client that keeps its key but mints a new one after a transport error (the "new
// request in the catch block" bug), on a keep-alive http.Client. Were the proxy's
// connections reused, net/http would resend each reset request by itself, under the same
// key, below the client's code, and every order after the first would pass. One
// connection per request leaves the retry to the client's code, which is what is tested.
func TestRunResetsReachTheClientsOwnRetryCode(t *testing.T) {
	client := func(ctx context.Context, env clientcheck.Env) error {
		httpClient := &http.Client{Timeout: 5 * time.Second} // keep-alive, as every default client
		out := clientcheck.NewOutcomeWriter(env.OutcomeFile)
		for order := 1; order <= 3; order++ {
			id := fmt.Sprintf("order-%d", order)
			key, outcome := "refund-"+id, clientcheck.OutcomeUnknown
			// A read first, as a client that looks before it acts: it leaves a
			// connection open for the POST to reuse, where the proxy allows that.
			if resp, err := httpClient.Get(env.BaseURL + "/v1/refunds?order_id=" + id); err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			for attempt := 1; attempt <= 3 && outcome == clientcheck.OutcomeUnknown; attempt++ {
				req, err := http.NewRequestWithContext(ctx, "POST", env.BaseURL+"/v1/refunds",
					strings.NewReader(`{"order_id":"`+id+`","amount":4900}`))
				if err != nil {
					return err
				}
				req.Header.Set(env.KeyHeader, key)
				resp, err := httpClient.Do(req)
				if err != nil {
					key = fmt.Sprintf("refund-%s-after-error-%d", id, attempt) // the bug
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == http.StatusCreated {
					outcome = clientcheck.OutcomeOK
				}
			}
			if err := out.Write(clientcheck.Outcome{Operation: id, Outcome: outcome}); err != nil {
				return err
			}
		}
		return nil
	}
	res, err := clientcheck.Run(context.Background(), clientcheck.Config{FaultSpec: "reset", Seed: 7, Timeout: 30 * time.Second}, client)
	require.NoError(t, err)
	for order, n := range res.Observation.Ledger {
		require.Greater(t, n, 1, "%s: the reset reached the client's code, which re-keyed its retry", order)
	}
	require.Len(t, res.Observation.Ledger, 3)
	require.ErrorContains(t, res.Err(), "key minted per attempt")
}
