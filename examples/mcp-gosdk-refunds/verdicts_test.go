package main

import (
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/examples/mcp-gosdk-refunds/refunds"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/scenarios/scenariotest"
	"github.com/idemproof/idemproof/verdict"
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
	prof, err := profile.Load("profile.yaml")
	require.NoError(t, err)

	want := map[string]verdict.Verdict{
		// The key is recorded before the work and the result stored: every lost answer
		// is recovered by the retry, with one refund.
		"before/503":            verdict.Pass,
		"before/reset":          verdict.Pass,
		"before/delay":          verdict.Pass,
		"replay/sequential":     verdict.Pass,
		"replay/after-502":      verdict.Pass,
		"replay/after-503":      verdict.Pass,
		"replay/after-504":      verdict.Pass,
		"replay/after-close":    verdict.Pass,
		"replay/after-reset":    verdict.Pass,
		"replay/after-truncate": verdict.Pass,
		"replay/after-hold":     verdict.Pass,
		"replay/lost-twice":     verdict.Pass,
		"replay/fidelity-body":  verdict.Pass,
		// A repeat while the original runs is refused with -32010; one refund.
		"race/concurrent-pair":          verdict.Pass,
		"race/burst-50":                 verdict.Pass,
		"race/duplicate-sequential":     verdict.Pass,
		"race/duplicate-concurrent":     verdict.Pass,
		"race/in-flight-409":            verdict.Pass,
		"race/in-flight-not-fabricated": verdict.Pass,
		"race/in-flight-other-payload":  verdict.Pass,
		// The refusal's data says retry_after_ms, where the profile's in_flight rule
		// declares it (retry_after): the JSON-RPC error's own Retry-After.
		"race/in-flight-retry-after": verdict.Pass,
		// A fingerprint of the decoded arguments: another payload is -32011, respellings
		// of the same JSON are the same request.
		"fingerprint/mismatch":         verdict.Pass,
		"fingerprint/mismatch-repeat":  verdict.Pass,
		"fingerprint/original-intact":  verdict.Pass,
		"fingerprint/json-key-order":   verdict.Info,
		"fingerprint/json-whitespace":  verdict.Info,
		"fingerprint/number-spelling":  verdict.Info,
		"fingerprint/unrelated-header": verdict.Info,
		// Keys are required and checked before anything is stored.
		"key/missing":       verdict.Pass,
		"key/empty":         verdict.Pass,
		"key/over-length":   verdict.Pass,
		"key/max-length":    verdict.Pass,
		"key/control-chars": verdict.Pass,
		"key/header-case":   verdict.NA, // the key is in the body
		// Nothing stored for a failure or an invalid request; a declined refund is stored.
		"storage/5xx-not-pinned":        verdict.Pass,
		"storage/validation-not-stored": verdict.Pass,
		"storage/business-4xx":          verdict.Info,
		"expiry/inside-window":          verdict.Pass,
		"expiry/after-window":           verdict.Pass,
		// Not declared by the profile: one principal, one tool, no crash hook, no marker.
		"scope/other-principal":    verdict.NA,
		"scope/other-endpoint":     verdict.NA,
		"recovery/crash-after-key": verdict.NA,
		"replay/marker":            verdict.NA,
	}
	scenariotest.RequireVerdicts(t, prof, want)
}
