package faultproxy_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/faultproxy"
)

// headers: a status fault's answer carries the response headers an API's retry signals
// travel in (x-should-retry, Stripe-Should-Retry, Retry-After-Ms, an HTTP-date
// Retry-After), before and after the upstream committed, as Go, JSON and YAML rules.
func TestStatusFaultSendsItsHeaders(t *testing.T) {
	headers := map[string]string{
		"x-should-retry":      "false",
		"Stripe-Should-Retry": "false",
		"Retry-After-Ms":      "1500",
		"Retry-After":         "Wed, 21 Oct 2037 07:28:00 GMT",
	}
	for _, typ := range []string{faultproxy.FaultBeforeStatus, faultproxy.FaultAfterStatus} {
		f := newFixture(t, faultproxy.Config{})
		f.addRule(faultproxy.Rule{Name: "h", Match: faultproxy.Match{Key: "*"},
			Fault: faultproxy.FaultSpec{Type: typ, Status: 503, Headers: headers}})
		req, err := http.NewRequest(http.MethodPost, f.srv.URL()+"/v1/refunds", strings.NewReader(`{}`))
		require.NoError(t, err)
		req.Header.Set("Idempotency-Key", "k-"+typ)
		resp, err := f.client.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, 503, resp.StatusCode, typ)
		for name, value := range headers {
			require.Equal(t, value, resp.Header.Get(name), "%s: %s", typ, name)
		}
		require.Equal(t, typ == faultproxy.FaultAfterStatus, f.only("k-"+typ).ReachedUpstream)
	}

	const yamlRule = `[{name: s, fault: {type: after-status, status: 503, headers: {x-should-retry: "false", Retry-After-Ms: "1500"}}}]`
	const jsonRule = `[{"name":"s","fault":{"type":"after-status","status":503,"headers":{"x-should-retry":"false","Retry-After-Ms":"1500"}}}]`
	fromYAML, err := faultproxy.ParseRulesYAML([]byte(yamlRule))
	require.NoError(t, err)
	fromJSON, err := faultproxy.ParseRulesJSON([]byte(jsonRule))
	require.NoError(t, err)
	require.Equal(t, fromYAML, fromJSON)
	require.Equal(t, map[string]string{"x-should-retry": "false", "Retry-After-Ms": "1500"}, fromJSON[0].Fault.Headers)
	b, err := json.Marshal(fromJSON)
	require.NoError(t, err)
	again, err := faultproxy.ParseRulesJSON(b)
	require.NoError(t, err)
	require.Equal(t, fromJSON, again, "a rule keeps its headers on its way through JSON")

	// The admin API takes them too.
	f := newFixture(t, faultproxy.Config{})
	code, _, raw := adminCall(t, f.proxy.AdminHandler(""), "POST", "/rules", `{"name":"s","fault":{"type":"before-status","status":429,"headers":{"Retry-After-Ms":"250"}}}`, nil)
	require.Equal(t, http.StatusCreated, code, raw)
	resp, err := f.client.Post(f.srv.URL()+"/v1/refunds", "application/json", strings.NewReader(`{}`))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 429, resp.StatusCode)
	require.Equal(t, "250", resp.Header.Get("Retry-After-Ms"))
}

// A header the proxy must own (framing, hop-by-hop), a Content-Type beside content_type,
// a Retry-After beside retry_after, a bad name or value, and headers on a fault that
// sends no answer of its own are refused, naming the field.
func TestStatusFaultHeadersRefused(t *testing.T) {
	for rule, want := range map[string]string{
		`{"name":"x","fault":{"type":"before-status","headers":{"Content-Length":"3"}}}`:              `fault.headers.Content-Length: the proxy sets it`,
		`{"name":"x","fault":{"type":"before-status","headers":{"Transfer-Encoding":"chunked"}}}`:     `fault.headers.Transfer-Encoding: the proxy sets it`,
		`{"name":"x","fault":{"type":"before-status","headers":{"Connection":"close"}}}`:              `fault.headers.Connection: the proxy sets it`,
		`{"name":"x","fault":{"type":"before-status","headers":{"content-type":"text/html"}}}`:        `fault.headers.content-type: use fault.content_type`,
		`{"name":"x","fault":{"type":"before-status","retry_after":1,"headers":{"Retry-After":"2"}}}`: `fault.headers.Retry-After: given twice`,
		`{"name":"x","fault":{"type":"before-status","headers":{"Bad Name":"1"}}}`:                    `fault.headers: "Bad Name" is not a header name`,
		`{"name":"x","fault":{"type":"before-status","headers":{"X-A":"one\r\nX-B: two"}}}`:           `fault.headers.X-A: a header value`,
		`{"name":"x","fault":{"type":"after-reset","headers":{"X-A":"1"}}}`:                           `fault.headers: not a parameter of after-reset`,
		`{"name":"x","fault":{"type":"before-status","headers":{"X-A":"1","x-a":"2"}}}`:               `given twice`,
		`{"name":"x","fault":{"type":"before-status","headers":{"X-A":1}}}`:                           `fault.headers.X-A: want a string`,
	} {
		_, err := faultproxy.ParseRulesJSON([]byte(rule))
		require.ErrorContains(t, err, want, rule)
	}
	_, err := faultproxy.ParseRulesJSON([]byte(`{"name":"x","fault":{"type":"before-status","headers":{"X-A":"` + strings.Repeat("v", 9000) + `"}}}`))
	require.ErrorContains(t, err, "fault.headers: at most 8192 bytes")
}
