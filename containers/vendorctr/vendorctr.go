// Package vendorctr runs the recording vendor (`idemproof vendor`, the downstream sink)
// in a container, for a target under test to call as its vendor, testcontainers-go
// module style:
//
//	v, err := vendorctr.Run(ctx, "idemproof/idemproof:dev", network.WithNetwork([]string{"vendor"}, nw))
//	testcontainers.CleanupContainer(t, v) // before the error check
//	require.NoError(t, err)
//	// the target, on nw, calls http://vendor:9090 (vendorctr.InternalURL("vendor"))
//	calls, ledger, err := v.Calls(ctx, "order-1") // what the target sent, what the vendor did
//
// Guarantees: Run returns after the sink logged that it listens and its admin API
// answered; both ports are published on 127.0.0.1 only. The sink's records live in the
// container's memory: a restart of the vendor container forgets them.
package vendorctr

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"

	"github.com/idemproof/idemproof/containers"
	"github.com/idemproof/idemproof/downstream"
)

// Container ports: the vendor's (what the target calls) and the sink's admin API.
const (
	VendorPort = "9090/tcp"
	AdminPort  = "9091/tcp"
)

// Container is a running recording vendor.
type Container struct {
	*testcontainers.DockerContainer
}

// InternalURL is the vendor's URL for a target on the same network, by alias.
func InternalURL(alias string) string { return "http://" + alias + ":9090" }

// Run starts the image's `vendor` command and waits until it listens.
func Run(ctx context.Context, img string, opts ...testcontainers.ContainerCustomizer) (*Container, error) {
	ctx, cancel := context.WithTimeout(ctx, containers.StartTimeout)
	defer cancel()
	health := wait.ForHTTP("/calls").WithPort(AdminPort).
		WithStatusCodeMatcher(func(s int) bool { return s == http.StatusOK }).
		WithStartupTimeout(60 * time.Second).WithPollInterval(100 * time.Millisecond)
	all := append([]testcontainers.ContainerCustomizer{
		testcontainers.WithCmd("vendor", "--listen", "0.0.0.0:9090", "--admin-listen", "0.0.0.0:9091"),
		testcontainers.WithExposedPorts(VendorPort, AdminPort),
		containers.PublishOnLoopback(VendorPort, AdminPort),
		// ci/test removes only what its own run started, found by this label.
		containers.WithRunLabel(),
		testcontainers.WithWaitStrategy(wait.ForLog("idemproof vendor: calls on").WithStartupTimeout(60*time.Second), health),
	}, opts...)
	ctr, err := testcontainers.Run(ctx, img, all...)
	var c *Container
	if ctr != nil {
		c = &Container{DockerContainer: ctr}
	}
	if err != nil {
		return c, fmt.Errorf("run vendor: %w", err)
	}
	return c, nil
}

// AdminURL is the sink's admin API as reached from the host.
func (c *Container) AdminURL(ctx context.Context) (string, error) {
	ep, err := c.PortEndpoint(ctx, AdminPort, "http")
	if err != nil {
		return "", fmt.Errorf("vendor admin url: %w", err)
	}
	return ep, nil
}

// Calls reads what the target sent for entity, and the vendor's ledger of it.
func (c *Container) Calls(ctx context.Context, entity string) ([]downstream.Call, downstream.Ledger, error) {
	base, err := c.AdminURL(ctx)
	if err != nil {
		return nil, downstream.Ledger{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/calls?entity="+url.QueryEscape(entity), nil)
	if err != nil {
		return nil, downstream.Ledger{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, downstream.Ledger{}, fmt.Errorf("read vendor calls: %w", err)
	}
	defer resp.Body.Close()
	var got struct {
		Calls  []downstream.Call `json:"calls"`
		Ledger downstream.Ledger `json:"ledger"`
	}
	if resp.StatusCode != http.StatusOK {
		return nil, downstream.Ledger{}, fmt.Errorf("read vendor calls: %s", resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		return nil, downstream.Ledger{}, fmt.Errorf("read vendor calls: %w", err)
	}
	return got.Calls, got.Ledger, nil
}

// AddRule makes the sink inject a fault on the Nth call of an entity.
func (c *Container) AddRule(ctx context.Context, r downstream.Rule) error {
	base, err := c.AdminURL(ctx)
	if err != nil {
		return err
	}
	b, _ := json.Marshal(r)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/rules", strings.NewReader(string(b)))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("add vendor rule: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("add vendor rule: %s", resp.Status)
	}
	return nil
}
