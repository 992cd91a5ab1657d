package faultproxy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/faultproxy"
)

// classifier is a Classify hook in the shape outcome rules take: a JSON-RPC error code
// -32010 is "in_flight", a result "success", a 5xx "server_error". It keeps every body it
// was given.
type classifier struct {
	mu     sync.Mutex
	bodies []string
}

func (c *classifier) classify(status int, _ http.Header, body []byte) string {
	c.mu.Lock()
	c.bodies = append(c.bodies, string(body))
	c.mu.Unlock()
	var m struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	switch {
	case status >= 500:
		return "server_error"
	case json.Unmarshal(body, &m) != nil:
		return "client_error"
	case m.Error != nil && m.Error.Code == -32010:
		return "in_flight"
	case m.Result != nil:
		return "success"
	}
	return "client_error"
}

func (c *classifier) seen() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.bodies...)
}

func TestClassifyFindsTheResponseToTheRequestInAnEventStream(t *testing.T) {
	inFlight := `{"jsonrpc":"2.0","id":7,"error":{"code":-32010,"message":"in progress"}}`
	split := strings.Index(inFlight, `"error"`) // between two tokens: the joining newline is whitespace
	up := newSSEUpstream(t, func(w http.ResponseWriter, _ *http.Request) {
		// Comments, CRLF line ends, an unnamed event, a response to another id, a field
		// split across writes, then the response to id 7 as two data lines.
		for _, part := range []string{
			": keep-alive\r\n\r\n",
			"data: " + progressEvent + "\r\n\r\n",
			"event: message\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{}}\r\n\r\n",
			"event: mess", "age\nid: 3\ndata: " + inFlight[:split],
			"\ndata: " + inFlight[split:] + "\n", "\n",
		} {
			io.WriteString(w, part)
			w.(http.Flusher).Flush()
		}
	})
	c := &classifier{}
	srv := startProxy(t, faultproxy.Config{Upstream: up.URL, KeyField: metaKeyField, Classify: c.classify})

	resp, err := postToolCall(t, context.Background(), srv.URL(), toolCall("7", "k1"))
	require.NoError(t, err)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()

	rec := onlyRecord(t, srv.Proxy(), "k1")
	require.Equal(t, "in_flight", rec.Class, "a JSON-RPC error inside a 200 is classified by the hook")
	require.Equal(t, faultproxy.OutcomeOK, rec.Outcome, "the status-based outcome is unchanged")
	// Two data lines join with a newline (the SSE rule); the JSON is the same.
	require.Equal(t, []string{inFlight[:split] + "\n" + inFlight[split:]}, c.seen())
}

func TestClassifyEventStreamCutBeforeTheResponseIsInfo(t *testing.T) {
	up := newSSEUpstream(t, func(w http.ResponseWriter, _ *http.Request) {
		writeEvent(w, progressEvent)
		io.WriteString(w, "data: "+resultEvent) // no blank line: the event never completes
	})
	c := &classifier{}
	srv := startProxy(t, faultproxy.Config{Upstream: up.URL, KeyField: metaKeyField, Classify: c.classify})

	resp, err := postToolCall(t, context.Background(), srv.URL(), toolCall("7", "k1"))
	require.NoError(t, err)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()

	rec := onlyRecord(t, srv.Proxy(), "k1")
	require.Equal(t, faultproxy.OutcomeInfo, rec.Class)
	require.Contains(t, rec.Note, "event stream ended without the JSON-RPC response")
	require.Empty(t, c.seen(), "nothing to classify")
}

func TestClassifySeesWhatTheClientGot(t *testing.T) {
	up := newSSEUpstream(t, func(w http.ResponseWriter, _ *http.Request) { writeEvent(w, resultEvent) })
	c := &classifier{}
	srv := startProxy(t, faultproxy.Config{Upstream: up.URL, KeyField: metaKeyField, Classify: c.classify, Rules: []faultproxy.Rule{
		{Name: "lost", Match: faultproxy.Match{Key: "lost"}, Fault: faultproxy.FaultSpec{Type: faultproxy.FaultAfterStatus, Status: 503}},
		{Name: "reset", Match: faultproxy.Match{Key: "reset"}, Fault: faultproxy.FaultSpec{Type: faultproxy.FaultAfterReset}},
		{Name: "held", Match: faultproxy.Match{Key: "held"}, Fault: faultproxy.FaultSpec{Type: faultproxy.FaultAfterDelay, Duration: 1}},
	}})

	for key, want := range map[string]string{"lost": "server_error", "reset": faultproxy.OutcomeInfo, "held": "success", "plain": "success"} {
		resp, err := postToolCall(t, context.Background(), srv.URL(), toolCall("7", key))
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		require.Equal(t, want, onlyRecord(t, srv.Proxy(), key).Class, "key %s", key)
	}
}

func TestClassifyPlainJSONAnswer(t *testing.T) {
	up := newUpstream(t, "a") // answers application/json {"commit":...}: no result, no error
	c := &classifier{}
	srv := startProxy(t, faultproxy.Config{Upstream: up.URL, KeyField: metaKeyField, Classify: c.classify})
	resp, err := postToolCall(t, context.Background(), srv.URL(), toolCall(`"a1"`, "k1"))
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()

	rec := onlyRecord(t, srv.Proxy(), "k1")
	require.Equal(t, "client_error", rec.Class)
	require.Equal(t, []string{string(body)}, c.seen(), "the hook got the body the client got")
	require.Equal(t, `"a1"`, rec.RPCID, "a string id is journaled as JSON")
	require.Equal(t, "tools/call", rec.RPCMethod)
}

func TestJSONRPCFieldsOnlyForJSONRPCRequests(t *testing.T) {
	up := newUpstream(t, "a")
	srv := startProxy(t, faultproxy.Config{Upstream: up.URL, KeyField: "idempotency_key"})
	for i, body := range []string{
		`{"idempotency_key":"k0","id":1,"method":"refund"}`,                        // no "jsonrpc":"2.0"
		`{"jsonrpc":"2.0","id":null,"method":"tools/call","idempotency_key":"k1"}`, // null id
	} {
		resp, err := postToolCall(t, context.Background(), srv.URL(), body)
		require.NoError(t, err)
		resp.Body.Close()
		rec := onlyRecord(t, srv.Proxy(), fmt.Sprintf("k%d", i))
		require.Empty(t, rec.RPCID)
		require.Equal(t, []string{"", "tools/call"}[i], rec.RPCMethod)
		require.Empty(t, rec.Class)
	}
}

func TestJSONRPCFieldsAreBoundedInTheJournal(t *testing.T) {
	up := newUpstream(t, "a")
	srv := startProxy(t, faultproxy.Config{Upstream: up.URL, KeyField: metaKeyField})
	long := strings.Repeat("x", 10_000)
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"method":%q,"params":{"_meta":{"idempotency_key":"k1"}}}`, long, long)
	resp, err := postToolCall(t, context.Background(), srv.URL(), body)
	require.NoError(t, err)
	resp.Body.Close()
	rec := onlyRecord(t, srv.Proxy(), "k1")
	require.Equal(t, `"`+strings.Repeat("x", 255)+"…", rec.RPCID, "a client's 10 KB id is clipped to 256 bytes")
	require.Equal(t, strings.Repeat("x", 256)+"…", rec.RPCMethod)
}
