package profile_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/profile"
)

// The example profiles of docs/profiles.md load as documented.
func TestDocumentedExampleProfilesLoad(t *testing.T) {
	t.Setenv("FIBER_URL", "")
	fiber, err := profile.Load(filepath.Join("testdata", "fiber-refunds.yaml"))
	require.NoError(t, err)
	require.Equal(t, "fiber-refunds", fiber.Name)
	require.Equal(t, "http://127.0.0.1:8090", fiber.BaseURL)
	require.Equal(t, 422, fiber.Expect.Mismatch, "from the ietf-draft-07 preset")
	require.Equal(t, "optional", fiber.Expect.MissingKey, "the profile overrides the preset")
	require.True(t, fiber.Expect.InFlightWait, "in_flight: wait over the preset's 409")
	require.Zero(t, fiber.Expect.InFlight)
	require.Equal(t, 2*time.Second, fiber.Retention.Std())
	require.Equal(t, "two principals; the profile declares 0", fiber.Missing(profile.CapPrincipals))

	t.Setenv("TOOLS_TOKEN", "secret")
	tool, err := profile.Load(filepath.Join("testdata", "refund-tool.yaml"))
	require.NoError(t, err)
	require.Equal(t, "params.arguments.idempotency_key", tool.KeyField)
	require.Empty(t, tool.KeyHeader, "no default header when the key travels in the body")
	require.Equal(t, "Bearer secret", tool.Operation.Headers["Authorization"])
	require.Equal(t, "the key travels in the body (key_field), not a header", tool.Missing(profile.CapKeyHeader))
}
