package main_test

import (
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// An https upstream whose CA only --upstream-ca-file names is relayed; without the flag
// the proxy cannot verify it and answers 502. A file with no certificate is refused at
// start with what to fix.
func TestProxyVerifiesAnHTTPSUpstreamWithUpstreamCAFile(t *testing.T) {
	api := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, `{"id":"re_1"}`)
	}))
	t.Cleanup(api.Close)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	require.NoError(t, os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: api.Certificate().Raw}), 0o644))
	post := func(proxy string) int {
		req, err := http.NewRequest(http.MethodPost, proxy+"/v1/refunds", strings.NewReader(`{}`))
		require.NoError(t, err)
		req.Header.Set("Idempotency-Key", "k-1")
		resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	require.Equal(t, http.StatusCreated, post(proxyURL(t, api.URL, "--upstream-ca-file", ca)))
	require.Equal(t, http.StatusBadGateway, post(proxyURL(t, api.URL)), "an upstream of an unknown CA is not reached")

	empty := filepath.Join(t.TempDir(), "empty.pem")
	require.NoError(t, os.WriteFile(empty, []byte("not a certificate\n"), 0o644))
	out, err := exec.Command(checkBinary(t), "proxy", "--upstream", api.URL, "--upstream-ca-file", empty).CombinedOutput()
	require.Error(t, err)
	require.Contains(t, string(out), "--upstream-ca-file: "+empty+" holds no PEM certificate")
}

func proxyURL(t *testing.T, upstream string, args ...string) string {
	t.Helper()
	proxy, _ := startProxyAt(t, upstream, nil, args...)
	return proxy
}
