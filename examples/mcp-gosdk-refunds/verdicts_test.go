package main

import (
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/examples/mcp-gosdk-refunds/refunds"
	"github.com/idemproof/idemproof/scenarios"
	"github.com/idemproof/idemproof/scenarios/scenariotest"
)

// TestVerdictsMatchTheServer runs idemproof's catalogue over MCP against this server and
// pins the verdicts that follow from its source (refunds/refunds.go, refunds/keys.go): every safety
// scenario and MUST passes, the policies are reported, and what the profile cannot
// declare is N/A.
func TestVerdictsMatchTheServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: refunds.NewApp(refunds.Config{Retention: 3 * time.Second}).Handler(), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln) //nolint:errcheck // ends with Close below
	t.Cleanup(func() { srv.Close() })

	t.Setenv("MCP_GOSDK_BASE_URL", "http://"+ln.Addr().String())
	profile, err := scenarios.LoadProfile("profile.yaml")
	require.NoError(t, err)

	want := map[string]scenarios.Verdict{
		// The key is recorded before the work and the result stored: every lost answer
		// is recovered by the retry, with one refund.
		"before/503":            scenarios.Pass,
		"before/reset":          scenarios.Pass,
		"before/delay":          scenarios.Pass,
		"replay/sequential":     scenarios.Pass,
		"replay/after-502":      scenarios.Pass,
		"replay/after-503":      scenarios.Pass,
		"replay/after-504":      scenarios.Pass,
		"replay/after-close":    scenarios.Pass,
		"replay/after-reset":    scenarios.Pass,
		"replay/after-truncate": scenarios.Pass,
		"replay/after-hold":     scenarios.Pass,
		"replay/lost-twice":     scenarios.Pass,
		"replay/fidelity-body":  scenarios.Pass,
		// A repeat while the original runs is refused with -32010; one refund.
		"race/concurrent-pair":          scenarios.Pass,
		"race/burst-50":                 scenarios.Pass,
		"race/duplicate-sequential":     scenarios.Pass,
		"race/duplicate-concurrent":     scenarios.Pass,
		"race/in-flight-409":            scenarios.Pass,
		"race/in-flight-not-fabricated": scenarios.Pass,
		"race/in-flight-other-payload":  scenarios.Pass,
		// The refusal's data says retry_after_ms, where the profile's in_flight rule
		// declares it (retry_after): the JSON-RPC error's own Retry-After.
		"race/in-flight-retry-after": scenarios.Pass,
		// A fingerprint of the decoded arguments: another payload is -32011, respellings
		// of the same JSON are the same request.
		"fingerprint/mismatch":         scenarios.Pass,
		"fingerprint/mismatch-repeat":  scenarios.Pass,
		"fingerprint/original-intact":  scenarios.Pass,
		"fingerprint/json-key-order":   scenarios.Info,
		"fingerprint/json-whitespace":  scenarios.Info,
		"fingerprint/number-spelling":  scenarios.Info,
		"fingerprint/unrelated-header": scenarios.Info,
		// Keys are required and checked before anything is stored.
		"key/missing":       scenarios.Pass,
		"key/empty":         scenarios.Pass,
		"key/over-length":   scenarios.Pass,
		"key/max-length":    scenarios.Pass,
		"key/control-chars": scenarios.Pass,
		"key/header-case":   scenarios.NA, // the key is in the body
		// Nothing stored for a failure or an invalid request; a declined refund is stored.
		"storage/5xx-not-pinned":        scenarios.Pass,
		"storage/validation-not-stored": scenarios.Pass,
		"storage/business-4xx":          scenarios.Info,
		"expiry/inside-window":          scenarios.Pass,
		"expiry/after-window":           scenarios.Pass,
		// Not declared by the profile: one principal, one tool, no crash hook, no marker.
		"scope/other-principal":    scenarios.NA,
		"scope/other-endpoint":     scenarios.NA,
		"recovery/crash-after-key": scenarios.NA,
		"replay/marker":            scenarios.NA,
	}
	scenariotest.RequireVerdicts(t, profile, want)
}
