package main

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestEndpointFromClientCheckEnvironment(t *testing.T) {
	for _, tc := range []struct{ base, endpoint, want string }{
		{"http://127.0.0.1:9/", "", "http://127.0.0.1:9/mcp"},
		{"http://127.0.0.1:9", "/tools/mcp", "http://127.0.0.1:9/tools/mcp"},
		{"http://127.0.0.1:9", "http://127.0.0.1:9/rpc", "http://127.0.0.1:9/rpc"}, // a whole URL as is
		{"", "", ""},
	} {
		t.Setenv("IDEMPROOF_BASE_URL", tc.base)
		t.Setenv("IDEMPROOF_MCP_ENDPOINT", tc.endpoint)
		require.Equal(t, tc.want, endpointFromEnv(), "%+v", tc)
	}
}

func TestRunRefusesWhatItCannotDo(t *testing.T) {
	_, err := Run(context.Background(), Config{KeyField: DefaultKeyField})
	require.ErrorContains(t, err, "set IDEMPROOF_BASE_URL")
	for _, field := range []string{"params.idempotencyKey", "params.arguments.", "params._meta.a.b", "idempotency_key"} {
		_, err := Run(context.Background(), Config{Endpoint: "http://127.0.0.1:9/mcp", KeyField: field})
		require.ErrorContains(t, err, "want params._meta.NAME or params.arguments.NAME", field)
	}
}
