package scenarios_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/scenarios"
	"github.com/idemproof/idemproof/verdict"
)

// BenchmarkRunnerBurst1000 is race/burst-1000 through the runner: proxy start, 1,000
// attempts with one key (128 in flight), journal, ledger, checker.
func BenchmarkRunnerBurst1000(b *testing.B) {
	p := fakeProfile(b, startFake(b, &fakeRefunds{}))
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rep, err := scenarios.Run(ctx, scenarios.RunConfig{Profiles: []*profile.Profile{p}, Only: []string{"race/burst-1000"}})
		if err != nil || rep.Results[0].Verdict != verdict.Pass {
			b.Fatalf("run: %v %+v", err, rep)
		}
	}
}

// BenchmarkRawBurst1000 is the same 1,000 attempts without the runner: a plain client
// through the same proxy, fresh connections, 128 in flight. The difference to
// BenchmarkRunnerBurst1000 is the runner's overhead.
func BenchmarkRawBurst1000(b *testing.B) {
	base := startFake(b, &fakeRefunds{})
	srv, err := faultproxy.Start(context.Background(), faultproxy.Config{Upstream: base})
	require.NoError(b, err)
	b.Cleanup(func() { _ = srv.Close() })
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		key := fmt.Sprintf("raw-%d", i)
		work := make(chan int)
		var wg sync.WaitGroup
		for w := 0; w < 128; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range work {
					req, _ := http.NewRequest("POST", srv.URL()+"/v1/refunds", strings.NewReader(`{"order_id":"`+key+`","amount":4900}`))
					req.Header.Set("Idempotency-Key", key)
					resp, err := client.Do(req)
					if err != nil {
						b.Error(err)
						continue
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}()
		}
		for n := 0; n < 1000; n++ {
			work <- n
		}
		close(work)
		wg.Wait()
	}
}
