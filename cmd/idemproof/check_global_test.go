package main_test

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/reference"
	"github.com/idemproof/idemproof/reference/servertest"
)

// A target whose ledger is global runs one scenario at a time, and the console says so
// once, before the results.
func TestCheckSaysAGlobalLedgerRunsOneAtATime(t *testing.T) {
	srv, err := reference.New(reference.WithTestHooks(true))
	require.NoError(t, err)
	t.Cleanup(func() { srv.Close() })
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	// One order for every scenario: its ledger counts every effect, like a global counter.
	order := servertest.Fresh("cli-global-")
	path := filepath.Join(t.TempDir(), "global.yaml")
	require.NoError(t, os.WriteFile(path, []byte(`name: one-order
extends: reference
base_url: `+ts.URL+`
operation:
  body: '{"order_id": "`+order+`", "amount": 4900}'
  altered_body: '{"order_id": "`+order+`", "amount": 5000}'
side_effects: {path: '/v1/refunds?order_id=`+order+`', count: count, scope: global}
`), 0o644))

	out, errOut, code := runCLI(t, "check", "--profile", path, "--only", "replay/sequential,key/distinct-keys-same-body,race/burst-50", "--concurrency", "4")
	require.Equal(t, 0, code, out+errOut)
	require.Contains(t, out, "target one-order has a global ledger: scenarios run one at a time\n")
	require.Regexp(t, `(?m)^PASS\s+key/distinct-keys-same-body\s+one-order\s+.*two side effects`, out)
}
