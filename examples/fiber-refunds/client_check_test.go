package main

import (
	"context"
	"io"
	"net"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/clientcheck"
	"github.com/idemproof/idemproof/profile"
)

// TestClientCheckAgainstThisServer is the README's client-check section run against
// this server through its profile: the correct shell client passes, the one that mints a
// key per attempt is caught, twice against the same running server (each run counts
// only its own effects).
func TestClientCheckAgainstThisServer(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed: the example shell clients need it")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	app := newApp(time.Minute, false)
	go app.Listener(ln) //nolint:errcheck // ends with Shutdown below
	t.Cleanup(func() { _ = app.Shutdown() })
	t.Setenv("FIBER_BASE_URL", "http://"+ln.Addr().String())
	prof, err := profile.Load("profile.yaml")
	require.NoError(t, err)

	run := func(script string) *clientcheck.Result {
		res, err := clientcheck.Run(context.Background(), clientcheck.Config{Profile: prof, Seed: 1, Timeout: time.Minute},
			clientcheck.Command([]string{script}, io.Discard, io.Discard))
		require.NoError(t, err)
		return res
	}
	for range 2 {
		good := run("../clients/good.sh")
		require.NoError(t, good.Err())
		require.Equal(t, map[string]int{"order-1": 1, "order-2": 1, "order-3": 1}, good.Observation.Ledger)

		bad := run("../clients/key-per-attempt.sh")
		failed := map[string]bool{}
		for _, f := range bad.Findings() {
			failed[f.ScenarioID] = true
		}
		require.True(t, failed[clientcheck.IDKeyPerAttempt], bad.Err())
		require.True(t, failed[clientcheck.IDOneEffect], bad.Err())
	}
}
