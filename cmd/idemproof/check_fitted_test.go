package main_test

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/reference"
)

// A target whose declared retention is too short for a scenario's own timing: the
// preflight says how the scenario is fitted to it (stderr), the scenario runs fitted and
// its message ends with what was changed.
func TestCheckSaysHowAScenarioWasFittedToTheTarget(t *testing.T) {
	srv, err := reference.New(reference.WithTestHooks(true), reference.WithRetention(2*time.Second))
	require.NoError(t, err)
	t.Cleanup(func() { srv.Close() })
	ref := httptest.NewServer(srv)
	t.Cleanup(ref.Close)
	path := writeProfile(t, "short-window", "base_url: "+ref.URL+"\nretention: 2s\n") // client_timeout 1s

	out, errOut, code := runCLI(t, "check", "--profile", path, "--only", "recovery/client-gave-up")
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, errOut)
	require.Contains(t, errOut, "idemproof check: preflight target short-window: fitted: recovery/client-gave-up: the held original's client timeout is")
	require.Contains(t, errOut, "not client_timeout 1s")
	require.Regexp(t, `(?m)^PASS\s+recovery/client-gave-up\s`, out)
	require.Contains(t, out, "[fitted to the target:")
}
