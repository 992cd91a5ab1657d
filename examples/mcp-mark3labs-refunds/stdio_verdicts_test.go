package main

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/scenarios/scenariotest"
	"github.com/idemproof/idemproof/verdict"
)

// TestStdioVerdictsFindTheDefects runs idemproof's catalogue over stdio against this
// naive server (stdio-profile.yaml; the command is the built server rather than `go
// run`): its defects FAIL by name — the cache that forgets everything with its process
// among them, which the profile declares durable, and the repeats during an original the
// slow hook in _meta holds — and the sequential paths pass.
func TestStdioVerdictsFindTheDefects(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "mcp-mark3labs-refunds")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	prof, err := profile.Load("stdio-profile.yaml")
	require.NoError(t, err)
	prof.MCP.Command = []string{bin, "-stdio", "-retention", "10s"}

	want := map[string]verdict.Verdict{
		// A repeat after the original completed finds the cached result: lost answer
		// lines are recovered.
		"replay/sequential":     verdict.Pass,
		"replay/after-close":    verdict.Pass,
		"replay/after-reset":    verdict.Pass,
		"replay/after-truncate": verdict.Pass,
		"replay/lost-twice":     verdict.Pass,
		"before/reset":          verdict.Pass,
		// The cache lives in the process: killed right after the commit and started
		// again, the server refunds the retry again, while the profile declares its keys
		// durable.
		"replay/after-restart": verdict.Fail,
		// Nothing marks the key before the work (300–500 ms): concurrent repeats all
		// execute, and the layer's second copy of a request line too. The slow hook in
		// _meta (slow_operation's field form) holds the original, so a repeat during it
		// executes again by name.
		"race/burst-50":                verdict.Fail,
		"race/concurrent-pair":         verdict.Fail,
		"race/duplicate-concurrent":    verdict.Fail,
		"race/in-flight-409":           verdict.Fail,
		"race/in-flight-other-payload": verdict.Fail,
		// No fingerprint: another payload under the key is answered with the original.
		"fingerprint/mismatch":        verdict.Fail,
		"fingerprint/mismatch-repeat": verdict.Fail,
		// Whatever the tool answered is cached, a refused invalid request included.
		"storage/validation-not-stored": verdict.Fail,
		// No key checks.
		"key/empty":       verdict.NonStrict,
		"key/over-length": verdict.NonStrict,
		// What a line cannot carry.
		"replay/after-503":      verdict.NA,
		"scope/other-principal": verdict.NA,
		"replay/new-session":    verdict.NA,
	}
	scenariotest.RequireVerdicts(t, prof, want)
}
