package scenarios_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/scenarios"
	"github.com/idemproof/idemproof/verdict"
)

// startTLSFake serves f over https with a certificate of httptest's own CA (for
// 127.0.0.1), and writes that CA to ca.pem in dir.
func startTLSFake(t *testing.T, f *fakeRefunds, dir string) string {
	t.Helper()
	f.keys, f.ledger = map[string]*fakeEntry{}, map[string]int{}
	srv := httptest.NewTLSServer(f)
	t.Cleanup(srv.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ca.pem"), ca, 0o644))
	return srv.URL
}

// tlsProfile writes fakeProfile's profile of base to dir/name, with extra lines, and
// loads it.
func tlsProfile(t *testing.T, dir, name, base, extra string) (*profile.Profile, error) {
	t.Helper()
	path := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(path, []byte(`name: fake-https
base_url: `+base+`
operation:
  path: /v1/refunds
  body: '{"order_id": "{{.Entity}}", "amount": 4900}'
  altered_body: '{"order_id": "{{.Entity}}", "amount": 5000}'
side_effects: {path: '/v1/refunds?order_id={{.Entity}}', count: count}
expect: {in_flight: 409, mismatch: 422, missing_key: "400", replay_header: Idempotent-Replayed}
slow_operation: {header: X-Test-Delay, value: 400ms}
client_timeout: 1s
`+extra), 0o644))
	return profile.Load(path)
}

// The preflight of an https target whose CA only tls.ca_file names: trusted with it; without
// it, an error that names tls.ca_file as the fix.
func TestPreflightTrustsTheCAOfTLSCAFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	base := startTLSFake(t, &fakeRefunds{}, dir)

	with, err := tlsProfile(t, dir, "with.yaml", base, "tls: {ca_file: ca.pem}\n")
	require.NoError(t, err)
	require.Equal(t, filepath.Join(dir, "ca.pem"), with.TLS.CAFile, "read from the profile's folder")
	require.NoError(t, scenarios.Preflight(context.Background(), with))

	without, err := tlsProfile(t, dir, "without.yaml", base, "")
	require.NoError(t, err)
	pe := preflightErr(t, without)
	require.Equal(t, "tls.ca_file", pe.Field)
	require.Contains(t, pe.Error(), "base_url "+base+" answers, but its TLS certificate is not trusted")
	require.Contains(t, pe.Error(), "certificate signed by unknown authority")
	require.Contains(t, pe.Error(), ": set tls.ca_file to the PEM file of the CA that signed it")
}

// A tls.ca_file that holds another CA: the file is named as what to fix.
func TestPreflightNamesATLSCAFileOfAnotherCA(t *testing.T) {
	t.Parallel()
	dir, other := t.TempDir(), t.TempDir()
	base := startTLSFake(t, &fakeRefunds{}, dir)
	require.NoError(t, os.WriteFile(filepath.Join(other, "ca.pem"), otherCAPEM(t), 0o644))

	p, err := tlsProfile(t, dir, "p.yaml", base, "tls: {ca_file: "+filepath.Join(other, "ca.pem")+"}\n")
	require.NoError(t, err)
	pe := preflightErr(t, p)
	require.Equal(t, "tls.ca_file", pe.Field)
	require.Contains(t, pe.Error(), "tls.ca_file "+filepath.Join(other, "ca.pem")+" does not hold the CA that signed it")
}

// Every connection of a run to an https target trusts tls.ca_file: the in-process proxy's
// upstream (replay/after-503), the transport's direct attempts (key/header-case), the
// keep-alive client's (race/keepalive-many-keys), the ledger reads (all of them). The
// verdicts are those of the same fake over plain http.
func TestRunOverHTTPSWithTLSCAFile(t *testing.T) {
	t.Parallel()
	only := []string{"replay/sequential", "replay/after-503", "key/header-case", "race/keepalive-many-keys"}
	run := func(p *profile.Profile) map[string]verdict.Verdict {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		rep, err := scenarios.Run(ctx, scenarios.RunConfig{Profiles: []*profile.Profile{p}, Only: only, Seed: 3})
		require.NoError(t, err)
		for _, r := range rep.Results {
			t.Logf("%s %s: %s", r.Verdict, r.ScenarioID, r.Message)
		}
		return verdicts(rep)
	}
	plain := run(fakeProfile(t, startFake(t, &fakeRefunds{})))
	require.Len(t, plain, len(only))
	for id, v := range plain {
		require.NotEqual(t, verdict.Unknown, v, id)
	}

	dir := t.TempDir()
	p, err := tlsProfile(t, dir, "https.yaml", startTLSFake(t, &fakeRefunds{}, dir), "tls: {ca_file: ca.pem}\n")
	require.NoError(t, err)
	require.Equal(t, plain, run(p))
}

func TestTLSCAFileErrorsNameTheFieldAndTheFix(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, err := tlsProfile(t, dir, "missing.yaml", "https://127.0.0.1:8443", "tls: {ca_file: missing.pem}\n")
	require.Error(t, err)
	require.Contains(t, err.Error(), "tls.ca_file: cannot read it (open "+filepath.Join(dir, "missing.pem")+": no such file or directory): give the PEM file of the CA that signed the server's certificate")
	require.Contains(t, err.Error(), "line 11: ", "the line of the field")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "key.pem"), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte("not a certificate")}), 0o644))
	_, err = tlsProfile(t, dir, "key.yaml", "https://127.0.0.1:8443", "tls: {ca_file: key.pem}\n")
	require.Error(t, err)
	require.Contains(t, err.Error(), "tls.ca_file: "+filepath.Join(dir, "key.pem")+" holds no PEM certificate (a -----BEGIN CERTIFICATE----- block): give the certificate of the CA")

	_, err = tlsProfile(t, dir, "dir.yaml", "https://127.0.0.1:8443", "tls: {ca_file: .}\n")
	require.Error(t, err)
	require.Contains(t, err.Error(), "tls.ca_file: "+dir+" is not a regular file")

	// Built in Go: Validate reads the file too.
	p := fakeProfile(t, "https://127.0.0.1:8443")
	p.TLS = &profile.TLSOptions{CAFile: filepath.Join(dir, "missing.pem")}
	require.ErrorContains(t, p.Validate(), "tls.ca_file: cannot read it")
	_, err = p.TLSClientConfig()
	require.ErrorContains(t, err, "tls.ca_file: cannot read it")
}

// A relative tls.ca_file is read from the folder of the file that names it, also when
// another profile extends that file from elsewhere.
func TestTLSCAFileOfAnExtendedProfileIsReadFromItsFolder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	base := startTLSFake(t, &fakeRefunds{}, dir)
	_, err := tlsProfile(t, dir, "base.yaml", base, "tls: {ca_file: ca.pem}\n")
	require.NoError(t, err)
	sub := filepath.Join(dir, "targets")
	require.NoError(t, os.Mkdir(sub, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(sub, "child.yaml"), []byte("extends: ../base.yaml\nname: child\n"), 0o644))
	p, err := profile.Load(filepath.Join(sub, "child.yaml"))
	require.NoError(t, err)
	require.Equal(t, filepath.Join(dir, "ca.pem"), p.TLS.CAFile)
	require.NoError(t, scenarios.Preflight(context.Background(), p))
}

// otherCAPEM is a CA certificate of a CA that signed nothing the tests serve.
func otherCAPEM(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "idemproof other test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}
