package scenarios_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/verdict"
)

// noSlowHook serves a fake that never sees the slow hook: the target applies no hold.
type noSlowHook struct{ next http.Handler }

func (h noSlowHook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	r.Header.Del("X-Test-Delay")
	h.next.ServeHTTP(w, r)
}

// race/duplicate-concurrent holds the work with the slow hook so the two copies meet at
// the target; a target that does not apply the hook answers the first copy before the
// second arrives, and a check-then-set server would pass the same way: UNKNOWN, naming
// the hook, never a PASS.
func TestDuplicateConcurrentNeedsTheCopiesHeldTogether(t *testing.T) {
	t.Parallel()
	fake := &fakeRefunds{}
	startFake(t, fake)
	srv := httptest.NewServer(noSlowHook{fake})
	t.Cleanup(srv.Close)
	// Taken as declared (the preflight's hook proof would stop this run): the checker
	// looks for the hold in the scenario's own journal.
	r := runOn(t, patientProfile(t, srv.URL), "race/duplicate-concurrent")["race/duplicate-concurrent"]
	if r.Verdict == verdict.Pass {
		// A loaded machine can still bring the two copies to the target together
		// without a hold; a PASS then stands only on its own proof, the copy refused
		// as in flight, never on the hold the target did not apply.
		require.Contains(t, r.Message, "the copies met at the target (one was refused in flight)")
	} else {
		require.Equal(t, verdict.Unknown, r.Verdict, r.Message)
		require.Contains(t, r.Message, "the slow hook did not hold the duplicated request")
	}

	held := runFake(t, patientProfile(t, startFake(t, &fakeRefunds{})), "race/duplicate-concurrent").Results[0]
	require.Equal(t, verdict.Pass, held.Verdict, held.Message)
	require.Contains(t, held.Message, "the copies met at the target")
}
