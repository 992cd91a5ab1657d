package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/scenarios"
	"github.com/idemproof/idemproof/scenarios/scenariotest"
	"github.com/idemproof/idemproof/verdict"
)

// TestStdioVerdictsMatchTheServer runs idemproof's catalogue over stdio against this
// server, its keys and refunds in a state file (stdio-profile.yaml; the command is the
// built server rather than `go run`, so the run does not time its compiler): no FAIL, no
// UNKNOWN. Its keys survive the kill after the commit (replay/after-restart PASS), the
// hooks in _meta hold and fail the work (the race and storage scenarios PASS); what a
// line on a pipe cannot carry — a status, a header, a second principal, a second session
// — is N/A with its reason.
func TestStdioVerdictsMatchTheServer(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "mcp-gosdk-refunds")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	prof, err := profile.Load("stdio-profile.yaml")
	require.NoError(t, err)
	prof.MCP.Command = []string{bin, "-stdio", "-retention", "10s", "-state", filepath.Join(t.TempDir(), "state.json")}

	want := map[string]verdict.Verdict{
		// Every lost answer a pipe can lose is recovered by the retry, one refund.
		"before/reset":          verdict.Pass, // the request line dropped before the server read it
		"replay/sequential":     verdict.Pass,
		"replay/after-close":    verdict.Pass, // the answer line dropped
		"replay/after-reset":    verdict.Pass,
		"replay/after-truncate": verdict.Pass, // the answer line cut, not JSON
		"replay/after-hold":     verdict.Pass,
		"replay/lost-twice":     verdict.Pass,
		// The process killed right after it committed; the keys were in the file.
		"replay/after-restart": verdict.Pass,
		// A status has no line to be.
		"replay/after-503":     verdict.NA,
		"replay/fidelity-body": verdict.NA,
		"before/503":           verdict.NA,
		// The original held by the slow hook in _meta (slow_operation's field form): a
		// repeat during it is refused in flight; failed by the fail hook in _meta, it is
		// not stored.
		"race/in-flight-409":            verdict.Pass,
		"race/concurrent-pair":          verdict.Pass,
		"race/in-flight-original-fails": verdict.Pass,
		"storage/5xx-not-pinned":        verdict.Pass,
		"recovery/client-gave-up":       verdict.Pass,
		// A copy of the request line under an id of the layer's own.
		"race/duplicate-sequential":     verdict.Pass,
		"race/burst-50":                 verdict.Pass,
		"fingerprint/mismatch":          verdict.Pass,
		"fingerprint/original-intact":   verdict.Pass,
		"fingerprint/json-whitespace":   verdict.Info, // the line breaks of the respelling are spaces on a pipe
		"fingerprint/unrelated-header":  verdict.NA,
		"key/missing":                   verdict.Pass,
		"key/empty":                     verdict.Pass,
		"key/control-chars":             verdict.Pass,
		"storage/validation-not-stored": verdict.Pass,
		"storage/business-4xx":          verdict.Info,
		"expiry/inside-window":          verdict.Pass,
		"expiry/after-window":           verdict.Pass,
		"replay/new-session":            verdict.NA, // a session is the process
		"scope/other-principal":         verdict.NA,
	}
	// The whole catalogue, as `idemproof check --profile stdio-profile.yaml` runs it.
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cfg := scenarios.RunConfig{Profiles: []*profile.Profile{prof}, Seed: 1}
	rep, err := scenarios.Run(ctx, cfg)
	require.NoError(t, err)
	require.True(t, rep.Complete)
	// One pipe carries every call: on a loaded machine a scenario may run past its window
	// (UNKNOWN, rightly); it is asked once more, alone.
	notes, err := scenariotest.SecondLook(ctx, cfg, rep, nil)
	for _, n := range notes {
		t.Log(n)
	}
	require.NoError(t, err)
	for _, r := range rep.Results {
		require.NotContains(t, []verdict.Verdict{verdict.Fail, verdict.Unknown, verdict.NonStrict}, r.Verdict, "%s: %s", r.ScenarioID, r.Message)
		if v, ok := want[r.ScenarioID]; ok {
			require.Equal(t, v, r.Verdict, "%s: %s", r.ScenarioID, r.Message)
		}
	}
}
