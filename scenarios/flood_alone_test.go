package scenarios_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/scenarios"
	"github.com/idemproof/idemproof/verdict"
)

// keySpans records when the target had each keyed request, by key.
type keySpans struct {
	next http.Handler
	mu   sync.Mutex
	by   map[string][][2]time.Time
}

func (k *keySpans) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	key := r.Header.Get("Idempotency-Key")
	start := time.Now()
	k.next.ServeHTTP(w, r)
	if key == "" {
		return
	}
	k.mu.Lock()
	k.by[key] = append(k.by[key], [2]time.Time{start, time.Now()})
	k.mu.Unlock()
}

// A burst of a thousand copies floods its target: every other scenario's attempts would
// queue behind its own and their timing would judge the flood, not the target. It runs
// alone: no other key's request is at the target while the burst's are.
func TestAFloodingBurstRunsAlone(t *testing.T) {
	t.Parallel()
	f := &fakeRefunds{hold: 50 * time.Millisecond, keys: map[string]*fakeEntry{}, ledger: map[string]int{}, lost: map[string]bool{}}
	spans := &keySpans{next: f, by: map[string][][2]time.Time{}}
	srv := httptest.NewServer(spans)
	t.Cleanup(srv.Close)
	p := fakeProfile(t, srv.URL)
	p.ClientTimeout = profile.Duration(10 * time.Second) // a loaded machine is no finding here
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	rep, err := scenarios.Run(ctx, scenarios.RunConfig{Profiles: []*profile.Profile{p}, Seed: 1, Concurrency: 4,
		Only: []string{"race/burst-1000", "race/burst-50", "race/concurrent-pair", "replay/*", "key/*"}})
	require.NoError(t, err)
	for _, r := range rep.Results {
		if r.ScenarioID == "race/burst-1000" {
			require.Equal(t, verdict.Pass, r.Verdict, r.Message)
		}
	}

	spans.mu.Lock()
	defer spans.mu.Unlock()
	var floodKey string
	for key, s := range spans.by {
		if len(s) >= 1000 {
			floodKey = key
		}
	}
	require.NotEmpty(t, floodKey, "the burst's thousand copies reached the target")
	from, to := spans.by[floodKey][0][0], spans.by[floodKey][0][1]
	for _, s := range spans.by[floodKey] {
		if s[0].Before(from) {
			from = s[0]
		}
		if s[1].After(to) {
			to = s[1]
		}
	}
	others := 0
	for key, s := range spans.by {
		if key == floodKey {
			continue
		}
		others += len(s)
		for _, span := range s {
			require.False(t, span[0].Before(to) && span[1].After(from), "key %s was at the target %s–%s, during the burst's %s–%s", key, span[0].Format(time.StampMicro), span[1].Format(time.StampMicro), from.Format(time.StampMicro), to.Format(time.StampMicro))
		}
	}
	require.Greater(t, others, 20, "the other scenarios ran")
}
