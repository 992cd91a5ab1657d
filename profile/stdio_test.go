package profile_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/profile"
)

const stdioDoc = `name: refunds-stdio
transport: mcp-stdio
key_field: params._meta.idempotency_key
mcp:
  command: [./refunds-server, -keys, keys.json]
  env: {REFUNDS_LOG: debug, A: "1"}
operation:
  tool: refund
  body: '{"order_id": "{{.Entity}}", "amount": 4900}'
side_effects:
  tool: list_refunds
  arguments: '{"order_id": "{{.Entity}}"}'
  count: result.structuredContent.count
outcomes:
  in_flight: {json: {path: error.code, equals: -32010}}
  mismatch: {json: {path: error.code, equals: -32011}}
expect: {missing_key: optional, durable_keys: true}
`

func TestStdioProfile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "p.yaml")
	require.NoError(t, os.WriteFile(path, []byte(stdioDoc), 0o644))
	p, err := profile.Load(path)
	require.NoError(t, err)
	require.True(t, p.IsStdio())
	require.True(t, p.IsMCP(), "tools/call framing, outcome defaults")
	require.True(t, p.DurableKeys())
	c := p.StdioCommand()
	require.Equal(t, []string{"./refunds-server", "-keys", "keys.json"}, c.Args)
	require.Equal(t, dir, c.Dir, "the profile's folder, so a relative program runs from anywhere")
	require.Equal(t, []string{"A=1", "REFUNDS_LOG=debug"}, c.Env)
	require.Equal(t, profile.DefaultStartTimeout, p.StartTimeout())
	require.Nil(t, p.NewMCPTransport(), "not the Streamable HTTP transport")

	require.Contains(t, p.Missing(profile.CapPrincipals), "mcp-stdio")
	require.Contains(t, p.Missing(profile.CapMCPSessions), "replay/after-restart")
	require.Contains(t, p.Missing(profile.CapRequestHeaders), "a line on a pipe")
	require.Empty(t, p.Missing(profile.CapServerRestart))

	http, err := profile.Builtin("reference")
	require.NoError(t, err)
	require.Contains(t, http.Missing(profile.CapServerRestart), "transport mcp-stdio")
	require.Empty(t, http.Missing(profile.CapRequestHeaders))
}

func TestStdioProfileRefusesWhatAStdioServerHasNot(t *testing.T) {
	t.Parallel()
	doc := strings.Replace(stdioDoc, "name: refunds-stdio\n", `name: refunds-stdio
base_url: http://127.0.0.1:8080
principals: [{Authorization: "Bearer A"}, {Authorization: "Bearer B"}]
slow_operation: {header: X-Test-Delay, value: 400ms}
`, 1)
	doc = strings.Replace(doc, "  env: {REFUNDS_LOG: debug, A: \"1\"}\n", "  env: {REFUNDS_LOG: debug, A: \"1\"}\n  session: attempt\n", 1)
	doc = strings.Replace(doc, "  tool: refund\n", "  tool: refund\n  path: /mcp\n", 1)
	_, err := profile.Parse("p.yaml", []byte(doc))
	require.Error(t, err)
	for _, want := range []string{"base_url: not with transport: mcp-stdio", "principals: not with", "slow_operation: not with", "mcp.session: not with", "operation.path: not with"} {
		require.Contains(t, err.Error(), want)
	}

	noCommand := strings.Replace(stdioDoc, "  command: [./refunds-server, -keys, keys.json]\n", "", 1)
	_, err = profile.Parse("p.yaml", []byte(noCommand))
	require.ErrorContains(t, err, "mcp.command: required with transport: mcp-stdio")

	overHTTP := strings.Replace(stdioDoc, "transport: mcp-stdio", "transport: mcp\nbase_url: http://127.0.0.1:1", 1)
	_, err = profile.Parse("p.yaml", []byte(overHTTP))
	require.ErrorContains(t, err, "mcp.command: only with transport: mcp-stdio")
}
