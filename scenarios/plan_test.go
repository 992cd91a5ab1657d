package scenarios_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/scenarios"
)

// planNote is what PlanNotes says of one scenario ("" when it runs as written).
func planNote(t *testing.T, p *profile.Profile, pace scenarios.Pace, id string) string {
	t.Helper()
	sc, ok := scenarios.Lookup(id)
	require.True(t, ok, id)
	notes := scenarios.PlanNotes(p, pace, []scenarios.Scenario{sc}, scenarios.RunConfig{})
	require.LessOrEqual(t, len(notes), 1)
	if len(notes) == 0 {
		return ""
	}
	require.True(t, strings.HasPrefix(notes[0], id+": "), notes[0])
	return strings.TrimPrefix(notes[0], id+": ")
}

func reference(t *testing.T) *profile.Profile {
	t.Helper()
	p, err := profile.Builtin("reference")
	require.NoError(t, err)
	p.BaseURL = "http://127.0.0.1:8080" // whatever IDEMPROOF_BASE_URL says
	return p
}

// The embedded reference runs every scenario as written when it answers at once.
func TestTheReferenceRunsAsWritten(t *testing.T) {
	t.Parallel()
	p := reference(t)
	require.Empty(t, scenarios.PlanNotes(p, scenarios.Pace{}, scenarios.Catalogue(), scenarios.RunConfig{}))
	require.Empty(t, scenarios.PlanNotes(p, scenarios.Pace{Operation: 2 * time.Millisecond, Ledger: time.Millisecond}, scenarios.Catalogue(), scenarios.RunConfig{}))
}

// recovery/slow-past-lock holds its original 2 × lock_timeout: past a retention that
// leaves too little room, the hold is shortened while the takeover still meets it, and
// where even that cannot be, the scenario is N/A naming the numbers.
func TestSlowPastLockFitsTheRetention(t *testing.T) {
	t.Parallel()
	p := reference(t)
	p.LockTimeout, p.Retention = profile.Duration(600*time.Millisecond), profile.Duration(1400*time.Millisecond)
	note := planNote(t, p, scenarios.Pace{}, "recovery/slow-past-lock")
	require.Contains(t, note, "the original is held 1.12s, not 2 × lock_timeout 600ms = 1.2s")
	require.Contains(t, note, "inside retention 1.4s")

	p.LockTimeout, p.Retention = profile.Duration(400*time.Millisecond), profile.Duration(time.Second)
	note = planNote(t, p, scenarios.Pace{}, "recovery/slow-past-lock")
	require.True(t, strings.HasPrefix(note, "N/A, needs a retention long enough"), note)
	require.Contains(t, note, "lock_timeout 400ms")
	require.Contains(t, note, "retention 1s")

	p.Retention = profile.Duration(5 * time.Second)
	require.Empty(t, planNote(t, p, scenarios.Pace{}, "recovery/slow-past-lock"))
}

// A repeat sent a quarter into the slow hook's hold meets a lock that lock_timeout has
// already made stale: a correct target may take the key over, so the in-flight
// scenarios are N/A, naming both fields.
func TestAHoldWhoseQuarterOutlivesTheLockIsNA(t *testing.T) {
	t.Parallel()
	p := reference(t)
	p.Slow.Value = "2s"
	p.LockTimeout = profile.Duration(300 * time.Millisecond)
	p.Retention = profile.Duration(10 * time.Second)
	note := planNote(t, p, scenarios.Pace{}, "race/in-flight-409")
	require.True(t, strings.HasPrefix(note, "N/A, needs a repeat that meets a live lock"), note)
	require.Contains(t, note, "it is sent 500ms into slow_operation's 2s hold")
	require.Contains(t, note, "lock_timeout 300ms")
	require.Empty(t, planNote(t, p, scenarios.Pace{}, "race/concurrent-pair"), "both attempts at once meet a live lock")
	require.Empty(t, planNote(t, p, scenarios.Pace{}, "scope/other-principal-in-flight"), "another principal's key is its own")
}

// expiry/inside-window's repeat goes late in the window; a target whose answers take a
// good part of the margin gets it earlier, and the note says how long the key is shown
// to live.
func TestInsideWindowLeavesRoomForTheAnswer(t *testing.T) {
	t.Parallel()
	p := reference(t)
	p.Retention = profile.Duration(2 * time.Second)
	require.Empty(t, planNote(t, p, scenarios.Pace{Operation: 100 * time.Millisecond}, "expiry/inside-window"))
	note := planNote(t, p, scenarios.Pace{Operation: 400 * time.Millisecond}, "expiry/inside-window")
	require.Contains(t, note, "the repeat is sent 800ms before retention 2s ends, not 500ms")
	require.Contains(t, note, "the key is shown to live 1.2s")
}

// A target so slow that the keep-alive scenario's 800 requests would take past the most
// a scenario may take sends fewer keys, and the note says what that leaves unproven.
func TestAVerySlowTargetGetsFewerKeepAliveKeysAndIsToldSo(t *testing.T) {
	t.Parallel()
	p := reference(t)
	note := planNote(t, p, scenarios.Pace{Operation: 400 * time.Millisecond}, "race/keepalive-many-keys")
	require.Contains(t, note, "time limit")
	require.NotContains(t, note, "keys per route", "at 400 ms a request the 200 keys fit")

	note = planNote(t, p, scenarios.Pace{Operation: 2 * time.Second}, "race/keepalive-many-keys")
	require.Contains(t, note, "keys per route, not 200")
	require.Contains(t, note, "prove less")
}
