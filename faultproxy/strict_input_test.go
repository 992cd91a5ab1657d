package faultproxy_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/faultproxy"
)

// The same mistake in a rules file and in the admin API's JSON gets the same error:
// the rule's index, its field path, and the message. YAML used to drop unknown keys
// under fault: silently (stauts: 502 injected the default 503).
func TestYAMLAndJSONRefuseTheSameTypoAlike(t *testing.T) {
	cases := []struct{ yaml, json, field string }{
		{`[{name: a, fault: {type: after-reset}}, {name: b, fault: {type: after-status, stauts: 502}}]`,
			`[{"name":"a","fault":{"type":"after-reset"}},{"name":"b","fault":{"type":"after-status","stauts":502}}]`, "fault.stauts"},
		{`[{name: a, match: {attempts: {form: 1}}, fault: {type: after-reset}}]`,
			`[{"name":"a","match":{"attempts":{"form":1}},"fault":{"type":"after-reset"}}]`, "match.attempts.form"},
		{`[{name: a, Fault: {type: after-reset}}]`, `[{"name":"a","Fault":{"type":"after-reset"}}]`, "Fault"},
		{`[{name: a, fault: {type: after-status, status: "502"}}]`, `[{"name":"a","fault":{"type":"after-status","status":"502"}}]`, "fault.status"},
		{`[{name: a, count: 1.5, fault: {type: after-reset}}]`, `[{"name":"a","count":1.5,"fault":{"type":"after-reset"}}]`, "count"},
		{`[{name: a, match: {headers: {X-A: "", x-a: "1"}}, fault: {type: after-reset}}]`,
			`[{"name":"a","match":{"headers":{"X-A":"","x-a":"1"}},"fault":{"type":"after-reset"}}]`, "match.headers.x-a"},
		{`[{name: a, fault: {type: after-delay, duration_ms: -5}}]`, `[{"name":"a","fault":{"type":"after-delay","duration_ms":-5}}]`, "fault.duration_ms"},
	}
	for _, tc := range cases {
		_, errY := faultproxy.ParseRulesYAML([]byte(tc.yaml))
		_, errJ := faultproxy.ParseRulesJSON([]byte(tc.json))
		for _, err := range []error{errY, errJ} {
			var re *faultproxy.RuleError
			require.True(t, errors.As(err, &re), "want *RuleError, got %v", err)
			require.Equal(t, tc.field, re.Field, "%v", err)
		}
		require.Equal(t, errJ.Error(), errY.Error())
	}
	_, err := faultproxy.ParseRulesYAML([]byte(`[{name: a, fault: {type: after-reset}}, {name: b, fault: {type: after-status, stauts: 502}}]`))
	require.EqualError(t, err, `rule 1 ("b"): fault.stauts: unknown field; fault takes body, bytes, content_type, duration_ms, headers, jsonrpc_id, mode, retry_after, status, then, type (names are case-sensitive)`)
}

// The admin API's JSON is strict: field names case-sensitive, nothing after the value,
// no field twice.
func TestAdminJSONIsStrict(t *testing.T) {
	p, err := faultproxy.New(faultproxy.Config{Upstream: "http://127.0.0.1:1"})
	require.NoError(t, err)
	h := p.AdminHandler("")
	for body, want := range map[string]string{
		`{"name":"a","fault":{"type":"after-reset"}}]]]}}`:                       "after the JSON value",
		`{"name":"a","fault":{"type":"after-reset"}} {"name":"b"}`:               "after the JSON value",
		`{"NAME":"a","fault":{"type":"after-reset"}}`:                            `NAME: unknown field`,
		`{"name":"a","fault":{"TYPE":"after-reset"}}`:                            `fault.TYPE: unknown field`,
		`{"name":"a","name":"b","fault":{"type":"after-reset"}}`:                 `name: given twice`,
		`{"name":"a","fault":{"type":"after-status","status":502,"status":503}}`: `fault.status: given twice`,
		``:    "empty body",
		`[1]`: "want a rule object",
	} {
		code, m, raw := adminCall(t, h, "POST", "/rules", body, nil)
		require.Equal(t, 400, code, "%s: %s", body, raw)
		require.Contains(t, m["error"], want, body)
	}
	require.Empty(t, p.Rules())
}

// A batch is added all or none: the third rule's error leaves the first two out, so the
// corrected batch can be sent again.
func TestAdminBatchIsAtomic(t *testing.T) {
	p, err := faultproxy.New(faultproxy.Config{Upstream: "http://127.0.0.1:1"})
	require.NoError(t, err)
	h := p.AdminHandler("")
	bad := `[{"name":"a","fault":{"type":"after-reset"}},{"name":"b","fault":{"type":"after-close"}},{"name":"c","fault":{"type":"after-status","status":42}}]`
	code, m, _ := adminCall(t, h, "POST", "/rules", bad, nil)
	require.Equal(t, 400, code)
	require.Equal(t, "fault.status", m["field"])
	require.Contains(t, m["error"], "rule 2")
	require.Empty(t, p.Rules(), "a failing batch leaves no rule")

	code, _, _ = adminCall(t, h, "POST", "/rules", `{"name":"b","fault":{"type":"after-reset"}}`, nil)
	require.Equal(t, 201, code)
	// A name in use by an installed rule, or twice in the batch: nothing is added.
	for _, batch := range []string{
		`[{"name":"a","fault":{"type":"after-reset"}},{"name":"b","fault":{"type":"after-close"}}]`,
		`[{"name":"x","fault":{"type":"after-reset"}},{"name":"x","fault":{"type":"after-close"}}]`,
	} {
		code, _, raw := adminCall(t, h, "POST", "/rules", batch, nil)
		require.Equal(t, 409, code, raw)
		require.Len(t, p.Rules(), 1)
	}
	code, _, raw := adminCall(t, h, "POST", "/rules", strings.Replace(bad, "42", "502", 1), nil)
	require.Equal(t, 409, code, "b is installed: %s", raw)
	code, _, raw = adminCall(t, h, "POST", "/rules", strings.Replace(strings.Replace(bad, "42", "502", 1), `"b"`, `"b2"`, 1), nil)
	require.Equal(t, 201, code, raw)
	require.Len(t, p.Rules(), 4)
}

// At most MaxRules rules; one batch of that many is added in one step (O(1) amortised
// per rule, not a copy of the list per rule), and one more is refused clearly.
func TestRuleLimit(t *testing.T) {
	p, err := faultproxy.New(faultproxy.Config{Upstream: "http://127.0.0.1:1"})
	require.NoError(t, err)
	var b strings.Builder
	b.WriteByte('[')
	for i := range faultproxy.MaxRules {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":"r%d","match":{"path":"/never/%d"},"fault":{"type":"after-reset"}}`, i, i)
	}
	b.WriteByte(']')
	h := p.AdminHandler("")
	code, _, raw := adminCall(t, h, "POST", "/rules", b.String(), nil)
	require.Equal(t, 201, code, raw[:min(len(raw), 200)])
	require.Len(t, p.Rules(), faultproxy.MaxRules)
	code, m, _ := adminCall(t, h, "POST", "/rules", `{"name":"one-more","fault":{"type":"after-reset"}}`, nil)
	require.Equal(t, 400, code)
	require.Contains(t, m["error"], "at most 10000 rules")
	require.ErrorIs(t, p.AddRule(t.Context(), faultproxy.Rule{Name: "x", Fault: faultproxy.FaultSpec{Type: faultproxy.FaultAfterReset}}), faultproxy.ErrTooManyRules)
	require.NoError(t, p.DeleteRule(t.Context(), "r5"))
	require.NoError(t, p.AddRule(t.Context(), faultproxy.Rule{Name: "x", Fault: faultproxy.FaultSpec{Type: faultproxy.FaultAfterReset}}))
	rules := p.Rules()
	require.Equal(t, "r4", rules[4].Name)
	require.Equal(t, "r6", rules[5].Name)
	require.Equal(t, "x", rules[len(rules)-1].Name)
}

// The admin API answers only to loopback names, IP literals, its listen host and the
// names it was given: a DNS-rebinding page sends its own name as Host.
func TestAdminChecksHost(t *testing.T) {
	p, err := faultproxy.New(faultproxy.Config{Upstream: "http://127.0.0.1:1", AdminAddr: "proxy-admin:8474", AdminAllowHosts: []string{"harness.internal"}})
	require.NoError(t, err)
	h := p.AdminHandler("")
	for host, want := range map[string]int{
		"evil.example": 403, "evil.example:8474": 403, "localhost.evil.example": 403,
		"127.0.0.1:8474": 200, "[::1]:8474": 200, "localhost:1": 200, "LOCALHOST.": 200, "a.localhost": 200,
		"10.1.2.3": 200, "proxy-admin:8474": 200, "harness.internal": 200, "Harness.Internal:9": 200,
	} {
		code, m, _ := adminCall(t, h, "GET", "/healthz", "", map[string]string{"Host": host})
		require.Equal(t, want, code, host)
		if want == 403 {
			require.Contains(t, m["error"], "--admin-allow-host")
		}
	}
}
