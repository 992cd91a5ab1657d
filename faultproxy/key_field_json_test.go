package faultproxy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/faultproxy"
)

// The key field is read from a body the proxy checks as JSON first: not too deep, valid,
// and naming the key once. What the proxy matches rules on must be the key the upstream
// will use; where decoders could read another one, the request is refused instead.

// nested is a tool call whose argument "pad" nests depth arrays, the key after it.
func nested(depth int, key string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"pad":` +
		strings.Repeat("[", depth) + strings.Repeat("]", depth) + `,"idempotency_key":"` + key + `"}}}`
}

// keyFieldPaths posts body to both paths of a proxy reading the key at metaKeyField, with
// a rule that loses the response of every keyed attempt, and returns what each client
// got and journaled; the upstream counts what reached it.
func keyFieldPaths(t *testing.T, body string) (map[string]*http.Response, map[string]faultproxy.Record, *upstream) {
	t.Helper()
	up := newUpstream(t, "a")
	paths := newTwoPathsWith(t, faultproxy.Config{Upstream: up.URL, KeyField: metaKeyField, Rules: []faultproxy.Rule{
		{Name: "lose", Match: faultproxy.Match{Key: "*"}, Fault: faultproxy.FaultSpec{Type: faultproxy.FaultAfterStatus, Status: 502}},
	}})
	resps, recs := map[string]*http.Response{}, map[string]faultproxy.Record{}
	for name, target := range map[string]struct {
		url string
		p   *faultproxy.Proxy
	}{"fast": {paths.fastURL, paths.fast}, "net/http": {paths.slowURL, paths.slow}} {
		resp, err := http.Post(target.url+"/mcp", "application/json", strings.NewReader(body))
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(b))
		resps[name] = resp
		got := journalOf(t, target.p)
		require.Len(t, got, 1, name)
		recs[name] = got[0]
	}
	return resps, recs, up
}

// A body nested past MaxJSONDepth is refused with 400 before the upstream sees it; one
// at the limit is read and faulted as usual.
func TestKeyFieldRefusesNestingPastTheLimit(t *testing.T) {
	// The tool call's own objects are 3 levels; pad adds the rest.
	resps, recs, up := keyFieldPaths(t, nested(faultproxy.MaxJSONDepth-3+1, "deep"))
	for path, resp := range resps {
		body, _ := io.ReadAll(resp.Body)
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, path)
		require.Contains(t, string(body), fmt.Sprintf("deeper than %d levels", faultproxy.MaxJSONDepth), path)
		rec := recs[path]
		require.False(t, rec.HasKey, path)
		require.False(t, rec.ReachedUpstream, path)
		require.Equal(t, http.StatusBadRequest, rec.ClientStatus, path)
		require.Contains(t, rec.Note, "deeper than", path)
	}
	require.Zero(t, up.total(), "a refused request never reaches the upstream")

	resps, recs, up = keyFieldPaths(t, nested(faultproxy.MaxJSONDepth-3, "at-limit"))
	for path, resp := range resps {
		require.Equal(t, http.StatusBadGateway, resp.StatusCode, path)
		require.Equal(t, "at-limit", recs[path].Key, path)
	}
	require.Equal(t, 2, up.total())
}

// A key the upstream's decoder could read differently is refused: the name twice in one
// object (the proxy's scan would take the first, Go's decoder and JSON.parse the last),
// or in another letter case (Go's decoder matches names ignoring case), at any level of
// the path, spelled plainly or with escapes.
func TestKeyFieldRefusesAmbiguousMembers(t *testing.T) {
	for name, body := range map[string]string{
		"twice":                   `{"params":{"_meta":{"idempotency_key":"a","idempotency_key":"b"}}}`,
		"twice, once escaped":     `{"params":{"_meta":{"idempotency_key":"a","idempotency\u005fkey":"b"}}}`,
		"a case variant after":    `{"params":{"_meta":{"idempotency_key":"a","Idempotency_Key":"b"}}}`,
		"a case variant before":   `{"params":{"_meta":{"IDEMPOTENCY_KEY":"b","idempotency_key":"a"}}}`,
		"only a case variant":     `{"params":{"_meta":{"Idempotency_Key":"b"}}}`,
		"a Kelvin sign K":         `{"params":{"_meta":{"idempotency_key":"a","idempotency_\u212aey":"b"}}}`,
		"an outer level twice":    `{"params":{"_meta":{"idempotency_key":"a"}},"params":{"_meta":{"idempotency_key":"b"}}}`,
		"an outer level variant":  `{"params":{"_meta":{"idempotency_key":"a"}},"Params":{}}`,
		"a middle level variant":  `{"params":{"_META":{"idempotency_key":"b"}}}`,
		"variant beside a nested": `{"params":{"_meta":{"x":{"idempotency_key":"c"},"idempotency_key":"a","idempotency_KEY":1}}}`,
	} {
		t.Run(name, func(t *testing.T) {
			require.True(t, json.Valid([]byte(body)))
			resps, recs, up := keyFieldPaths(t, body)
			for path, resp := range resps {
				msg, _ := io.ReadAll(resp.Body)
				require.Equal(t, http.StatusBadRequest, resp.StatusCode, path)
				require.Contains(t, string(msg), "ambiguous", path)
				require.False(t, recs[path].HasKey, path)
				require.Contains(t, recs[path].Note, "ambiguous", path)
			}
			require.Zero(t, up.total())
		})
	}
	// Other members may repeat or differ in case: only the key's path matters.
	resps, recs, _ := keyFieldPaths(t, `{"params":{"name":"x","Name":"y","_meta":{"idempotency_key":"k","note":1,"note":2}}}`)
	for path, resp := range resps {
		require.Equal(t, http.StatusBadGateway, resp.StatusCode, path)
		require.Equal(t, "k", recs[path].Key, path)
	}
}

// A body that is not valid JSON carries no key, whatever a scan up to the key would find:
// it goes to the upstream unkeyed (rules on keys do not fire) and the journal says why.
func TestKeyFieldIsNotReadFromInvalidJSON(t *testing.T) {
	for _, body := range []string{
		`{"params":{"_meta":{"idempotency_key":"k1"}}`,           // unclosed
		`{"params":{"_meta":{"idempotency_key":"k1"}}} trailing`, // data after the value
		`{"params":{"_meta":{"idempotency_key":"k1"}},}`,         // a trailing comma
	} {
		resps, recs, up := keyFieldPaths(t, body)
		for path, resp := range resps {
			require.Equal(t, http.StatusCreated, resp.StatusCode, "%s: %s", path, body)
			require.False(t, recs[path].HasKey, path)
			require.Contains(t, recs[path].Note, "not valid JSON", path)
		}
		require.Equal(t, 2, up.total())
	}
}

// A JSON-RPC batch (an array of calls) has no single key: it goes through unkeyed, so no
// rule on keys applies to it, and the journal says so.
func TestJSONRPCBatchCarriesNoKey(t *testing.T) {
	batch := `[` + toolCall("1", "k1") + `,` + toolCall("2", "k2") + `]`
	resps, recs, up := keyFieldPaths(t, batch)
	for path, resp := range resps {
		require.Equal(t, http.StatusCreated, resp.StatusCode, path)
		require.False(t, recs[path].HasKey, path)
		require.Contains(t, recs[path].Note, "batch", path)
	}
	require.Equal(t, 2, up.total())
}

// FuzzKeyFieldAgreesWithDecoders: whatever body the proxy reads a key from, Go's
// encoding/json (which matches member names ignoring case and keeps the last duplicate)
// and a case-sensitive decode into maps read the same key; a body it refuses as too deep
// is nested past MaxJSONDepth. The proxy answers every body (no crash, no unbounded wait).
func FuzzKeyFieldAgreesWithDecoders(f *testing.F) {
	f.Add([]byte(toolCall("1", "k1")))
	f.Add([]byte(`{"params":{"_meta":{"idempotency_key":42.50}}}`))
	f.Add([]byte(`{"params":{"_meta":{"idempotency_key":"a","Idempotency_Key":"b"}}}`))
	f.Add([]byte(`{"params":{"_meta":{"idempotency_key":"a"}},"params":1}`))
	f.Add([]byte(`{"params":{"_meta":{"idempotency\u005fkey":"\ud83d\ude00"}}}`))
	f.Add([]byte(`[{"params":{"_meta":{"idempotency_key":"k"}}}]`))
	f.Add([]byte(`{"params":{"_meta":{"idempotency_key":"k"}}`))
	f.Add([]byte(nested(faultproxy.MaxJSONDepth, "deep")))
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"pad":` +
		strings.Repeat("[", 3000) + strings.Repeat("]", 3000) + `,"idempotency_key":"k"}}}`))
	p, err := faultproxy.New(faultproxy.Config{Upstream: "http://127.0.0.1:1", KeyField: metaKeyField, Rules: []faultproxy.Rule{
		{Name: "stop", Fault: faultproxy.FaultSpec{Type: faultproxy.FaultBeforeStatus, Status: 200}},
	}})
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, body []byte) {
		p.Reset(context.Background())
		w := httptest.NewRecorder()
		p.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/mcp", bytes.NewReader(body)))
		recs, _ := p.Journal(context.Background(), faultproxy.JournalQuery{})
		require.Len(t, recs, 1)
		rec := recs[0]
		if w.Code == http.StatusBadRequest && strings.Contains(rec.Note, "deeper than") {
			require.Greater(t, depthOf(body), faultproxy.MaxJSONDepth)
			return
		}
		if !rec.HasKey {
			return
		}
		require.True(t, json.Valid(body), "a key was read from invalid JSON %q", body)
		var typed struct {
			Params struct {
				Meta struct {
					Key json.RawMessage `json:"idempotency_key"`
				} `json:"_meta"`
			} `json:"params"`
		}
		require.NoError(t, json.Unmarshal(body, &typed))
		require.Equal(t, rec.Key, keyOf(t, typed.Params.Meta.Key), "Go's decoder reads another key from %q", body)
		var doc map[string]any
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		require.NoError(t, dec.Decode(&doc))
		params, _ := doc["params"].(map[string]any)
		meta, _ := params["_meta"].(map[string]any)
		switch v := meta["idempotency_key"].(type) {
		case string:
			require.Equal(t, rec.Key, v)
		case json.Number:
			require.Equal(t, rec.Key, v.String())
		default:
			t.Fatalf("a case-sensitive decode finds no key (%T) in %q, the proxy read %q", v, body, rec.Key)
		}
	})
}

// keyOf is a raw JSON key value as the proxy journals it: a string's text, a number's
// spelling.
func keyOf(t *testing.T, raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(bytes.TrimSpace(raw))
}

// depthOf is how deep body's arrays and objects nest, counted outside strings.
func depthOf(body []byte) int {
	depth, deepest, inString := 0, 0, false
	for i := 0; i < len(body); i++ {
		switch c := body[i]; {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case inString:
		case c == '[' || c == '{':
			depth++
			deepest = max(deepest, depth)
		case c == ']' || c == '}':
			depth--
		}
	}
	return deepest
}

// A raw '#' in a request target is no part of an HTTP request (a fragment stays with the
// client): Go's server would take it into the path, rules would match that path, and the
// upstream would get it as %23. Both paths refuse it with 400 instead.
func TestRequestTargetWithHashIsRefused(t *testing.T) {
	up := newUpstream(t, "a")
	paths := newTwoPaths(t, up.URL)
	raw := "POST /v1/refunds#frag HTTP/1.1\r\nHost: x\r\nIdempotency-Key: k1\r\nContent-Length: 2\r\n\r\n{}"
	for _, target := range []struct {
		url string
		p   *faultproxy.Proxy
	}{{paths.fastURL, paths.fast}, {paths.slowURL, paths.slow}} {
		got := exchange(t, target.url, []byte(raw), 20*time.Second)
		require.Len(t, got, 1)
		require.Contains(t, got[0], "400 Bad Request")
		require.Contains(t, got[0], "'#'")
		recs := journalOf(t, target.p)
		require.Len(t, recs, 1)
		require.False(t, recs[0].ReachedUpstream)
		require.Equal(t, "/v1/refunds#frag", recs[0].Path)
	}
	require.Zero(t, up.total())
}
