package containers

import (
	"fmt"
	"net/netip"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/testcontainers/testcontainers-go"
)

// loopback is where published ports listen. Docker's default (every interface) would
// expose test services — often with fixed tokens and test hooks — to the whole network.
var loopback = netip.MustParseAddr("127.0.0.1")

// PublishOnLoopback binds each given container port ("8080/tcp") to an ephemeral host
// port on 127.0.0.1 only. Ports that are not also exposed are ignored by testcontainers,
// so pass the same ports the container exposes. An ephemeral host port changes when the
// container is stopped and started again: read it afresh after a restart.
func PublishOnLoopback(ports ...string) testcontainers.CustomizeRequestOption {
	return func(req *testcontainers.GenericContainerRequest) error {
		parsed := make([]network.Port, 0, len(ports))
		for _, p := range ports {
			port, err := network.ParsePort(p)
			if err != nil {
				return fmt.Errorf("publish on loopback: port %q: %w", p, err)
			}
			parsed = append(parsed, port)
		}
		return testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
			if hc.PortBindings == nil {
				hc.PortBindings = network.PortMap{}
			}
			for _, port := range parsed {
				hc.PortBindings[port] = []network.PortBinding{{HostIP: loopback, HostPort: "0"}}
			}
		})(req)
	}
}
