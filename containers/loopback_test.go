package containers_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/containers"
	"github.com/idemproof/idemproof/internal/dockertest"
)

// A published port must listen on 127.0.0.1 only, never on every interface.
func TestPublishOnLoopbackBindsOnlyLoopback(t *testing.T) {
	dockertest.Require(t, dockertest.PostgresImage())
	ctx := context.Background()
	pg := dockertest.RunPostgres(t, containers.PublishOnLoopback("5432/tcp"))

	inspect, err := pg.Inspect(ctx)
	require.NoError(t, err)
	var bindings []string
	for port, bs := range inspect.NetworkSettings.Ports {
		for _, b := range bs {
			bindings = append(bindings, port.String()+"="+b.HostIP.String())
		}
	}
	require.Equal(t, []string{"5432/tcp=127.0.0.1"}, bindings)
	require.Contains(t, pg.DSN, "127.0.0.1:")
}

func TestPublishOnLoopbackRejectsABadPort(t *testing.T) {
	err := containers.PublishOnLoopback("eighty")(nil)
	require.ErrorContains(t, err, `port "eighty"`)
}
