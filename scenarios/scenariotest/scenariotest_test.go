package scenariotest_test

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/reference"
	"github.com/idemproof/idemproof/scenarios"
	"github.com/idemproof/idemproof/scenarios/scenariotest"
)

// referenceHandler is the reference server with the given flaws, configured as its
// built-in profile declares, and that profile.
func referenceHandler(t *testing.T, flaws ...string) (*reference.Server, *profile.Profile) {
	t.Helper()
	p, err := profile.Builtin("reference")
	require.NoError(t, err)
	opts := []reference.Option{reference.WithTestHooks(true),
		reference.WithRetention(time.Duration(p.Retention)), reference.WithLockTimeout(time.Duration(p.LockTimeout))}
	if len(flaws) > 0 {
		opts = append(opts, reference.WithFlaws(flaws...))
	}
	srv, err := reference.New(opts...)
	require.NoError(t, err)
	t.Cleanup(func() { srv.Close() })
	return srv, p
}

// childEnv marks the test binary run by TestRunT... as the child that runs RunT against
// a flawed handler; in the normal run TestRunTAgainstAFlawedHandler skips.
const childEnv = "IDEMPROOF_SCENARIOTEST_CHILD"

// TestRunTAgainstAFlawedHandler is what a team's test looks like; it runs only inside
// the child process, where its failing subtests are the point.
func TestRunTAgainstAFlawedHandler(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		t.Skip("run by TestRunTOneSubtestPerScenario in a child process")
	}
	srv, p := referenceHandler(t, "no-fingerprint")
	prof, stop := scenariotest.HandlerTarget(srv, p)
	defer stop()
	scenariotest.RunT(t, prof, scenarios.Only("fingerprint/*", "replay/sequential", "recovery/crash-after-key"))
}

// child runs the flawed test in a child process with extra -test flags.
func child(t *testing.T, args ...string) (string, int) {
	t.Helper()
	return childWithEnv(t, nil, args...)
}

// childWithEnv is child with extra environment variables (NAME=value).
func childWithEnv(t *testing.T, env []string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestRunTAgainstAFlawedHandler$", "-test.v", "-test.count=1"}, args...)...)
	cmd.Env = append(append(os.Environ(), childEnv+"=1"), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if exit, ok := err.(*exec.ExitError); ok {
		return out.String(), exit.ExitCode()
	}
	require.NoError(t, err)
	return out.String(), 0
}

var subtestResult = regexp.MustCompile(`(?m)^\s*--- (PASS|FAIL|SKIP): TestRunTAgainstAFlawedHandler/(\S+)`)

func TestRunTOneSubtestPerScenario(t *testing.T) {
	out, code := child(t)
	require.Equal(t, 1, code, out)
	got := map[string]string{}
	for _, m := range subtestResult.FindAllStringSubmatch(out, -1) {
		got[m[2]] = m[1]
	}
	want, err := scenarios.Select([]string{"fingerprint/*", "replay/sequential", "recovery/crash-after-key"}, nil)
	require.NoError(t, err)
	require.Len(t, got, len(want), "one subtest per scenario:\n%s", out)
	for _, s := range want {
		require.Contains(t, got, s.ID, "subtest named by the scenario ID")
	}
	require.Equal(t, "FAIL", got["fingerprint/mismatch"], "the flaw's scenario fails")
	require.Equal(t, "PASS", got["replay/sequential"])
	require.Equal(t, "PASS", got["recovery/crash-after-key"])

	// The failure message carries the evidence, the timeline and the repeat command:
	// the go test command of that subtest, with the run's seed.
	require.Contains(t, out, "FAIL fingerprint/mismatch @ reference: ")
	require.Contains(t, out, "requirement: ")
	require.Contains(t, out, "proxy journal (ground truth, in arrival order):")
	repeat := repeatLine.FindStringSubmatch(out)
	require.NotNil(t, repeat, "a go test repeat line:\n%s", out)
	require.Equal(t, "./scenarios/scenariotest", repeat[2], "the package, from the module root")
	require.Equal(t, "^TestRunTAgainstAFlawedHandler$/^fingerprint$/^mismatch$", repeat[3])

	// Run as printed (its -run pattern and seed), it runs that subtest alone.
	again, code := childWithEnv(t, []string{scenariotest.SeedEnv + "=" + repeat[1]}, "-test.run="+repeat[3])
	require.Equal(t, 1, code, again)
	matches := subtestResult.FindAllStringSubmatch(again, -1)
	require.Len(t, matches, 1, again)
	require.Equal(t, []string{"FAIL", "fingerprint/mismatch"}, matches[0][1:])
	require.Contains(t, again, "seed "+repeat[1], "the seed the repeat line names")
}

// repeatLine is the repeat line of a RunT failure: seed, package, -run pattern.
var repeatLine = regexp.MustCompile(`repeat: IDEMPROOF_SEED=(-?\d+) go test (\S+) -run '([^']+)'`)

func TestRunTFiltersByScenarioIDWithRun(t *testing.T) {
	out, code := child(t, "-test.run=^TestRunTAgainstAFlawedHandler$/^replay$/^sequential$")
	require.Equal(t, 0, code, out)
	matches := subtestResult.FindAllStringSubmatch(out, -1)
	require.Len(t, matches, 1, out)
	require.Equal(t, []string{"PASS", "replay/sequential"}, matches[0][1:])
	require.False(t, strings.Contains(out, "fingerprint/"), "the other scenarios did not run")
	require.Contains(t, out, "idemproof: 1 scenario(s) against reference", "only the subtest -run chose was run")
}

// preflightCounter counts the preflights a handler receives (the runner's preflight
// sends its one operation for an entity named ip-preflight-…).
type preflightCounter struct {
	h http.Handler
	n atomic.Int32
}

func (c *preflightCounter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost && r.Body != nil {
		body, _ := io.ReadAll(r.Body)
		if bytes.Contains(body, []byte("ip-preflight-")) {
			c.n.Add(1)
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	c.h.ServeHTTP(w, r)
}

// RunT runs its scenarios as the CLI does, in one run (one preflight, one proxy, one
// late ledger read, several scenarios at once), not one run per subtest.
func TestRunTRunsTheSelectionAsOneRun(t *testing.T) {
	t.Parallel()
	srv, p := referenceHandler(t)
	counter := &preflightCounter{h: srv}
	prof, stop := scenariotest.HandlerTarget(counter, p)
	defer stop()
	scenariotest.RunT(t, prof, scenarios.Only("replay/sequential", "replay/after-503", "key/missing", "replay/new-session")) // N/A included
	require.EqualValues(t, 1, counter.n.Load(), "one preflight for the whole selection")
}

func TestHandlerTargetServesTheHandler(t *testing.T) {
	srv, p := referenceHandler(t)
	prof, stop := scenariotest.HandlerTarget(srv, p)
	require.NotEqual(t, p.BaseURL, prof.BaseURL, "a copy, pointing at the test server")
	require.Regexp(t, `^http://127\.0\.0\.1:\d+$`, prof.BaseURL)
	err := scenarios.Check(t.Context(), prof, scenarios.Only("replay/after-503", "key/missing"))
	require.NoError(t, err)
	stop()
	require.Error(t, scenarios.Check(t.Context(), prof, scenarios.Only("replay/sequential")), "stopped: nothing answers")
}

// ExampleRunT's test, run: the whole catalogue against the reference built as the
// example builds it, every subtest passing (the windows of its profile kept, so no
// expiry or recovery scenario is judged against another window).
func TestExampleRunTIsClean(t *testing.T) {
	t.Parallel()
	testRefunds(t)
}
