// Package referencectr runs the idemproof reference keyed refund server (`idemproof
// serve`) in a container, testcontainers-go module style:
//
//	ctr, err := referencectr.Run(ctx, "idemproof/idemproof:dev",
//		referencectr.WithStore("postgres://idemproof:idemproof@postgres:5432/idemproof"),
//		network.WithNetwork([]string{"reference"}, nw))
//	testcontainers.CleanupContainer(t, ctr) // before the error check
//	require.NoError(t, err)
//	base, err := ctr.URL(ctx)
//
// Guarantees: Run returns only after GET /healthz answered 200 on the published port (or
// with an error, and then still the container when one was created, so cleanup works);
// the port is published on 127.0.0.1 only. Not guaranteed: the published port survives a
// restart — Docker picks a new one, so call URL again after Stop/Start or a crash.
package referencectr

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"

	"github.com/idemproof/idemproof/containers"
)

// Port is the container port the server listens on.
const Port = "8080/tcp"

// Container is a running reference server.
type Container struct {
	*testcontainers.DockerContainer
}

// Run starts the image's `serve` command on 0.0.0.0:8080 (memory store unless WithStore)
// and waits until /healthz answers 200. Options apply after the defaults, so a caller's
// flag given again (e.g. testcontainers.WithCmdArgs("--listen", ...)) wins.
func Run(ctx context.Context, img string, opts ...testcontainers.ContainerCustomizer) (*Container, error) {
	ctx, cancel := context.WithTimeout(ctx, containers.StartTimeout)
	defer cancel()
	all := append([]testcontainers.ContainerCustomizer{
		containers.WithRunLabel(),
		testcontainers.WithCmd("serve", "--listen", "0.0.0.0:8080"),
		testcontainers.WithExposedPorts(Port),
		containers.PublishOnLoopback(Port),
		// /healthz is the server's own statement that it listens and its store answers;
		// the log line alone would pass before the store is reachable.
		testcontainers.WithWaitStrategy(wait.ForHTTP("/healthz").WithPort(Port).
			WithStatusCodeMatcher(func(s int) bool { return s == http.StatusOK }).
			WithStartupTimeout(60 * time.Second).WithPollInterval(100 * time.Millisecond)),
	}, opts...)
	ctr, err := testcontainers.Run(ctx, img, all...)
	var c *Container
	if ctr != nil {
		c = &Container{DockerContainer: ctr}
	}
	if err != nil {
		return c, fmt.Errorf("run reference: %w", err)
	}
	return c, nil
}

// URL is the server's base URL as reached from the host, e.g. http://127.0.0.1:32768.
// Read it again after a restart: the host port changes.
func (c *Container) URL(ctx context.Context) (string, error) {
	ep, err := c.PortEndpoint(ctx, Port, "http")
	if err != nil {
		return "", fmt.Errorf("reference url: %w", err)
	}
	return ep, nil
}
