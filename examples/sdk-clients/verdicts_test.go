package sdkclients_test

import (
	"context"
	"io"
	"net/http/httptest"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/clientcheck"
	"github.com/idemproof/idemproof/examples/sdk-clients/openaiclient"
	"github.com/idemproof/idemproof/examples/sdk-clients/orders"
	"github.com/idemproof/idemproof/examples/sdk-clients/refundsapi"
	"github.com/idemproof/idemproof/examples/sdk-clients/retryclient"
	"github.com/idemproof/idemproof/examples/sdk-clients/stripeclient"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/verdict"
)

// sdkClient is one SDK example as client-check's code under test.
func sdkClient(sdk string, callerKey bool) clientcheck.ClientFunc {
	return func(ctx context.Context, env clientcheck.Env) error {
		// What each call says happened is in the outcome file: the lines stay out of the log.
		c := orders.Client{Config: orders.Config{OutcomeFile: env.OutcomeFile, StateDir: env.StateDir, Log: io.Discard}, BaseURL: env.BaseURL, CallerKey: callerKey}
		switch sdk {
		case "stripe":
			return stripeclient.Run(ctx, c)
		case "openai":
			return openaiclient.Run(ctx, c)
		}
		return retryclient.Run(ctx, c)
	}
}

// check runs one SDK example under client-check against a fresh API of its shape (its
// keys start empty), through the example's own profile.
func check(t *testing.T, sdk string, callerKey bool, cfg clientcheck.Config) *clientcheck.Result {
	t.Helper()
	shape, file := refundsapi.ShapeJSON, "json-api.yaml"
	if sdk == "stripe" {
		shape, file = refundsapi.ShapeStripe, "stripe-api.yaml"
	}
	api, stop, err := refundsapi.New(shape, 0)
	require.NoError(t, err)
	srv := httptest.NewServer(api)
	t.Cleanup(func() { srv.Close(); stop() })
	p, err := profile.Load(file)
	require.NoError(t, err)
	p.BaseURL = srv.URL
	cfg.Profile, cfg.Seed = p, 1
	if cfg.Timeout == 0 {
		cfg.Timeout = 2 * time.Minute
	}
	res, err := clientcheck.Run(context.Background(), cfg, sdkClient(sdk, callerKey))
	require.NoError(t, err)
	return res
}

// failed lists the checks that failed the run (FAIL and UNKNOWN), sorted.
func failed(res *clientcheck.Result) []string {
	var ids []string
	for _, f := range res.Findings() {
		ids = append(ids, f.ScenarioID)
	}
	sort.Strings(ids)
	return ids
}

func verdictOf(t *testing.T, res *clientcheck.Result, id string) verdict.Result {
	t.Helper()
	for _, r := range res.Report.Results {
		if r.ScenarioID == id {
			return r
		}
	}
	t.Fatalf("no result for %s", id)
	return verdict.Result{}
}

// The SDKs that send no key (openai-go, go-retryablehttp at their defaults) re-send the
// refund whose 503 came after the commit, and the API executes it again: one grouped
// finding, the missing key, with the duplicates under it.
func TestAnSDKThatSendsNoKeyFailsWithOneGroupedFinding(t *testing.T) {
	t.Parallel()
	for _, sdk := range []string{"openai", "retryablehttp"} {
		t.Run(sdk, func(t *testing.T) {
			t.Parallel()
			res := check(t, sdk, false, clientcheck.Config{})
			require.Equal(t, []string{clientcheck.IDNoKey}, failed(res), "%v", res.Err())
			noKey := verdictOf(t, res, clientcheck.IDNoKey)
			require.Contains(t, noKey.Message, "sends no key: 3 of 3 operation(s)")
			require.Contains(t, noKey.Message, "executed more than once")
			for _, op := range orders.Default {
				require.GreaterOrEqual(t, res.Observation.Ledger[op], 1, op)
			}
		})
	}
}

// stripe-go mints one key per call and keeps it across the call's retries: it passes
// the catalogue's faults. The key lives only in memory: a restarted program re-sends the
// pending refund under a new one, and the API executes it again.
func TestStripeKeysPerCallPassesButItsKeyDoesNotSurviveARestart(t *testing.T) {
	t.Parallel()
	res := check(t, "stripe", false, clientcheck.Config{})
	require.Empty(t, failed(res), "%v", res.Err())
	require.Equal(t, verdict.Pass, verdictOf(t, res, clientcheck.IDOneEffect).Verdict)

	res = check(t, "stripe", false, clientcheck.Config{Restart: true})
	require.Equal(t, []string{clientcheck.IDKeySurvives}, failed(res), "%v", res.Err())
	survives := verdictOf(t, res, clientcheck.IDKeySurvives)
	require.Contains(t, survives.Message, "the key did not survive the client")
	require.Contains(t, survives.Evidence.Examples[0], "2 side effect(s)", "the restarted refund executed again")
}

// With a key the caller chose from the order, every SDK passes, restarts included: the
// key survives the program.
func TestEverySDKWithACallerKeyPasses(t *testing.T) {
	t.Parallel()
	for _, sdk := range []string{"stripe", "openai", "retryablehttp"} {
		t.Run(sdk, func(t *testing.T) {
			t.Parallel()
			res := check(t, sdk, true, clientcheck.Config{})
			require.Empty(t, failed(res), "%v", res.Err())
			for _, op := range orders.Default {
				require.Equal(t, 1, res.Observation.Ledger[op], op)
			}
			res = check(t, sdk, true, clientcheck.Config{Restart: true})
			require.Empty(t, failed(res), "%v", res.Err())
			require.Equal(t, verdict.Pass, verdictOf(t, res, clientcheck.IDKeySurvives).Verdict)
		})
	}
}

// The retry signals each SDK's source reads, as client-check sees them: a 503's
// Retry-After (stripe-go reads none; openai-go and go-retryablehttp wait it), and
// x-should-retry: false on a 503 after the commit (openai-go obeys it and its program
// reports the refund unknown; stripe-go reads Stripe-Should-Retry only on an answer that
// is no error, so it retries a 503 whatever the header says, as go-retryablehttp does).
func TestRetrySignalsAsEachSDKReadsThem(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		sdk, faults string
		check       string
		want        verdict.Verdict
		attempts    int // of each operation
	}{
		{"stripe", "503=1", clientcheck.IDRetryAfterHonoured, verdict.NonStrict, 2},
		{"openai", "503=1", clientcheck.IDRetryAfterHonoured, verdict.Pass, 2},
		{"retryablehttp", "503=1", clientcheck.IDRetryAfterHonoured, verdict.Pass, 2},
		{"openai", "should-retry=false", clientcheck.IDLostResolved, verdict.Pass, 1},
		{"stripe", "should-retry=false", clientcheck.IDLostResolved, verdict.Pass, 2},
		{"retryablehttp", "should-retry=false", clientcheck.IDLostResolved, verdict.Pass, 2},
	} {
		t.Run(tc.sdk+" "+tc.faults, func(t *testing.T) {
			t.Parallel()
			res := check(t, tc.sdk, true, clientcheck.Config{FaultSpec: tc.faults})
			v := verdictOf(t, res, tc.check)
			require.Equal(t, tc.want, v.Verdict, v.Message)
			require.Empty(t, failed(res), "%v", res.Err())
			for _, op := range orders.Default {
				require.Len(t, res.Attempts(op), tc.attempts, op)
				require.Equal(t, 1, res.Observation.Ledger[op], op)
			}
			if tc.sdk == "openai" && tc.faults == "should-retry=false" {
				for _, oc := range res.Observation.Outcomes {
					require.Equal(t, clientcheck.OutcomeUnknown, oc.Outcome, "it obeyed, and its program reports the refund unknown: %+v", oc)
				}
			}
		})
	}
}
