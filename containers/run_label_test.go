package containers_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/testcontainers/testcontainers-go"

	"github.com/idemproof/idemproof/containers"
)

// Every container ci/test's run starts carries the run's label, which is what ci/test
// removes at the end.
func TestRunLabel(t *testing.T) {
	t.Setenv(containers.RunEnv, "run-42")
	req := testcontainers.GenericContainerRequest{}
	require.NoError(t, containers.WithRunLabel().Customize(&req))
	require.Equal(t, "run-42", req.Labels[containers.RunLabel])

	t.Setenv(containers.RunEnv, "")
	require.Empty(t, containers.RunLabels())
}
