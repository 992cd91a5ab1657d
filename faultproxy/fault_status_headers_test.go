package faultproxy_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/faultproxy"
)

// A status fault may carry headers of its own: an API whose refusals differ only in a
// header (409 for both a repeat in flight and a changed payload, told apart by
// Idempotency-Outcome) is stood in for with that header.
func TestStatusFaultHeaders(t *testing.T) {
	f := newFixture(t, faultproxy.Config{})
	f.addRule(faultproxy.Rule{Name: "conflict", Match: faultproxy.Match{Key: "k1"},
		Fault: faultproxy.FaultSpec{Type: faultproxy.FaultBeforeStatus, Status: 409, Headers: map[string]string{"Idempotency-Outcome": "conflict"}}})
	req, _ := http.NewRequest(http.MethodPost, f.srv.URL()+"/v1/refunds", nil)
	req.Header.Set("Idempotency-Key", "k1")
	resp, err := f.client.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 409, resp.StatusCode)
	require.Equal(t, "conflict", resp.Header.Get("Idempotency-Outcome"))
	require.Equal(t, 0, f.up.total())

	for name, tc := range map[string]struct {
		headers map[string]string
		want    string
	}{
		"framing":      {map[string]string{"Content-Length": "3"}, "fault.headers.Content-Length"},
		"content type": {map[string]string{"content-type": "a/b"}, "fault.headers.content-type: set content_type instead"},
		"retry after":  {map[string]string{"Retry-After": "1"}, "fault.headers.Retry-After: set retry_after instead"},
		"bad name":     {map[string]string{"X Y": "1"}, "fault.headers.X Y: must be a header name"},
		"bad value":    {map[string]string{"X-Y": "1\r\nZ: 2"}, "fault.headers.X-Y: a value must be one line"},
	} {
		err := f.proxy.AddRule(t.Context(), faultproxy.Rule{Name: "bad", Fault: faultproxy.FaultSpec{Type: faultproxy.FaultBeforeStatus, Headers: tc.headers}})
		require.ErrorContains(t, err, tc.want, name)
	}
	err = f.proxy.AddRule(t.Context(), faultproxy.Rule{Name: "bad", Fault: faultproxy.FaultSpec{Type: faultproxy.FaultAfterReset, Headers: map[string]string{"X": "1"}}})
	require.ErrorContains(t, err, "fault.headers: not a parameter of after-reset")

	// Through rules files and the admin API, and back out of GET /rules.
	const yamlRule = `[{name: s, fault: {type: after-status, status: 409, headers: {Idempotency-Outcome: in_progress}}}]`
	rules, err := faultproxy.ParseRulesYAML([]byte(yamlRule))
	require.NoError(t, err)
	require.Equal(t, map[string]string{"Idempotency-Outcome": "in_progress"}, rules[0].Fault.Headers)
	b, err := json.Marshal(rules)
	require.NoError(t, err)
	again, err := faultproxy.ParseRulesJSON(b)
	require.NoError(t, err)
	require.Equal(t, rules, again)
}
