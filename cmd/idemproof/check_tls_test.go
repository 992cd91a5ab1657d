package main_test

import (
	"encoding/pem"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/reference"
)

// `idemproof check` of an https target whose CA only the profile's tls.ca_file names
// (beside the profile, named relatively): checked like any other; without the field, the
// preflight stops it, exit 2, and names tls.ca_file. No SSL_CERT_FILE in either run.
func TestCheckVerifiesAnHTTPSTargetWithTLSCAFile(t *testing.T) {
	srv, err := reference.New(reference.WithTestHooks(true))
	require.NoError(t, err)
	t.Cleanup(func() { srv.Close() })
	api := httptest.NewTLSServer(srv) // 127.0.0.1, a certificate of httptest's own CA
	t.Cleanup(api.Close)
	t.Setenv("SSL_CERT_FILE", "")
	t.Setenv("SSL_CERT_DIR", "")

	with := writeProfile(t, "https-ca", "base_url: "+api.URL+"\ntls: {ca_file: test-ca.pem}\n")
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: api.Certificate().Raw})
	require.NoError(t, os.WriteFile(filepath.Join(filepath.Dir(with), "test-ca.pem"), ca, 0o644))
	only := []string{"--only", "replay/sequential,replay/after-503,key/missing", "--strict", "--seed", "4"}

	out, errOut, code := runCLI(t, append([]string{"check", "--profile", with, "--report-dir", t.TempDir()}, only...)...)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, errOut)
	require.Regexp(t, `(?m)^PASS\s+replay/after-503\s+https-ca\s`, out)

	without := writeProfile(t, "https-no-ca", "base_url: "+api.URL+"\n")
	out, errOut, code = runCLI(t, append([]string{"check", "--profile", without, "--report-dir", t.TempDir()}, only...)...)
	require.Equal(t, 2, code, "stdout:\n%s\nstderr:\n%s", out, errOut)
	require.Contains(t, errOut, "idemproof check: preflight target https-no-ca: base_url "+api.URL+" answers, but its TLS certificate is not trusted")
	require.Contains(t, errOut, "set tls.ca_file to the PEM file of the CA that signed it")
	require.NotRegexp(t, verdictLine, out, "no scenario ran")
}
