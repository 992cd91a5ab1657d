package main_test

import (
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/reference"
)

func TestInitFromTheReferenceOpenAPIThenCheck(t *testing.T) {
	out := filepath.Join(t.TempDir(), "refunds.yaml")
	_, errOut, code := runCLI(t, "init", "--openapi", "../../docs/openapi.yaml", "--operation", "createRefund", "--out", out)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, errOut, "wrote "+out)
	p, err := profile.Load(out)
	require.NoError(t, err)
	require.Equal(t, "/v1/refunds", p.Operation.Path)

	// Writing over it needs --force.
	_, errOut, code = runCLI(t, "init", "--openapi", "../../docs/openapi.yaml", "--operation", "createRefund", "--out", out)
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "exists: pick another file or add --force")

	// The reference server the document describes, with its default configuration.
	srv, err := reference.New()
	require.NoError(t, err)
	t.Cleanup(func() { srv.Close() })
	api := httptest.NewServer(srv)
	t.Cleanup(api.Close)
	t.Setenv("API_URL", api.URL)

	stdout, errOut, code := runCLI(t, "check", "--profile", out, "--only", "replay/*,fingerprint/*,key/*,scope/*,storage/*,race/duplicate-*", "--seed", "9")
	require.Equal(t, 0, code, "the written profile passes the preflight and the catalogue:\n%s\n%s", stdout, errOut)
	require.Contains(t, stdout, "no failures")
	require.Regexp(t, `(?m)^PASS\s+scope/other-endpoint\s`, stdout, "the second keyed operation was found")
	require.Regexp(t, `(?m)^(PASS|INFO)\s+storage/validation-not-stored\s+\S+\s+\S+\s+validation 400 not stored: the corrected request executed`, stdout, "the validation error guessed from the schema: not stored (a policy the profile does not declare, so INFO)")
}

func TestInitTemplateAndErrors(t *testing.T) {
	stdout, _, code := runCLI(t, "init")
	require.Equal(t, 0, code)
	require.Contains(t, stdout, "# idemproof target profile")
	_, err := profile.Parse("template", []byte(stdout))
	require.NoError(t, err)

	_, errOut, code := runCLI(t, "init", "--operation", "x")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "--operation needs --openapi")

	_, errOut, code = runCLI(t, "init", "--openapi", "../../docs/openapi.yaml")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "pick one with --operation: createInvoice (POST /v1/invoices), createRefund (POST /v1/refunds)")

	missing := filepath.Join(t.TempDir(), "nope.yaml")
	_, errOut, code = runCLI(t, "init", "--openapi", missing)
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "--openapi: open "+missing)
}
