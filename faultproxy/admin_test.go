package faultproxy_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/faultproxy"
)

func adminCall(t *testing.T, h http.Handler, method, path, body string, hdr map[string]string) (int, map[string]any, string) {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Host = "127.0.0.1:8474"
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	raw, _ := io.ReadAll(rec.Body)
	var m map[string]any
	json.Unmarshal(raw, &m)
	return rec.Code, m, string(raw)
}

func TestAdminAPI(t *testing.T) {
	p, err := faultproxy.New(faultproxy.Config{Upstream: "http://127.0.0.1:1"})
	require.NoError(t, err)
	h := p.AdminHandler("")

	code, m, _ := adminCall(t, h, "GET", "/healthz", "", nil)
	require.Equal(t, 200, code)
	require.Equal(t, "ok", m["status"])

	code, _, raw := adminCall(t, h, "POST", "/rules", `[{"name":"a","fault":{"type":"after-status","status":502}},{"name":"b","match":{"key":"*"},"fault":{"type":"after-hold","duration_ms":250}}]`, nil)
	require.Equal(t, 201, code, raw)
	code, _, raw = adminCall(t, h, "GET", "/rules", "", nil)
	require.Equal(t, 200, code)
	var rules []faultproxy.RuleStatus
	require.NoError(t, json.Unmarshal([]byte(raw), &rules))
	require.Len(t, rules, 2)
	require.Contains(t, raw, `"duration_ms":250`)

	code, m, _ = adminCall(t, h, "POST", "/rules", `{"name":"a","fault":{"type":"after-reset"}}`, nil)
	require.Equal(t, 409, code)
	require.Equal(t, "name", m["field"])

	code, m, _ = adminCall(t, h, "POST", "/rules", `{"name":"c","fault":{"type":"after-truncate","bytes":-2}}`, nil)
	require.Equal(t, 400, code)
	require.Equal(t, "fault.bytes", m["field"])
	require.Contains(t, m["error"], "must be >= 0")

	code, m, _ = adminCall(t, h, "POST", "/rules", `{"name":"c","fault":{"type":"after-reset"},"colour":"red"}`, nil)
	require.Equal(t, 400, code)
	require.Contains(t, m["error"], "colour")

	code, _, _ = adminCall(t, h, "DELETE", "/rules/a", "", nil)
	require.Equal(t, 204, code)
	code, m, _ = adminCall(t, h, "DELETE", "/rules/a", "", nil)
	require.Equal(t, 404, code)
	require.Equal(t, "name", m["field"])

	code, m, _ = adminCall(t, h, "GET", "/journal?since=x", "", nil)
	require.Equal(t, 400, code)
	require.Equal(t, "since", m["field"])
	code, m, _ = adminCall(t, h, "GET", "/journal?key=k&since=0", "", nil)
	require.Equal(t, 200, code)
	require.Equal(t, []any{}, m["records"])
	require.Equal(t, float64(faultproxy.DefaultJournalCapacity), m["capacity"])

	code, _, _ = adminCall(t, h, "POST", "/reset", "", nil)
	require.Equal(t, 204, code)
	require.Empty(t, p.Rules())

	code, m, _ = adminCall(t, h, "GET", "/nope", "", nil)
	require.Equal(t, 404, code)
	require.Contains(t, m["error"], "/nope")
}

func TestAdminRefusesBrowsersAndChecksToken(t *testing.T) {
	p, err := faultproxy.New(faultproxy.Config{Upstream: "http://127.0.0.1:1"})
	require.NoError(t, err)
	h := p.AdminHandler("tok")
	auth := map[string]string{"Authorization": "Bearer tok"}

	code, _, _ := adminCall(t, h, "GET", "/healthz", "", nil)
	require.Equal(t, 401, code)
	code, _, _ = adminCall(t, h, "GET", "/healthz", "", map[string]string{"Authorization": "Bearer wrong"})
	require.Equal(t, 401, code)
	code, _, _ = adminCall(t, h, "GET", "/healthz", "", auth)
	require.Equal(t, 200, code)

	for _, hdr := range []map[string]string{
		{"Authorization": "Bearer tok", "Origin": "http://evil.example"},
		{"Authorization": "Bearer tok", "Sec-Fetch-Site": "cross-site"},
	} {
		code, m, _ := adminCall(t, h, "POST", "/reset", "", hdr)
		require.Equal(t, 403, code)
		require.Contains(t, m["error"], "browser")
	}
}
