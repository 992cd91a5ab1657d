package clientcheck_test

import (
	"context"
	"encoding/pem"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/clientcheck"
	"github.com/idemproof/idemproof/profile"
)

// An https target whose CA only the profile's tls.ca_file names: the ledger reads and the
// proxy's upstream calls trust it; without it, the run stops at the ledger preflight.
func TestAProfileTargetOverHTTPSTrustsTLSCAFile(t *testing.T) {
	srv := httptest.NewTLSServer(toolHandler(t))
	t.Cleanup(srv.Close)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	require.NoError(t, os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644))
	client := toolClient(func(order string, _ int) string { return "call-" + order })
	cfg := clientcheck.Config{FaultSpec: "503", Seed: 1, Timeout: 30 * time.Second}

	without, err := profile.Parse("tool-api.yaml", []byte(fmt.Sprintf(toolProfile, srv.URL)))
	require.NoError(t, err)
	cfg.Profile = without
	_, err = clientcheck.Run(context.Background(), cfg, client)
	require.ErrorContains(t, err, "does not answer its ledger")
	require.ErrorContains(t, err, "certificate signed by unknown authority")

	with, err := profile.Parse("tool-api.yaml", []byte(fmt.Sprintf(toolProfile, srv.URL)+"tls: {ca_file: "+ca+"}\n"))
	require.NoError(t, err)
	cfg.Profile = with
	res, err := clientcheck.Run(context.Background(), cfg, client)
	require.NoError(t, err)
	require.NoError(t, res.Err())
	require.Equal(t, map[string]int{"o-1": 1, "o-2": 1}, res.Observation.Ledger)
	attempts := res.Attempts("o-1")
	require.Len(t, attempts, 2)
	require.Equal(t, "200", attempts[0].Upstream, "the upstream answered the faulted attempt: the proxy reached it over https")
	require.Equal(t, "200", attempts[1].Delivered)
}
