package proxyctr_test

import (
	"context"
	"fmt"
	"log"

	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/network"

	"github.com/idemproof/idemproof/containers/proxyctr"
	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/faultproxy/client"
)

// Put the fault proxy in front of your own service: both on one network, the proxy's
// upstream is the service's alias there. (Compiled, not run: it needs Docker.)
func ExampleRun() {
	ctx := context.Background()
	nw, err := network.New(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer nw.Remove(ctx)

	api, err := testcontainers.Run(ctx, "my-api:dev", network.WithNetwork([]string{"api"}, nw))
	defer testcontainers.TerminateContainer(api) // before the error check: a half-started container goes too
	if err != nil {
		log.Fatal(err)
	}

	px, err := proxyctr.Run(ctx, "idemproof/idemproof:dev", "http://api:8080",
		network.WithNetwork([]string{"faultproxy"}, nw), proxyctr.WithSeed(42))
	defer testcontainers.TerminateContainer(px)
	if err != nil {
		log.Fatal(err)
	}
	proxyURL, _ := px.URL(ctx)
	adminURL, _ := px.AdminURL(ctx)

	// Lose the response of every first attempt after your service committed.
	ctl := client.New(adminURL, px.AdminToken())
	err = ctl.AddRule(ctx, faultproxy.Rule{
		Name:  "lose-first-response",
		Match: faultproxy.Match{Method: "POST", Key: "*", Attempts: &faultproxy.Range{From: 1, To: 1}},
		Fault: faultproxy.FaultSpec{Type: faultproxy.FaultAfterStatus, Status: 503},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("send your client's requests to", proxyURL)
}
