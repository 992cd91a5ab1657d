package proxyctr_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/network"

	"github.com/idemproof/idemproof/containers"
	"github.com/idemproof/idemproof/containers/proxyctr"
	"github.com/idemproof/idemproof/containers/referencectr"
	"github.com/idemproof/idemproof/internal/dockertest"
)

// BenchmarkKeyedRefund measures one keyed refund (a fresh key each time, memory store,
// keep-alive connections) straight to the reference container and through the proxy
// container: the price of the extra hop that containerised runs pay on every attempt.
func BenchmarkKeyedRefund(b *testing.B) {
	dockertest.Require(b, dockertest.AppImage())
	ctx := context.Background()
	nw, err := network.New(ctx, network.WithLabels(containers.RunLabels()))
	testcontainers.CleanupNetwork(b, nw)
	if err != nil {
		b.Fatal(err)
	}
	ref, err := referencectr.Run(ctx, dockertest.AppImage(), network.WithNetwork([]string{"api"}, nw))
	testcontainers.CleanupContainer(b, ref)
	if err != nil {
		b.Fatal(err)
	}
	px, err := proxyctr.Run(ctx, dockertest.AppImage(), "http://api:8080", network.WithNetwork([]string{"faultproxy"}, nw))
	testcontainers.CleanupContainer(b, px)
	if err != nil {
		b.Fatal(err)
	}
	direct, err := ref.URL(ctx)
	if err != nil {
		b.Fatal(err)
	}
	proxied, err := px.URL(ctx)
	if err != nil {
		b.Fatal(err)
	}
	hc := &http.Client{Timeout: 10 * time.Second}
	for _, target := range []struct{ name, base string }{{"direct", direct}, {"through-proxy", proxied}} {
		b.Run(target.name, func(b *testing.B) {
			n := 0
			for b.Loop() {
				n++
				req, err := http.NewRequestWithContext(ctx, http.MethodPost, target.base+"/v1/refunds",
					strings.NewReader(fmt.Sprintf(`{"order_id": "bench-%s-%d", "amount": 4900}`, target.name, n)))
				if err != nil {
					b.Fatal(err)
				}
				req.Header.Set("Idempotency-Key", fmt.Sprintf("bench-%s-%d-%d", target.name, time.Now().UnixNano(), n))
				req.Header.Set("Content-Type", "application/json")
				resp, err := hc.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusCreated {
					b.Fatalf("status %d", resp.StatusCode)
				}
			}
		})
	}
}
