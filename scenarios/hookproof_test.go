package scenarios_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/scenarios"
	"github.com/idemproof/idemproof/verdict"
)

// crashProfile is the fake's profile with a crash hook declared (the fake implements
// none) and a lock timeout.
func crashProfile(t *testing.T, base string) *profile.Profile {
	t.Helper()
	p := fakeProfile(t, base)
	p.Crash = &profile.CrashHook{Header: "X-Test-Crash", AfterKey: "after-key", AfterCommit: "after-commit"}
	p.LockTimeout = profile.Duration(500 * time.Millisecond)
	return p
}

// A profile declares a crash hook the target does not implement: the hooked original
// is answered 201 and delivered. Nothing crashed, so the crash scenarios prove nothing,
// whatever the retry then got: never a PASS, even without the preflight's hook proof.
func TestCrashScenariosNeverPassWhenNothingCrashed(t *testing.T) {
	t.Parallel()
	p := crashProfile(t, startFake(t, &fakeRefunds{}))
	got := runOn(t, p, "recovery/crash-after-key", "recovery/crash-after-commit")
	for _, id := range []string{"recovery/crash-after-key", "recovery/crash-after-commit"} {
		r := got[id]
		require.Equal(t, verdict.Unknown, r.Verdict, "%s: %s", id, r.Message)
		require.Contains(t, r.Message, "did not act", id)
		require.Contains(t, r.Message, "answered 201", id)
	}
}

// The preflight proves every hook the selected scenarios use before any of them runs: a
// crash hook the target does not implement stops the run, naming the hook and what was
// seen; with --unproven-hooks na its scenarios are N/A, naming it, and the rest run.
func TestAHookThatDoesNotActStopsTheRunOrMakesItsScenariosNA(t *testing.T) {
	t.Parallel()
	p := crashProfile(t, startFake(t, &fakeRefunds{}))
	only := []string{"recovery/crash-after-key", "recovery/crash-after-commit", "race/concurrent-pair", "replay/sequential"}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	_, err := scenarios.Run(ctx, scenarios.RunConfig{Profiles: []*profile.Profile{p}, Only: only, Seed: 1})
	var pe *scenarios.PreflightError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, "crash.after_key", pe.Field, pe.Msg)
	require.Contains(t, pe.Msg, "crash.after_key did not act")
	require.Contains(t, pe.Msg, "answered 201 by the target and delivered")
	require.Contains(t, pe.Msg, "--unproven-hooks na")

	rep, err := scenarios.Run(ctx, scenarios.RunConfig{Profiles: []*profile.Profile{p}, Only: only, Seed: 1, UnprovenHooks: scenarios.UnprovenHooksNA})
	require.NoError(t, err)
	got := map[string]verdict.Result{}
	for _, r := range rep.Results {
		got[r.ScenarioID] = r
	}
	for _, id := range []string{"recovery/crash-after-key", "recovery/crash-after-commit"} {
		require.Equal(t, verdict.NA, got[id].Verdict, "%s: %s", id, got[id].Message)
		require.Contains(t, got[id].Message, "crash.after_", id)
		require.Contains(t, got[id].Message, "did not in the preflight", id)
	}
	require.Equal(t, verdict.Pass, got["race/concurrent-pair"].Verdict, "the slow hook acted: %s", got["race/concurrent-pair"].Message)
	require.Equal(t, verdict.Pass, got["replay/sequential"].Verdict, got["replay/sequential"].Message)
}

// A slow hook the target ignores, and a fail hook answered with another status than the
// declared one, each stop the run naming the hook.
func TestHooksAreProvenAgainstWhatTheyDeclare(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	base := startFake(t, &fakeRefunds{pathHooks: true})

	ignored := fakeProfile(t, base)
	ignored.Slow.Header = "X-Ignored"
	_, err := scenarios.ProveHooks(ctx, ignored, scenarios.Catalogue(), scenarios.UnprovenHooksStop)
	var pe *scenarios.PreflightError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, "slow_operation", pe.Field)
	require.Contains(t, pe.Msg, "slow_operation declares a hold of 400ms (at least 200ms expected)")

	other := fakeProfile(t, base)
	other.FailHook = &profile.TestHook{Path: "/status/500", Value: "503"}
	_, err = scenarios.ProveHooks(ctx, other, scenarios.Catalogue(), scenarios.UnprovenHooksStop)
	require.ErrorAs(t, err, &pe)
	require.Equal(t, "fail_operation", pe.Field)
	require.Contains(t, pe.Msg, "the hook asks for 503")

	proof, err := scenarios.ProveHooks(ctx, fakeProfile(t, base), scenarios.Catalogue(), scenarios.UnprovenHooksStop)
	require.NoError(t, err)
	require.Len(t, proof.Checks, 1)
	require.True(t, proof.Checks[0].Acted, proof.Checks[0].Seen)
	require.Contains(t, proof.Checks[0].Seen, "held the work")
	require.Empty(t, proof.Checks[0].OtherOperation, "the header form keeps the request")
}

// Hooks declared in the path form on a middleware that scopes keys by method and path:
// the hooked original goes to another endpoint, where the same key is another operation,
// and the scenarios that compare it with plain retries would FAIL a correct target. The
// preflight sends one key plain and hooked and tells: those scenarios are UNKNOWN, saying
// so.
func TestPathFormHooksThatAreAnotherOperationMakeTheirScenariosUnknown(t *testing.T) {
	t.Parallel()
	p := fakeProfile(t, startFake(t, &fakeRefunds{pathHooks: true}))
	p.Slow = &profile.TestHook{Path: "/slow?ms={{.HoldMs}}", Hold: profile.Duration(400 * time.Millisecond)}
	p.FailHook = &profile.TestHook{Path: "/status/{{.Value}}", Value: "503"}
	only := []string{"race/in-flight-409", "race/concurrent-pair", "storage/5xx-not-pinned"}

	// Taken as declared (no proof), the race scenarios FAIL the correct target, and
	// storage/5xx-not-pinned judges a failure of another operation than its retry's.
	unproven := runOn(t, p, only...)
	require.Equal(t, verdict.Fail, unproven["race/in-flight-409"].Verdict, unproven["race/in-flight-409"].Message)
	require.Equal(t, verdict.Fail, unproven["race/concurrent-pair"].Verdict, unproven["race/concurrent-pair"].Message)
	require.NotEqual(t, verdict.Unknown, unproven["storage/5xx-not-pinned"].Verdict, unproven["storage/5xx-not-pinned"].Message)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, err := scenarios.Run(ctx, scenarios.RunConfig{Profiles: []*profile.Profile{p}, Only: only, Seed: 1})
	require.NoError(t, err)
	require.Len(t, rep.Results, 3)
	for _, r := range rep.Results {
		t.Logf("%s %s: %s", r.ScenarioID, r.Verdict, r.Message)
		require.Equal(t, verdict.Unknown, r.Verdict, "%s: %s", r.ScenarioID, r.Message)
		require.Contains(t, r.Message, "takes for another operation than POST /v1/refunds", r.ScenarioID)
		require.Contains(t, r.Message, "declare the hook in the header form", r.ScenarioID)
	}
}

// A target that fails every request with the proof's key shape (a 500 for any key that
// is not a UUID) fails the hooked request and the plain one alike: whether the hook acts
// cannot be told there, and that is no reason to stop the run (key/valid-never-5xx
// judges the 500s).
func TestAHookTheOperationItselfFailsIsUntoldNotUnproven(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p := crashProfile(t, startFake(t, &fakeRefunds{uuidOnly: true, uuid500: true}))
	proof, err := scenarios.ProveHooks(ctx, p, scenarios.Catalogue(), scenarios.UnprovenHooksStop)
	require.NoError(t, err)
	require.Len(t, proof.Checks, 3, "slow_operation, crash.after_key, crash.after_commit")
	for _, c := range proof.Checks {
		require.True(t, c.Untold, "%s: %s", c.Hook, c.Seen)
		require.Contains(t, c.Seen, "the operation sent plain, with a key of its own, was answered 500", c.Hook)
	}
	require.Len(t, proof.Notes(), 3)
}

// A key store that mixes keys up (keys of one length share a record, as keys aliased on
// a reused connection do) answers the proof's later fresh keys from an earlier one's
// record: that is the key handling answering, not a hook that does not act, and the run
// goes on (the scenarios judge the key handling).
func TestAFreshKeyAnsweredAsAUsedOneIsNoHookFailure(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p := crashProfile(t, startFake(t, &fakeRefunds{aliasByLength: true}))
	proof, err := scenarios.ProveHooks(ctx, p, scenarios.Catalogue(), scenarios.UnprovenHooksStop)
	require.NoError(t, err)
	require.Len(t, proof.Checks, 3)
	require.True(t, proof.Checks[0].Acted, "the first key met no other: %s", proof.Checks[0].Seen)
	for _, c := range proof.Checks[1:] {
		require.True(t, c.Untold, "%s: %s", c.Hook, c.Seen)
		require.Contains(t, c.Seen, "the target's key handling answered, not the hook", c.Hook)
		require.Contains(t, c.Seen, "cannot be told here", c.Hook)
	}
}

// A crash behind a gateway: the target drops the connection and the gateway in front
// answers 502. That is no answer of the target's: the crash acted.
func TestACrashAGatewayAnswersFor(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	fake := &fakeRefunds{}
	startFake(t, fake)
	gateway := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Test-Crash") != "" {
			http.Error(w, "<html>502 Bad Gateway</html>", http.StatusBadGateway)
			return
		}
		fake.ServeHTTP(w, r)
	}))
	t.Cleanup(gateway.Close)
	proof, err := scenarios.ProveHooks(ctx, crashProfile(t, gateway.URL), scenarios.Catalogue(), scenarios.UnprovenHooksStop)
	require.NoError(t, err)
	for _, c := range proof.Checks {
		require.True(t, c.Acted, "%s: %s", c.Hook, c.Seen)
	}
}

// hangsFirstFailures holds the first n requests on the failure hook's path until the
// test ends (their client has long given up), and serves the rest.
type hangsFirstFailures struct {
	next    http.Handler
	release chan struct{} // closed when the test ends: the proxy lets an abandoned request run on
	mu      sync.Mutex
	n       int
}

func (h *hangsFirstFailures) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/status/") {
		h.mu.Lock()
		hang := h.n > 0
		h.n--
		h.mu.Unlock()
		if hang {
			<-h.release
			return
		}
	}
	h.next.ServeHTTP(w, r)
}

// A failure hook's request that got no answer (a loaded machine timed it out) shows
// nothing of the hook: it is sent again, and a hook never seen answering is untold (the
// run goes on, the scenarios' own checks judge it), never a hook that did not act.
func TestAFailureHookNeverAnsweredIsUntoldNotUnproven(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		hangs int
		acted bool
	}{{hangs: 1, acted: true}, {hangs: 99, acted: false}} {
		fake := &fakeRefunds{pathHooks: true}
		startFake(t, fake)
		release := make(chan struct{})
		srv := httptest.NewServer(&hangsFirstFailures{next: fake, release: release, n: tc.hangs})
		t.Cleanup(srv.Close)
		t.Cleanup(func() { close(release) }) // runs first: the held requests end before the server closes
		p := fakeProfile(t, srv.URL)
		p.Slow = nil
		p.FailHook = &profile.TestHook{Path: "/status/{{.Value}}", Value: "503"}
		p.ClientTimeout = profile.Duration(300 * time.Millisecond)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		proof, err := scenarios.ProveHooks(ctx, p, scenarios.Catalogue(), scenarios.UnprovenHooksStop)
		cancel()
		require.NoError(t, err, "hangs %d", tc.hangs)
		require.Len(t, proof.Checks, 1)
		c := proof.Checks[0]
		require.Equal(t, "fail_operation", c.Hook)
		if tc.acted {
			require.True(t, c.Acted, c.Seen)
			require.Contains(t, c.Seen, "failed the work: 503")
			continue
		}
		require.False(t, c.Acted, c.Seen)
		require.True(t, c.Untold, c.Seen)
		require.Contains(t, c.Seen, "in each of 3 tries: no answer was seen")
	}
}
