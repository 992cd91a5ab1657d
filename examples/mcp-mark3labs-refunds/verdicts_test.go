package main

import (
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/scenarios"
	"github.com/idemproof/idemproof/scenarios/scenariotest"
)

// TestVerdictsFindTheDefects runs idemproof's catalogue over MCP against this naive
// server and pins what its defects (refunds.go's package doc, README.md) break. The
// sequential paths pass — that is why such code ships — and every concurrent or
// changed-payload repeat fails.
func TestVerdictsFindTheDefects(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: NewApp(Config{Retention: 3 * time.Second}).Handler(), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln) //nolint:errcheck // ends with Close below
	t.Cleanup(func() { srv.Close() })

	t.Setenv("MCP_MARK3LABS_BASE_URL", "http://"+ln.Addr().String())
	profile, err := scenarios.LoadProfile("profile.yaml")
	require.NoError(t, err)

	want := map[string]scenarios.Verdict{
		// A repeat after the original completed finds the cached result.
		"before/503":                scenarios.Pass,
		"replay/sequential":         scenarios.Pass,
		"replay/after-503":          scenarios.Pass,
		"replay/after-reset":        scenarios.Pass,
		"replay/after-hold":         scenarios.Pass,
		"replay/lost-twice":         scenarios.Pass,
		"replay/fidelity-body":      scenarios.Pass,
		"race/duplicate-sequential": scenarios.Pass,
		// Nothing marks the key before the work: concurrent repeats all execute.
		"race/concurrent-pair":         scenarios.Fail,
		"race/burst-50":                scenarios.Fail,
		"race/duplicate-concurrent":    scenarios.Fail,
		"race/in-flight-409":           scenarios.Fail,
		"race/in-flight-other-payload": scenarios.Fail,
		// No fingerprint: another payload under the key is answered with the original.
		"fingerprint/mismatch":        scenarios.Fail,
		"fingerprint/mismatch-repeat": scenarios.Fail,
		"fingerprint/original-intact": scenarios.Pass,
		"fingerprint/json-key-order":  scenarios.Info,
		// Whatever the tool answered is cached, a refused invalid request included.
		"storage/validation-not-stored": scenarios.Fail,
		"storage/5xx-not-pinned":        scenarios.Pass, // a Go error is no result: nothing cached
		// No key checks: an empty key is no key, any other string is a key.
		"key/empty":            scenarios.NonStrict,
		"key/over-length":      scenarios.NonStrict,
		"key/control-chars":    scenarios.NonStrict,
		"key/max-length":       scenarios.Pass,
		"key/header-case":      scenarios.NA, // the key is in the body
		"expiry/inside-window": scenarios.Pass,
		"expiry/after-window":  scenarios.Pass,
		// Not declared by the profile.
		"scope/other-principal": scenarios.NA,
		"replay/marker":         scenarios.NA,
	}
	scenariotest.RequireVerdicts(t, profile, want)
}
