package scenarios_test

import (
	"cmp"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/scenarios"
	"github.com/idemproof/idemproof/verdict"
)

// rateLimited answers 429 (Retry-After: 0) to the first `refuse` ledger reads of each
// entity, and passes everything else to a correct fake.
type rateLimited struct {
	next   http.Handler
	refuse int
	status int // 0 is 429
	mu     sync.Mutex
	reads  map[string]int
}

func (l *rateLimited) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet {
		l.mu.Lock()
		entity := r.URL.Query().Get("order_id")
		l.reads[entity]++
		refused := l.reads[entity] <= l.refuse
		l.mu.Unlock()
		if refused {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(cmp.Or(l.status, http.StatusTooManyRequests))
			return
		}
	}
	l.next.ServeHTTP(w, r)
}

// A ledger read a rate limit refuses (429), or an overloaded ledger or the gateway before
// it answers 503 and says when to come back, is read again after its Retry-After: the
// scenario gets its count and a verdict, not an UNKNOWN for a ledger it could not read.
func TestRefusedLedgerReadIsReadAgain(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ status, refuse int }{{http.StatusTooManyRequests, 2}, {http.StatusServiceUnavailable, 1}} {
		inner := &fakeRefunds{}
		startFake(t, inner)
		limited := &rateLimited{next: inner, refuse: tc.refuse, status: tc.status, reads: map[string]int{}}
		srv := httptest.NewServer(limited)
		t.Cleanup(srv.Close)
		r := runOn(t, fakeProfile(t, srv.URL), "replay/sequential")["replay/sequential"]
		require.Equal(t, verdict.Pass, r.Verdict, "%d: %s", tc.status, r.Message)
		limited.mu.Lock()
		for entity, n := range limited.reads {
			require.GreaterOrEqual(t, n, tc.refuse+1, "%d, entity %s: the refused reads, then the one that counted", tc.status, entity)
		}
		require.NotEmpty(t, limited.reads)
		limited.mu.Unlock()
	}
}

// firstPage answers a ledger read as a paginated list does: at most 10 effects counted,
// however many there are.
type firstPage struct{ next *fakeRefunds }

func (f firstPage) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet {
		f.next.mu.Lock()
		n := min(f.next.ledger[r.URL.Query().Get("order_id")], 10)
		f.next.mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]any{"count": n})
		return
	}
	f.next.ServeHTTP(w, r)
}

// A correct target whose ledger shows only a first page of 10: the scenario with the most
// side effects (hundreds of keys) spreads them over entities of a few keys each, so it
// still counts every one.
func TestManyKeysCountRightOnAFirstPageLedger(t *testing.T) {
	t.Parallel()
	inner := &fakeRefunds{}
	startFake(t, inner)
	srv := httptest.NewServer(firstPage{inner})
	t.Cleanup(srv.Close)
	r := runOn(t, fakeProfile(t, srv.URL), "race/keepalive-many-keys")["race/keepalive-many-keys"]
	require.Equal(t, verdict.Pass, r.Verdict, r.Message)
	require.Contains(t, r.Message, "400 keys")
	require.Len(t, r.Evidence.Record.SideEntities, 40)
}

// lagging answers each order's first ledger read with the count as it was before the
// order's effects (none), as a read replica that has not caught up would; later reads see
// them. Counted by reads, not by time, so a slow machine cannot change what it shows.
type lagging struct {
	next  *fakeRefunds
	extra int // effects the later reads show beyond the real ones (a replay that queued the work again)
	mu    sync.Mutex
	reads map[string]int
}

func (l *lagging) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		l.next.ServeHTTP(w, r)
		return
	}
	order := r.URL.Query().Get("order_id")
	l.mu.Lock()
	l.reads[order]++
	first := l.reads[order] == 1
	l.mu.Unlock()
	l.next.mu.Lock()
	n := l.next.ledger[order] + l.extra
	l.next.mu.Unlock()
	if first {
		n = 0
	}
	writeJSON(w, http.StatusOK, map[string]any{"count": n})
}

// A correct target whose ledger lags its writes: read right after the scenario it shows
// nothing yet, which looks like a success without a side effect; read again at the end of
// the run it shows the effect, and the verdict is the one on the complete count.
func TestLaggingLedgerIsJudgedOnItsCaughtUpCount(t *testing.T) {
	t.Parallel()
	inner := &fakeRefunds{}
	startFake(t, inner)
	srv := httptest.NewServer(&lagging{next: inner, reads: map[string]int{}})
	t.Cleanup(srv.Close)
	results := runOn(t, fakeProfile(t, srv.URL), "replay/sequential", "race/burst-50")
	for _, id := range []string{"replay/sequential", "race/burst-50"} {
		r := results[id]
		requirePassOrUnrefusedBurst(t, id, r)
		require.Contains(t, r.Message, "the ledger had caught up", id)
		require.Equal(t, 0, r.Evidence.Record.Ledger[verdict.LedgerOperation], id)
		require.Equal(t, 1, r.Evidence.Record.LateLedger[verdict.LedgerOperation], id)
	}
}

// The live line of a FAIL that the end of the run will judge again says it is
// provisional; the report's result, judged on the caught-up count, is not.
func TestALaggingFailIsProvisionalOnlyWhileLive(t *testing.T) {
	t.Parallel()
	inner := &fakeRefunds{}
	startFake(t, inner)
	srv := httptest.NewServer(&lagging{next: inner, reads: map[string]int{}})
	t.Cleanup(srv.Close)
	var live []verdict.Result
	rep, err := scenarios.Run(t.Context(), scenarios.RunConfig{Profiles: []*profile.Profile{fakeProfile(t, srv.URL)},
		Only: []string{"replay/sequential"}, NoPreflight: true, Seed: 1, Concurrency: 1,
		Progress: func(r verdict.Result) { live = append(live, r) }})
	require.NoError(t, err)
	require.Len(t, live, 1)
	require.Equal(t, verdict.Fail, live[0].Verdict, live[0].Message)
	require.True(t, live[0].Provisional, "it rests only on an effect the ledger did not show yet")
	require.Len(t, rep.Results, 1)
	require.Equal(t, verdict.Pass, rep.Results[0].Verdict, rep.Results[0].Message)
	require.False(t, rep.Results[0].Provisional, "a report's results are final")
}

// A FAIL for a missing effect whose later count shows a duplicate instead (the replay
// queued the work once more) says so.
func TestALaggingFailThatIsADuplicateSaysSo(t *testing.T) {
	t.Parallel()
	inner := &fakeRefunds{}
	startFake(t, inner)
	srv := httptest.NewServer(&lagging{next: inner, extra: 1, reads: map[string]int{}})
	t.Cleanup(srv.Close)
	r := runOn(t, fakeProfile(t, srv.URL), "replay/sequential")["replay/sequential"]
	require.Equal(t, verdict.Fail, r.Verdict, r.Message)
	require.Contains(t, r.Message, "2 side effects for one key")
	require.Contains(t, r.Message, "read again at the end of the run: 2 side effect(s), 0 side effect(s) when the scenario was judged")
	require.Equal(t, 1, r.Evidence.Categories[verdict.CatDuplicated])
}
