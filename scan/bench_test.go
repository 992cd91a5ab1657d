package scan_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/idemproof/idemproof/examples/mcp-toolbox/toolbox"
	"github.com/idemproof/idemproof/scan"
)

// BenchmarkScan50Tools scans a server of 50 tools (the toolbox's seven, again and again:
// 36 probed, 14 read-only or destructive and listed only), each call taking 200 ms of
// work, with the default parallelism: the goal is a whole scan in under 60 s on the
// 2-core CI machine (docs/scan.md, "Benchmark"). It reports the scan's wall time and its
// calls; ci/bench scan runs it.
func BenchmarkScan50Tools(b *testing.B) {
	box := toolbox.New(200 * time.Millisecond)
	srv := httptest.NewServer(box.HandlerOf(50))
	defer srv.Close()
	ctx := context.Background()
	calls := 0
	for b.Loop() {
		cfg := &scan.Config{MCP: srv.URL + "/mcp", Seed: 1}
		target, err := scan.Enumerate(ctx, cfg)
		if err != nil {
			b.Fatal(err)
		}
		if len(target.Operations) != 50 {
			b.Fatalf("%d tools, want 50", len(target.Operations))
		}
		rep, err := scan.Run(ctx, cfg, target)
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range rep.Rows {
			calls += r.Calls
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/scan")
	b.ReportMetric(float64(calls)/float64(b.N), "calls/scan")
}
