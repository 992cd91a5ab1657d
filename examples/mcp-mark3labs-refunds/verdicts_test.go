package main

import (
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/scenarios/scenariotest"
	"github.com/idemproof/idemproof/verdict"
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
	prof, err := profile.Load("profile.yaml")
	require.NoError(t, err)

	want := map[string]verdict.Verdict{
		// A repeat after the original completed finds the cached result.
		"before/503":                verdict.Pass,
		"replay/sequential":         verdict.Pass,
		"replay/after-503":          verdict.Pass,
		"replay/after-reset":        verdict.Pass,
		"replay/after-hold":         verdict.Pass,
		"replay/lost-twice":         verdict.Pass,
		"replay/fidelity-body":      verdict.Pass,
		"race/duplicate-sequential": verdict.Pass,
		// Nothing marks the key before the work: concurrent repeats all execute.
		"race/concurrent-pair":         verdict.Fail,
		"race/burst-50":                verdict.Fail,
		"race/duplicate-concurrent":    verdict.Fail,
		"race/in-flight-409":           verdict.Fail,
		"race/in-flight-other-payload": verdict.Fail,
		// No fingerprint: another payload under the key is answered with the original.
		"fingerprint/mismatch":        verdict.Fail,
		"fingerprint/mismatch-repeat": verdict.Fail,
		"fingerprint/original-intact": verdict.Pass,
		"fingerprint/json-key-order":  verdict.Info,
		// Whatever the tool answered is cached, a refused invalid request included.
		"storage/validation-not-stored": verdict.Fail,
		"storage/5xx-not-pinned":        verdict.Pass, // a Go error is no result: nothing cached
		// No key checks: an empty key is no key, any other string is a key.
		"key/empty":            verdict.NonStrict,
		"key/over-length":      verdict.NonStrict,
		"key/control-chars":    verdict.NonStrict,
		"key/max-length":       verdict.Pass,
		"key/header-case":      verdict.NA, // the key is in the body
		"expiry/inside-window": verdict.Pass,
		"expiry/after-window":  verdict.Pass,
		// Not declared by the profile.
		"scope/other-principal": verdict.NA,
		"replay/marker":         verdict.NA,
	}
	scenariotest.RequireVerdicts(t, prof, want)
}
