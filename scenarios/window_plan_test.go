package scenarios_test

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/verdict"
)

// A layer with a declared 2 s retention (a key lives from its first record), the default
// 2 s client_timeout and a 400 ms slow hook: recovery/client-gave-up as written holds the
// work 3 s and retries 3.75 s after the original, past the window, where a new execution
// is allowed, so a correct layer could only ever be UNKNOWN. Fitted to the window, the
// held original gets a shorter client timeout, the retry lands inside the retention, and
// the layer is judged: PASS when it carries on, FAIL when it forgets the key.
func TestClientGaveUpFitsTheDeclaredRetention(t *testing.T) {
	for _, tc := range []struct {
		onLeave string
		want    verdict.Verdict
		msg     string
	}{
		{"carry-on", verdict.Pass, "one side effect"},
		{"abandon", verdict.Pass, "one side effect"},
		{"forget-key", verdict.Fail, "2 side effects for one key"},
	} {
		t.Run(tc.onLeave, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(&disconnecting{onLeave: tc.onLeave, retention: 2 * time.Second, keys: map[string]*gaveUpEntry{}, ledger: map[string]int{}})
			t.Cleanup(srv.Close)
			p := fakeProfile(t, srv.URL) // client_timeout 2s, slow_operation 400ms
			p.Retention = profile.Duration(2 * time.Second)
			// With the preflight: the pace it measures on a loaded machine leaves the
			// retry's answer that much more room in the window.
			r := runPaced(t, p, 0, "recovery/client-gave-up")["recovery/client-gave-up"]
			require.Equal(t, tc.want, r.Verdict, r.Message)
			require.Contains(t, r.Message, tc.msg)
			plan := r.Evidence.Record.Plan
			require.NotNil(t, plan, r.Message)
			gaveUp := plan.GiveUpAfter()
			require.Less(t, gaveUp, 2*time.Second)
			require.GreaterOrEqual(t, gaveUp, 500*time.Millisecond)
			require.Contains(t, r.Message, "the client gave up after "+gaveUp.String()+" while the work was held")
			require.Contains(t, r.Message, "not client_timeout 2s", "what was fitted, and why, with the numbers")
			require.Contains(t, r.Message, "past retention 2s")
		})
	}
}

// A retention too short for any client timeout that still leaves the client at the
// target while it works: N/A before anything is sent, naming the fields and numbers.
func TestClientGaveUpThatCannotFitTheRetentionIsNA(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(&disconnecting{onLeave: "carry-on", retention: 900 * time.Millisecond, keys: map[string]*gaveUpEntry{}, ledger: map[string]int{}})
	t.Cleanup(srv.Close)
	p := fakeProfile(t, srv.URL)
	p.Retention = profile.Duration(900 * time.Millisecond)
	r := runOn(t, p, "recovery/client-gave-up")["recovery/client-gave-up"]
	require.Equal(t, verdict.NA, r.Verdict, r.Message)
	for _, want := range []string{"client_timeout 2s", "retention 900ms", "client timeout of 500ms"} {
		require.Contains(t, r.Message, want)
	}
	require.Nil(t, r.Evidence.Record, "nothing was sent")
}

// Without a declared retention nothing constrains the timing: the scenario runs as
// written (TestClientGaveUpJudgesWhatTheTargetDidWhenItsClientLeft), with no plan.
func TestAScenarioThatFitsRunsAsWritten(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(&disconnecting{onLeave: "carry-on", keys: map[string]*gaveUpEntry{}, ledger: map[string]int{}})
	t.Cleanup(srv.Close)
	p := fakeProfile(t, srv.URL)
	p.Retention = profile.Duration(10 * time.Second)
	r := runOn(t, p, "recovery/client-gave-up")["recovery/client-gave-up"]
	require.Equal(t, verdict.Pass, r.Verdict, r.Message)
	require.Nil(t, r.Evidence.Record.Plan)
	require.False(t, strings.Contains(r.Message, "fitted"), r.Message)
}
