package storm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/storm"
)

// bigAnswers is a correct keyed API whose every answer is a 256 KiB JSON document: a
// storm that kept what it read would grow by that much per operation. It keeps only the
// keys it saw: an answer is made again from its order, the same bytes every time.
type bigAnswers struct {
	mu     sync.Mutex
	seen   map[string]bool
	ledger map[string]int
}

const bigBody = 128 << 10

func (b *bigAnswers) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet {
		b.mu.Lock()
		n := b.ledger[r.URL.Query().Get("order_id")]
		b.mu.Unlock()
		fmt.Fprintf(w, `{"count":%d}`, n)
		return
	}
	var req struct {
		OrderID string `json:"order_id"`
	}
	_ = json.NewDecoder(r.Body).Decode(&req)
	key := r.Header.Get("Idempotency-Key")
	b.mu.Lock()
	if !b.seen[key] {
		b.seen[key] = true
		b.ledger[req.OrderID]++
	}
	b.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	fmt.Fprintf(w, `{"order_id":%q,"pad":%q}`, req.OrderID, strings.Repeat("x", bigBody))
}

func profileFor(t *testing.T, base string, extra string) *profile.Profile {
	t.Helper()
	p, err := profile.Parse("storm-test.yaml", []byte(`name: storm-test
base_url: `+base+`
key_header: Idempotency-Key
operation: {method: POST, path: /refunds, body: '{"order_id": "{{.Entity}}", "amount": 100}'}
side_effects: {method: GET, path: "/refunds?order_id={{.Entity}}", count: count}
expect: {in_flight: 409, mismatch: 422, missing_key: "400"}
`+extra))
	require.NoError(t, err)
	return p
}

func TestStormMemoryIsBoundedByBytesNotByWhatTheTargetAnswers(t *testing.T) {
	api := &bigAnswers{seen: map[string]bool{}, ledger: map[string]int{}}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	p := profileFor(t, srv.URL, "")

	// peakGrowth runs a storm of ops and returns the most its live heap grew meanwhile.
	peakGrowth := func(ops int) int64 {
		runtime.GC()
		var base runtime.MemStats
		runtime.ReadMemStats(&base)
		var peak uint64
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		rep, err := storm.Run(ctx, storm.Config{Profile: p, Ops: ops, Clients: 8, Seed: 3, Progress: func(pr storm.Progress) {
			if pr.Done%20 == 0 {
				runtime.GC() // what is live, not what awaits collection
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				peak = max(peak, m.HeapAlloc)
			}
		}})
		require.NoError(t, err)
		require.Equal(t, ops, rep.Done)
		require.True(t, rep.Safe(), "%v", rep.Counts)
		return int64(peak) - int64(base.HeapAlloc)
	}
	small, large := peakGrowth(80), peakGrowth(400)
	t.Logf("live heap growth: %d MiB over 80 operations, %d MiB over 400 (each answer %d KiB)", small>>20, large>>20, bigBody>>10)
	// Keeping the 320 more answers would cost 40 MiB; the storm keeps a digest and an
	// excerpt of each, and its journal and the answers in flight are bounded.
	require.Less(t, large-small, int64(24<<20), "the storm's memory does not grow with what the target answers")
}

func TestShardsSplitTheOperationsAndMergeIntoOneReport(t *testing.T) {
	t.Parallel()
	tgt := startReference(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var reports []*storm.Report
	for shard := 1; shard <= 2; shard++ {
		rep, err := storm.Run(ctx, storm.Config{Profile: tgt.Profile, Ops: 120, Seed: 11, Shard: shard, Shards: 2})
		require.NoError(t, err)
		require.Equal(t, 60, rep.Done, "shard %d runs its half", shard)
		var buf bytes.Buffer
		require.NoError(t, json.NewEncoder(&buf).Encode(rep))
		require.True(t, storm.IsReport(buf.Bytes()))
		back, err := storm.ReadReport(buf.Bytes())
		require.NoError(t, err)
		reports = append(reports, back)
	}
	merged, err := storm.Merge(reports, 0)
	require.NoError(t, err)
	require.Equal(t, []string{"1/2", "2/2"}, merged.Shards)
	require.Equal(t, 120, merged.Done)
	require.Equal(t, 120, merged.Ops)
	require.True(t, merged.Safe())
	require.Positive(t, merged.P99MS)
	_, err = storm.Merge([]*storm.Report{reports[0], reports[0]}, 0)
	require.ErrorContains(t, err, "shard 1/2 given twice")
	var out bytes.Buffer
	merged.WriteText(&out)
	require.Contains(t, out.String(), "shard(s) 1/2,2/2")
}

func TestStormRefusesWhatItCannotRun(t *testing.T) {
	t.Parallel()
	tgt := startReference(t)
	ctx := context.Background()

	// The store point's upstream does not answer.
	p := *tgt.Profile
	p.Store = &profile.Store{Listen: freeAddr(t), Upstream: freeAddr(t)}
	_, err := storm.Run(ctx, storm.Config{Profile: &p, Ops: 5})
	require.ErrorContains(t, err, "does not accept connections")

	// The API never uses the store point: its store is in memory.
	store, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { store.Close() })
	go func() {
		for {
			c, err := store.Accept()
			if err != nil {
				return
			}
			go io.Copy(io.Discard, c)
		}
	}()
	p.Store = &profile.Store{Listen: freeAddr(t), Upstream: store.Addr().String()}
	_, err = storm.Run(ctx, storm.Config{Profile: &p, Ops: 5})
	require.ErrorContains(t, err, "the API never used store.listen")

	// Bad shards and schedules.
	_, err = storm.Run(ctx, storm.Config{Profile: tgt.Profile, Shard: 3, Shards: 2})
	require.ErrorContains(t, err, "shard 3/2")
	hold := storm.Schedule{Copies: 2, Outage: "down"}
	_, err = storm.Run(ctx, storm.Config{Profile: tgt.Profile, Schedule: &hold})
	require.ErrorContains(t, err, "needs the profile's store:")

	// A stdio server: every client would start a process of its own.
	stdioProfile, err := profile.Builtin("mcp-refunds-stdio")
	require.NoError(t, err)
	_, err = storm.Run(ctx, storm.Config{Profile: stdioProfile, Ops: 5})
	require.ErrorContains(t, err, "transport mcp-stdio is not supported by the storm (each of its clients would start a server process of its own")
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}
