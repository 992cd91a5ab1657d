package servemem_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/ci/internal/servemem"
)

// One short run of the real thing, as ci/bench serve-memory starts it, against a server
// whose store fills after a few hundred refunds: it answers 201 until the budget is
// held and 507 after, with no transport error, and its memory is read. It asserts what
// is reported, never how much memory there was.
func TestShortRunFillsTheStore(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts idemproof serve")
	}
	bin := filepath.Join(t.TempDir(), "idemproof")
	out, err := exec.Command("go", "build", "-o", bin, "../../../cmd/idemproof").CombinedOutput()
	require.NoError(t, err, "%s", out)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	res, err := servemem.Run(ctx, servemem.Config{Idemproof: bin, Refunds: 3000, Clients: 4, Retention: time.Hour,
		Args: []string{"--memory-limit", "1048576"}})
	require.NoError(t, err)
	require.Positive(t, res.Statuses[201], "%v", res.Statuses)
	require.Positive(t, res.Statuses[507], "%v", res.Statuses)
	require.Equal(t, 3000, res.Statuses[201]+res.Statuses[507], "%v", res.Statuses)
	require.Positive(t, res.PeakRSS)
	require.GreaterOrEqual(t, res.PeakRSS, res.RSS)
}
