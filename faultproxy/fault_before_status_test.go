package faultproxy_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/faultproxy"
)

func TestBeforeStatusNeverReachesUpstream(t *testing.T) {
	f := newFixture(t, faultproxy.Config{})
	f.addRule(faultproxy.Rule{Name: "gw", Match: faultproxy.Match{Key: "*"},
		Fault: faultproxy.FaultSpec{Type: faultproxy.FaultBeforeStatus, Status: 503, RetryAfter: 2, Body: "busy"}})

	status, body, err := f.post("k1", `{"amount":4900}`)
	require.NoError(t, err)
	require.Equal(t, http.StatusServiceUnavailable, status)
	require.Equal(t, "busy", string(body))
	require.Equal(t, 0, f.up.total(), "a before fault must not reach the upstream")

	rec := f.only("k1")
	require.False(t, rec.ReachedUpstream)
	require.Equal(t, 0, rec.UpstreamCalls)
	require.Equal(t, "gw", rec.Rule)
	require.Equal(t, faultproxy.FaultBeforeStatus, rec.Fault)
	require.Equal(t, 503, rec.ClientStatus)
	require.Equal(t, faultproxy.ClientDelivered, rec.ClientResult)
	require.Equal(t, faultproxy.OutcomeInfo, rec.Outcome)
	require.Equal(t, "[redacted]", rec.Headers["Authorization"])
	// The body never went upstream, yet it is fingerprinted.
	require.Equal(t, sha(`{"amount":4900}`), rec.BodySHA256)
}

func TestBeforeStatusDefaultIs503WithRetryAfter(t *testing.T) {
	f := newFixture(t, faultproxy.Config{})
	f.addRule(faultproxy.Rule{Name: "gw", Fault: faultproxy.FaultSpec{Type: faultproxy.FaultBeforeStatus, RetryAfter: 1}})
	req, _ := http.NewRequest(http.MethodGet, f.srv.URL()+"/x", nil)
	resp, err := f.client.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 503, resp.StatusCode)
	require.Equal(t, "1", resp.Header.Get("Retry-After"))
	require.Equal(t, 0, f.up.total())
}

// A status fault's body says what it is: JSON is sent as application/json (a client
// that reads an API's error object by its type sees one), text as text/plain, and a
// rule may name the type itself (application/problem+json).
func TestStatusFaultContentType(t *testing.T) {
	f := newFixture(t, faultproxy.Config{})
	for name, tc := range map[string]struct{ body, ctype, want string }{
		"json":    {`{"error":{"type":"idempotency_error"}}`, "", "application/json"},
		"text":    {"busy", "", "text/plain; charset=utf-8"},
		"none":    {"", "", "text/plain; charset=utf-8"},
		"problem": {`{"type":"in-use"}`, "application/problem+json", "application/problem+json"},
	} {
		f.addRule(faultproxy.Rule{Name: name, Match: faultproxy.Match{Key: "k-" + name},
			Fault: faultproxy.FaultSpec{Type: faultproxy.FaultBeforeStatus, Status: 409, Body: tc.body, ContentType: tc.ctype}})
		req, _ := http.NewRequest(http.MethodPost, f.srv.URL()+"/v1/refunds", nil)
		req.Header.Set("Idempotency-Key", "k-"+name)
		resp, err := f.client.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, 409, resp.StatusCode, name)
		require.Equal(t, tc.want, resp.Header.Get("Content-Type"), name)
	}
	err := f.proxy.AddRule(t.Context(), faultproxy.Rule{Name: "bad", Fault: faultproxy.FaultSpec{Type: faultproxy.FaultBeforeStatus, ContentType: "text/plain\r\nX: y"}})
	require.ErrorContains(t, err, "fault.content_type")
}

// content_type is a parameter of rules files and of the admin API as documented, and a
// rule keeps it on its way through JSON (GET /rules, a report of the rules used).
func TestStatusFaultContentTypeInRulesFiles(t *testing.T) {
	const yamlRule = `[{name: s, fault: {type: before-status, status: 409, body: '{"type":"in-use"}', content_type: application/problem+json}}]`
	const jsonRule = `[{"name":"s","fault":{"type":"before-status","status":409,"body":"{\"type\":\"in-use\"}","content_type":"application/problem+json"}}]`
	fromYAML, err := faultproxy.ParseRulesYAML([]byte(yamlRule))
	require.NoError(t, err)
	fromJSON, err := faultproxy.ParseRulesJSON([]byte(jsonRule))
	require.NoError(t, err)
	require.Equal(t, fromYAML, fromJSON)
	require.Equal(t, "application/problem+json", fromJSON[0].Fault.ContentType)
	b, err := json.Marshal(fromJSON)
	require.NoError(t, err)
	again, err := faultproxy.ParseRulesJSON(b)
	require.NoError(t, err)
	require.Equal(t, fromJSON, again)

	f := newFixture(t, faultproxy.Config{})
	code, _, raw := adminCall(t, f.proxy.AdminHandler(""), "POST", "/rules", `{"name":"s","fault":{"type":"before-status","status":409,"body":"{}","content_type":"application/problem+json"}}`, nil)
	require.Equal(t, http.StatusCreated, code, raw)
	req, _ := http.NewRequest(http.MethodPost, f.srv.URL()+"/v1/refunds", nil)
	resp, err := f.client.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, "application/problem+json", resp.Header.Get("Content-Type"))
}

// jsonrpc_id: a status fault standing in for a JSON-RPC server's error inside a 200
// answers the call it refuses, the request's id in its own (a JSON-RPC client drops an
// answer with another id as no answer to its call), before and after the upstream
// committed, with the key in a header (the body not read before the fault) or in the
// body; a request without an id gets null, and the journal says so.
func TestStatusFaultEchoesJSONRPCID(t *testing.T) {
	const refusal = `{"jsonrpc":"2.0","id":null,"error":{"code":-32010,"message":"in flight"}}`
	call := func(id string) string {
		return `{"jsonrpc":"2.0",` + id + `"method":"tools/call","params":{"name":"refund","_meta":{"idempotency_key":"K"}}}`
	}
	for _, cfg := range []faultproxy.Config{{}, {KeyField: "params._meta.idempotency_key"}} {
		for _, typ := range []string{faultproxy.FaultBeforeStatus, faultproxy.FaultAfterStatus} {
			f := newFixture(t, cfg)
			f.addRule(faultproxy.Rule{Name: "rpc", Match: faultproxy.Match{Key: "*"},
				Fault: faultproxy.FaultSpec{Type: typ, Status: 200, Body: refusal, JSONRPCID: true}})
			for id, want := range map[string]string{`"id":7,`: `7`, `"id":"c-1",`: `"c-1"`, `"id": 1.50,`: `1.50`, ``: `null`} {
				name := fmt.Sprintf("key field %q, %s, id %q", cfg.KeyField, typ, id)
				req, err := http.NewRequest(http.MethodPost, f.srv.URL()+"/mcp", strings.NewReader(call(id)))
				require.NoError(t, err)
				req.Header.Set("Idempotency-Key", "K")
				resp, err := f.client.Do(req)
				require.NoError(t, err, name)
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				require.Equal(t, 200, resp.StatusCode, name)
				require.JSONEq(t, `{"jsonrpc":"2.0","id":`+want+`,"error":{"code":-32010,"message":"in flight"}}`, string(body), name)
				require.Equal(t, "application/json", resp.Header.Get("Content-Type"), name)
			}
			recs := f.journal("K")
			require.Len(t, recs, 4)
			upstream := 0
			for _, r := range recs {
				if r.ReachedUpstream {
					upstream++
				}
				require.Equal(t, r.RPCID == "", strings.Contains(r.Note, "answer's id is null"), "%+v", r)
			}
			if typ == faultproxy.FaultAfterStatus {
				require.Equal(t, 4, upstream, "after-status lets each call commit")
			} else {
				require.Zero(t, upstream)
			}
		}
	}

	_, err := faultproxy.ParseRulesJSON([]byte(`[{"name":"x","fault":{"type":"before-status","status":200,"body":"busy","jsonrpc_id":true}}]`))
	require.ErrorContains(t, err, "fault.jsonrpc_id: needs a body that is a JSON-RPC response object")
	_, err = faultproxy.ParseRulesJSON([]byte(`[{"name":"x","fault":{"type":"after-reset","jsonrpc_id":true}}]`))
	require.ErrorContains(t, err, "fault.jsonrpc_id: not a parameter of after-reset")
	rules, err := faultproxy.ParseRulesYAML([]byte(`[{name: x, fault: {type: after-status, status: 200, body: '` + refusal + `', jsonrpc_id: true}}]`))
	require.NoError(t, err)
	require.True(t, rules[0].Fault.JSONRPCID)
}
