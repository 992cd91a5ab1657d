// Package images_test checks the idemproof image ci/images/build makes: it carries
// Debian's CA certificates, and `idemproof check` run from the container verifies an
// https:// target against them.
package images_test

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/stretchr/testify/require"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"

	"github.com/idemproof/idemproof/internal/dockertest"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/reference"
)

// runCheck runs `idemproof check` in the image on the host's network (the daemon runs
// on this machine, so the test's 127.0.0.1 is the container's) with the given files and
// environment, waits for it to exit, and returns its exit status and output.
func runCheck(t *testing.T, env map[string]string, files []testcontainers.ContainerFile, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ctr, err := testcontainers.Run(ctx, dockertest.AppImage(),
		testcontainers.WithCmd(append([]string{"check"}, args...)...),
		testcontainers.WithEnv(env),
		testcontainers.WithFiles(files...),
		testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) { hc.NetworkMode = "host" }),
		// The check is a batch job: readiness is its exit.
		testcontainers.WithWaitStrategy(wait.ForExit().WithExitTimeout(90*time.Second)),
	)
	testcontainers.CleanupContainer(t, ctr)
	require.NoError(t, err)
	state, err := ctr.State(ctx)
	require.NoError(t, err)
	logs, err := ctr.Logs(ctx)
	require.NoError(t, err)
	out, err := io.ReadAll(logs)
	require.NoError(t, err)
	return state.ExitCode, string(out)
}

func TestImageCarriesDebiansCACertificates(t *testing.T) {
	dockertest.Require(t, dockertest.AppImage())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ctr, err := testcontainers.Run(ctx, dockertest.AppImage(), testcontainers.WithCmd("version"),
		testcontainers.WithWaitStrategy(wait.ForExit().WithExitTimeout(30*time.Second)))
	testcontainers.CleanupContainer(t, ctr)
	require.NoError(t, err)
	r, err := ctr.CopyFileFromContainer(ctx, "/etc/ssl/certs/ca-certificates.crt")
	require.NoError(t, err)
	bundle, err := io.ReadAll(r)
	require.NoError(t, err)
	n := 0
	for rest := bundle; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		_, err := x509.ParseCertificate(block.Bytes)
		require.NoError(t, err)
		n++
	}
	require.Greater(t, n, 100, "the Mozilla set of Debian's ca-certificates")
	if want, err := os.ReadFile("/usr/share/ca-certificates/mozilla/ISRG_Root_X1.crt"); err == nil {
		require.Contains(t, string(bundle), strings.TrimSpace(string(want)), "the package's certificates, unchanged")
	}
}

func TestCheckFromTheContainerVerifiesAnHTTPSTarget(t *testing.T) {
	dockertest.Require(t, dockertest.AppImage())
	p, err := profile.Builtin("reference")
	require.NoError(t, err)
	srv, err := reference.New(reference.WithTestHooks(true),
		reference.WithRetention(time.Duration(p.Retention)), reference.WithLockTimeout(time.Duration(p.LockTimeout)))
	require.NoError(t, err)
	t.Cleanup(func() { srv.Close() })
	api := httptest.NewTLSServer(srv) // 127.0.0.1, a certificate of its own test CA
	t.Cleanup(api.Close)

	dir := t.TempDir()
	prof := filepath.Join(dir, "https.yaml")
	require.NoError(t, os.WriteFile(prof, []byte("extends: reference\nname: https-reference\nbase_url: "+api.URL+"\n"), 0o644))
	ca := filepath.Join(dir, "test-ca.pem")
	require.NoError(t, os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: api.Certificate().Raw}), 0o644))
	files := []testcontainers.ContainerFile{
		{HostFilePath: prof, ContainerFilePath: "/work/https.yaml", FileMode: 0o644},
		{HostFilePath: ca, ContainerFilePath: "/test-ca/test-ca.pem", FileMode: 0o644},
	}
	args := []string{"--profile", "/work/https.yaml", "--only", "replay/sequential,replay/after-503,key/missing", "--strict", "--seed", "4"}

	// The image's trust store is in use: the test CA is unknown to it.
	code, out := runCheck(t, nil, files, args...)
	require.NotEqual(t, 0, code, out)
	require.Contains(t, out, "certificate signed by unknown authority", "verified, not skipped")

	// With the test CA added beside Debian's bundle (Go reads both SSL_CERT_DIR and the
	// bundle file), the https target is checked like any other.
	code, out = runCheck(t, map[string]string{"SSL_CERT_DIR": "/test-ca"}, files, args...)
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "no failures")
	require.Regexp(t, `(?m)^PASS\s+replay/after-503\s+https-reference\s`, out)
}
