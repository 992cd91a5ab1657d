// Package proxyctr runs the idemproof fault proxy (`idemproof proxy`) in a container in
// front of any upstream — the reference server or YOUR service — testcontainers-go module
// style:
//
//	// your service joined nw with the alias "api" and listens on 8080 inside it
//	px, err := proxyctr.Run(ctx, "idemproof/idemproof:dev", "http://api:8080",
//		network.WithNetwork([]string{"faultproxy"}, nw))
//	testcontainers.CleanupContainer(t, px) // before the error check
//	require.NoError(t, err)
//	proxyURL, err := px.URL(ctx)     // send your client's requests here
//	adminURL, err := px.AdminURL(ctx) // rules, reset, journal (faultproxy/client)
//
// The upstream address is resolved INSIDE the container: use a network alias of a
// container on the same network, not 127.0.0.1 (that is the proxy itself).
//
// Guarantees: Run returns after the proxy logged that both its listeners are bound and
// the admin API's GET /healthz answered 200; both ports are published on 127.0.0.1 only.
// Not guaranteed: the published ports survive a restart (read them again).
package proxyctr

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"

	"github.com/idemproof/idemproof/containers"
)

// Container ports: the proxied traffic and the admin API.
const (
	ProxyPort = "8081/tcp"
	AdminPort = "8082/tcp"
)

// Container is a running fault proxy.
type Container struct {
	*testcontainers.DockerContainer
	adminToken string
}

// Run starts the image's `proxy` command forwarding to upstream (a URL such as
// http://api:8080; WithUpstream adds replicas, served round-robin) and waits until the
// proxy logged that it listens and the admin API's /healthz answers 200.
func Run(ctx context.Context, img, upstream string, opts ...testcontainers.ContainerCustomizer) (*Container, error) {
	if upstream == "" {
		return nil, fmt.Errorf("run proxy: upstream is empty; pass the service's URL as seen from the proxy container, e.g. http://api:8080")
	}
	ctx, cancel := context.WithTimeout(ctx, containers.StartTimeout)
	defer cancel()
	c := &Container{}
	for _, o := range opts {
		if t, ok := o.(tokenOption); ok {
			c.adminToken = t.token
		}
	}
	// The admin /healthz says the proxy is configured (it needs the token like every
	// admin call). The log line is printed once BOTH listeners are bound, so the first
	// proxied request cannot race the listener; a port check would not do — Docker's
	// port forwarder accepts connections before the process listens, and a FROM scratch
	// image has no shell for testcontainers' in-container check.
	health := wait.ForHTTP("/healthz").WithPort(AdminPort).
		WithStatusCodeMatcher(func(s int) bool { return s == http.StatusOK }).
		WithStartupTimeout(60 * time.Second).WithPollInterval(100 * time.Millisecond)
	if c.adminToken != "" {
		health = health.WithHeaders(map[string]string{"Authorization": "Bearer " + c.adminToken})
	}
	all := append([]testcontainers.ContainerCustomizer{
		containers.WithRunLabel(),
		testcontainers.WithCmd("proxy", "--listen", "0.0.0.0:8081", "--admin", "0.0.0.0:8082", "--upstream", upstream),
		testcontainers.WithExposedPorts(ProxyPort, AdminPort),
		containers.PublishOnLoopback(ProxyPort, AdminPort),
		testcontainers.WithWaitStrategy(wait.ForLog("idemproof proxy: listening on").WithStartupTimeout(60*time.Second), health),
	}, opts...)
	all = append(all, allowAliases())
	ctr, err := testcontainers.Run(ctx, img, all...)
	if ctr != nil {
		c.DockerContainer = ctr
	} else {
		c = nil
	}
	if err != nil {
		return c, fmt.Errorf("run proxy: %w", err)
	}
	return c, nil
}

// allowAliases lets the admin API answer to the container's network aliases (another
// container reaching it as http://faultproxy:8082): it answers only to IP literals,
// loopback names and the names it is given (faultproxy's DNS-rebinding guard). It runs
// after the caller's options, which set the aliases.
func allowAliases() testcontainers.CustomizeRequestOption {
	return func(req *testcontainers.GenericContainerRequest) error {
		var args []string
		for _, aliases := range req.NetworkAliases {
			for _, a := range aliases {
				args = append(args, "--admin-allow-host", a)
			}
		}
		if len(args) == 0 {
			return nil
		}
		return testcontainers.WithCmdArgs(args...)(req)
	}
}

// URL is the proxy's base URL as reached from the host: send the client's requests here.
func (c *Container) URL(ctx context.Context) (string, error) {
	ep, err := c.PortEndpoint(ctx, ProxyPort, "http")
	if err != nil {
		return "", fmt.Errorf("proxy url: %w", err)
	}
	return ep, nil
}

// AdminURL is the admin API's base URL as reached from the host.
func (c *Container) AdminURL(ctx context.Context) (string, error) {
	ep, err := c.PortEndpoint(ctx, AdminPort, "http")
	if err != nil {
		return "", fmt.Errorf("proxy admin url: %w", err)
	}
	return ep, nil
}

// AdminToken is the token given with WithAdminToken ("" when none).
func (c *Container) AdminToken() string { return c.adminToken }
