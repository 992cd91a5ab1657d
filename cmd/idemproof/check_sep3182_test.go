package main_test

import (
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/reference"
	"github.com/idemproof/idemproof/reference/mcpserver"
)

// sep3182Profile is the MCP fixture served with --key-in params, described from the
// mcp-sep-3182 preset: the key at params.idempotencyKey, the capability required. The
// fixture requires a key where the SEP makes it optional, which the profile declares.
const sep3182Profile = `name: fixture-sep-3182
extends: mcp-sep-3182
%s
operation:
  tool: refund
  body: '{"order_id": "{{.Entity}}", "amount": 4900, "reason": "requested_by_customer"}'
  altered_body: '{"order_id": "{{.Entity}}", "amount": 5000, "reason": "requested_by_customer"}'
side_effects:
  tool: list_refunds
  arguments: '{"order_id": "{{.Entity}}"}'
  count: result.structuredContent.count
outcomes:
  in_flight: {json: {path: error.code, equals: -32010}, retry_after: {path: error.data.retry_after_ms, unit: ms}}
  mismatch: {json: {path: error.code, equals: -32011}}
  missing_key: {json: {path: error.code, equals: -32012}}
  invalid_key: {json: {path: error.code, equals: -32013}}
  validation_error: {json: {path: error.code, equals: -32602}}
  business_error: {json: {path: result.isError, equals: true}, text: "refund declined"}
  server_error: {json: {path: error.code, equals: -32603}}
expect:
  missing_key: "400"
  stores_business_errors: true
  stores_validation_errors: false
  unique_field: result.structuredContent.id
business_error:
  body: '{"order_id": "{{.Entity}}", "amount": 2000000}'
validation_error:
  body: '{"order_id": "{{.Entity}}", "amount": -5}'
`

// The fixture keyed as SEP-3182 passes the whole catalogue, over Streamable HTTP and over
// stdio, under the preset's requirement that it advertise the capability: nothing FAILs,
// nothing is UNKNOWN, and a call without the key is refused as a missing key.
//
// Both keep keys for 12 s: expiry/not-evicted sends hundreds of newer keys before its
// repeat, which a loaded machine (870 ms a request, seen in CI) cannot fit in 5 s — an
// honest UNKNOWN, but not what this test is about.
func TestTheFixtureKeyedAsSEP3182PassesTheCatalogue(t *testing.T) {
	t.Parallel()
	srv, err := mcpserver.New(mcpserver.Config{KeyIn: mcpserver.KeyInParams, TestHooks: true,
		Reference: []reference.Option{reference.WithRetention(12 * time.Second)}})
	require.NoError(t, err)
	t.Cleanup(func() { srv.Close() })
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	bin := checkBinary(t)
	for _, tc := range []struct{ name, target string }{
		{"streamable HTTP", `base_url: ` + ts.URL + `
retention: 12s
slow_operation: {header: X-Test-Delay, value: 300ms}
fail_operation: {header: X-Test-Fail, value: "503"}`},
		{"stdio", fmt.Sprintf(`transport: mcp-stdio
mcp:
  command: [%s, serve, --mcp, --stdio, --test-hooks, --key-in, params, --retention, 12s]
retention: 12s
slow_operation: {field: params._meta.test_delay, value: 300ms}
fail_operation: {field: params._meta.test_fail, value: "503"}`, bin)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "sep-3182.yaml")
			require.NoError(t, os.WriteFile(path, []byte(fmt.Sprintf(sep3182Profile, tc.target)), 0o644))
			out, errOut, code := runCLI(t, "check", "--profile", path)
			require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, errOut)
			row := regexp.MustCompile(`(?m)^\s*fixture-sep-3182\s+(\d+)\s+\d+\s+\d+\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)$`).FindStringSubmatch(out)
			require.NotNil(t, row, out)
			require.Equal(t, []string{"0", "0", "0"}, row[2:5], "no NON-STRICT, UNKNOWN or FAIL:\n%s", out)
			require.GreaterOrEqual(t, atoi(t, row[1]), 25, "most of the catalogue is proven:\n%s", out)
			require.Regexp(t, `(?m)^PASS\s+key/missing\s+fixture-sep-3182\s.*refused with 200 \(missing_key\); nothing executed`, out)
			for _, id := range []string{"replay/after-reset", "replay/sequential", "fingerprint/mismatch", "key/over-length"} {
				require.Regexp(t, `(?m)^PASS\s+`+regexp.QuoteMeta(id)+`\s`, out, "the key at params.idempotencyKey is honoured")
			}
		})
	}
}

// The same profile against the fixture keyed in _meta stops at the preflight: the server
// does not advertise capabilities.tools.idempotency.
func TestTheFixtureKeyedInMetaDoesNotAdvertiseSEP3182(t *testing.T) {
	t.Parallel()
	srv, err := mcpserver.New(mcpserver.Config{})
	require.NoError(t, err)
	t.Cleanup(func() { srv.Close() })
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	path := filepath.Join(t.TempDir(), "sep-3182.yaml")
	require.NoError(t, os.WriteFile(path, []byte(fmt.Sprintf(sep3182Profile, "base_url: "+ts.URL)), 0o644))
	_, errOut, code := runCLI(t, "check", "--profile", path, "--only", "replay/sequential")
	require.Equal(t, 2, code, errOut)
	require.Contains(t, errOut, "mcp.require_idempotency_capability")
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	var n int
	_, err := fmt.Sscan(strings.TrimSpace(s), &n)
	require.NoError(t, err)
	return n
}
