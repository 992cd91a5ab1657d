package scenarios_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/verdict"
)

// A middleware with no idempotency at all: every repeat executes again. The replay
// checks read the ledger before anything else, so a check about what a replay carries
// never passes where nothing was replayed.
func TestReplayChecksNeverPassWithoutAReplay(t *testing.T) {
	t.Parallel()
	p := fakeProfile(t, startFake(t, &fakeRefunds{broken: true}))
	p.Expect.ReplayHeaders = []string{"Content-Type"}
	got := runOn(t, p, "replay/fidelity-headers", "replay/marker")
	for _, id := range []string{"replay/fidelity-headers", "replay/marker"} {
		r := got[id]
		require.Equal(t, verdict.Fail, r.Verdict, "%s: %s", id, r.Message)
		require.Contains(t, r.Message, "2 side effects for one key", id)
		require.Contains(t, r.Message, "nothing was replayed", id)
		require.Equal(t, 1, r.Evidence.Categories[verdict.CatDuplicated], id)
	}
}
