package main

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/scenarios"
	"github.com/idemproof/idemproof/verdict"
)

// TestVerdictsWithAGlobalLedger runs the whole catalogue against this server through
// its profile (one global counter, query-parameter hooks) and pins what a correct keyed
// API with such a ledger must get: no FAIL and no UNKNOWN — every effect is counted as
// the difference of the counter around its own scenario, the scenarios running one at a
// time — and N/A exactly where the profile declares nothing.
func TestVerdictsWithAGlobalLedger(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: newServer(5 * time.Second)}
	go srv.Serve(ln) //nolint:errcheck // ends with Close below
	t.Cleanup(func() { _ = srv.Close() })

	t.Setenv("COUNTER_BASE_URL", "http://"+ln.Addr().String())
	prof, err := profile.Load("profile.yaml")
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var notices []string
	rep, err := scenarios.Run(ctx, scenarios.RunConfig{
		Profiles: []*profile.Profile{prof}, Seed: 1, Strict: true,
		Notice: func(s string) { notices = append(notices, s) },
	})
	require.NoError(t, err)
	require.Equal(t, []string{"target global-counter has a global ledger: scenarios run one at a time"}, notices)

	got := map[string]verdict.Verdict{}
	for _, r := range rep.Results {
		got[r.ScenarioID] = r.Verdict
		if r.Verdict == verdict.Fail || r.Verdict == verdict.Unknown {
			t.Errorf("%s: %s — %s", r.ScenarioID, r.Verdict, r.Message)
		}
	}
	require.Len(t, got, len(scenarios.Catalogue()))
	// What the profile does not declare: no crash hook, no lock timeout, one principal,
	// one endpoint.
	for _, id := range []string{"recovery/crash-after-key", "recovery/crash-after-commit", "recovery/slow-past-lock", "scope/other-principal", "scope/other-endpoint"} {
		require.Equal(t, verdict.NA, got[id], id)
	}
	// The scenarios that count effects, each against the counter's delta.
	for _, id := range []string{
		"replay/after-503", "replay/after-hold", "race/concurrent-pair", "race/in-flight-409",
		"race/keepalive-many-keys", "key/distinct-keys-same-body", "key/valid-never-5xx", "key/get-ignored",
		"storage/5xx-not-pinned", "storage/validation-not-stored", "expiry/after-window", "errors/problem-json",
	} {
		require.Equal(t, verdict.Pass, got[id], id)
	}
	// The burst counts one effect against the delta too; its work is quick enough that
	// the copies after the first usually meet the key committed and none is refused,
	// which proves nothing concurrent (INFO), and PASSes when one was refused.
	require.Contains(t, []verdict.Verdict{verdict.Pass, verdict.Info}, got["race/burst-1000"])
}
