package scenarios_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/profile"
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
