package scenarios_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/scenarios"
	"github.com/idemproof/idemproof/verdict"
)

// A repeat late in the window that executed again, answered after the declared
// retention (1 s in refProfile) on a loaded machine, may have come after it, where a new
// execution is allowed: UNKNOWN. The follow-up sent right after tells: a record that
// still answers with the original's response after the repeat executed had not expired
// (records do not come back), so the repeat executed while the key was held.
func TestExpiryFollowUpTellsExpiredFromExecutedWhileHeld(t *testing.T) {
	t.Parallel()
	p := refProfile(t)
	first, anew := `{"id":"re_1"}`, `{"id":"re_2"}`
	record := func(followUp string) verdict.Record {
		return newHistory().at(0, "original", verdict.OpOK, 201, first, nil).
			span(750, 1500, "repeat", verdict.OpOK, 201, anew, nil).
			at(1510, scenarios.FollowUpStep, verdict.OpOK, 201, followUp, map[string]string{"Idempotent-Replayed": "true"}).record(2)
	}
	for _, id := range []string{"expiry/inside-window", "expiry/not-evicted"} {
		v, msg, ev := judgeWith(t, id, record(first), p)
		require.Equal(t, verdict.Fail, v, "%s: %s", id, msg)
		require.Contains(t, msg, "the follow-up", id)
		require.Equal(t, 1, ev.Categories[verdict.CatDuplicated], id)

		// The follow-up replays the repeat's own response: the original's record may
		// have expired before the repeat came.
		v, msg, _ = judgeWith(t, id, record(anew), p)
		require.Equal(t, verdict.Unknown, v, "%s: %s", id, msg)
	}
}
