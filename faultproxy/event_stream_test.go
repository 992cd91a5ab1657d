package faultproxy_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/faultproxy"
)

// The tests of this file run MCP-shaped tool calls (a JSON-RPC request carrying its key
// in params._meta, answered with a text/event-stream) through the proxy.

const metaKeyField = "params._meta.idempotency_key"

func toolCall(id, key string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"refund","arguments":{"amount":4900},"_meta":{"idempotency_key":%q}}}`, id, key)
}

// sseUpstream answers every POST with an event stream written by write; it counts calls.
type sseUpstream struct {
	*httptest.Server
	calls atomic.Int32
}

func newSSEUpstream(t *testing.T, write func(w http.ResponseWriter, r *http.Request)) *sseUpstream {
	t.Helper()
	u := &sseUpstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		u.calls.Add(1)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		write(w, r)
	}))
	t.Cleanup(u.Close)
	return u
}

func writeEvent(w http.ResponseWriter, data string) {
	fmt.Fprintf(w, "event: message\ndata: %s\n\n", data)
	w.(http.Flusher).Flush()
}

const (
	progressEvent = `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":0.5}}`
	resultEvent   = `{"jsonrpc":"2.0","id":7,"result":{"content":[],"structuredContent":{"refund_id":"r1"},"isError":false}}`
)

func startProxy(t *testing.T, cfg faultproxy.Config) *faultproxy.Server {
	t.Helper()
	srv, err := faultproxy.Start(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { srv.Close() })
	return srv
}

func postToolCall(t *testing.T, ctx context.Context, url, body string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/mcp", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	return (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
}

func onlyRecord(t *testing.T, p *faultproxy.Proxy, key string) faultproxy.Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, p.WaitIdle(ctx))
	recs, err := p.Journal(ctx, faultproxy.JournalQuery{Key: key})
	require.NoError(t, err)
	require.Len(t, recs, 1)
	return recs[0]
}

func TestEventStreamPassesThroughEventByEvent(t *testing.T) {
	for _, withLength := range []bool{false, true} {
		t.Run(fmt.Sprintf("content-length=%v", withLength), func(t *testing.T) {
			testEventByEvent(t, withLength)
		})
	}
}

// testEventByEvent streams two events; with withLength the upstream announces the whole
// stream's Content-Length, which must not make the proxy hold the events back.
func testEventByEvent(t *testing.T, withLength bool) {
	readFirst := make(chan struct{})
	first := "event: message\ndata: " + progressEvent + "\n\n"
	second := "event: message\ndata: " + resultEvent + "\n\n"
	up := newSSEUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, first)
		w.(http.Flusher).Flush()
		// The result is written only once the client has read the progress event through
		// the proxy: a proxy that buffered the stream would never deliver it.
		select {
		case <-readFirst:
		case <-r.Context().Done():
			return
		}
		io.WriteString(w, second)
	})
	if withLength {
		inner := up.Config.Handler
		up.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", fmt.Sprint(len(first)+len(second)))
			inner.ServeHTTP(w, r)
		})
	}
	srv := startProxy(t, faultproxy.Config{Upstream: up.URL, KeyField: metaKeyField})

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := postToolCall(t, ctx, srv.URL(), toolCall("7", "k1"))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	lines := bufio.NewReader(resp.Body)
	for _, want := range []string{"event: message\n", "data: " + progressEvent + "\n", "\n"} {
		got, err := lines.ReadString('\n')
		require.NoError(t, err, "the first event arrives before the upstream ends the stream")
		require.Equal(t, want, got)
	}
	close(readFirst)
	rest, err := io.ReadAll(lines)
	require.NoError(t, err)
	require.Equal(t, second, string(rest))

	rec := onlyRecord(t, srv.Proxy(), "k1")
	require.Equal(t, faultproxy.ClientDelivered, rec.ClientResult)
	require.Equal(t, "7", rec.RPCID)
	require.Equal(t, "tools/call", rec.RPCMethod)
	require.Empty(t, rec.Class, "no Classify hook: no class")
}

func TestAfterStatusOnEventStreamWaitsForTheResult(t *testing.T) {
	up := newSSEUpstream(t, func(w http.ResponseWriter, _ *http.Request) {
		writeEvent(w, progressEvent)
		writeEvent(w, resultEvent)
	})
	srv := startProxy(t, faultproxy.Config{Upstream: up.URL, KeyField: metaKeyField, Rules: []faultproxy.Rule{{
		Name: "lost", Fault: faultproxy.FaultSpec{Type: faultproxy.FaultAfterStatus, Status: 503},
	}}})

	resp, err := postToolCall(t, context.Background(), srv.URL(), toolCall("7", "k1"))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 503, resp.StatusCode)

	rec := onlyRecord(t, srv.Proxy(), "k1")
	require.Equal(t, int32(1), up.calls.Load(), "the tool call executed once")
	require.Equal(t, 200, rec.UpstreamStatus)
	require.Contains(t, string(rec.UpstreamBody), resultEvent, "the committed stream, through its result, is journaled")
	require.Equal(t, 503, rec.ClientStatus)
	require.Equal(t, faultproxy.OutcomeInfo, rec.Outcome)
}

func TestAfterStatusOnEventStreamLeftOpenEndsAtTheResult(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	up := newSSEUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		writeEvent(w, resultEvent)
		// The server keeps the request's stream open after its response (the spec only
		// says it SHOULD close it): the answer is complete all the same.
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	// With the key in the body the proxy reads the request whole, so it knows its id. (With
	// a header key it knows it only when the small body came with the headers, as it does
	// from most clients but not always: not a case a test can pin.)
	srv := startProxy(t, faultproxy.Config{Upstream: up.URL, KeyField: metaKeyField, Rules: []faultproxy.Rule{{
		Name: "lost", Fault: faultproxy.FaultSpec{Type: faultproxy.FaultAfterStatus, Status: 502},
	}}})

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := postToolCall(t, ctx, srv.URL(), toolCall("7", "k1"))
	require.NoError(t, err, "the fault is applied once the result arrived, not at the stream's end")
	resp.Body.Close()
	require.Equal(t, 502, resp.StatusCode)
	rec := onlyRecord(t, srv.Proxy(), "k1")
	require.Contains(t, string(rec.UpstreamBody), resultEvent)
	require.Equal(t, "7", rec.RPCID)
}

func TestAfterHoldEventStreamPastClientTimeout(t *testing.T) {
	up := newSSEUpstream(t, func(w http.ResponseWriter, _ *http.Request) { writeEvent(w, resultEvent) })
	srv := startProxy(t, faultproxy.Config{Upstream: up.URL, KeyField: metaKeyField, Rules: []faultproxy.Rule{{
		Name: "hold", Fault: faultproxy.FaultSpec{Type: faultproxy.FaultAfterHold, Duration: 10 * time.Second},
	}}})

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := postToolCall(t, ctx, srv.URL(), toolCall("7", "k1"))
	require.ErrorIs(t, err, context.DeadlineExceeded)

	rec := onlyRecord(t, srv.Proxy(), "k1")
	require.Equal(t, int32(1), up.calls.Load())
	require.True(t, rec.ReachedUpstream)
	require.Contains(t, string(rec.UpstreamBody), resultEvent, "the tool call committed before the hold")
	require.Equal(t, faultproxy.ClientTimedOut, rec.ClientResult)
	require.Equal(t, faultproxy.OutcomeInfo, rec.Outcome)
}

func TestAfterHoldEventStreamThenDeliver(t *testing.T) {
	up := newSSEUpstream(t, func(w http.ResponseWriter, _ *http.Request) {
		writeEvent(w, progressEvent)
		writeEvent(w, resultEvent)
	})
	srv := startProxy(t, faultproxy.Config{Upstream: up.URL, KeyField: metaKeyField, Rules: []faultproxy.Rule{{
		Name: "hold", Fault: faultproxy.FaultSpec{Type: faultproxy.FaultAfterHold, Duration: time.Millisecond},
	}}})

	resp, err := postToolCall(t, context.Background(), srv.URL(), toolCall("7", "k1"))
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	require.Equal(t, "event: message\ndata: "+progressEvent+"\n\nevent: message\ndata: "+resultEvent+"\n\n", string(body),
		"the held stream is delivered whole")
}

func TestAfterFaultOnEventStreamOverBufferLimitStreamsAsIs(t *testing.T) {
	big := strings.Repeat("x", 2048)
	up := newSSEUpstream(t, func(w http.ResponseWriter, _ *http.Request) {
		writeEvent(w, `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"`+big+`"}}`)
		writeEvent(w, resultEvent)
	})
	srv := startProxy(t, faultproxy.Config{Upstream: up.URL, KeyField: metaKeyField, BufferLimit: 1024, Rules: []faultproxy.Rule{{
		Name: "lost", Fault: faultproxy.FaultSpec{Type: faultproxy.FaultAfterStatus},
	}}})

	resp, err := postToolCall(t, context.Background(), srv.URL(), toolCall("7", "k1"))
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, 200, resp.StatusCode)
	require.Contains(t, string(body), resultEvent, "the whole stream, unfaulted")
	require.Contains(t, onlyRecord(t, srv.Proxy(), "k1").Note, "over buffer limit")
}

func TestEventStreamEndingAfterItsResponseIsDelivered(t *testing.T) {
	up := newSSEUpstream(t, func(w http.ResponseWriter, _ *http.Request) {
		writeEvent(w, resultEvent)
		panic(http.ErrAbortHandler) // the upstream breaks the connection after the response
	})
	srv := startProxy(t, faultproxy.Config{Upstream: up.URL, KeyField: metaKeyField})

	resp, err := postToolCall(t, context.Background(), srv.URL(), toolCall("7", "k1"))
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err, "the stream ends cleanly: the answer is complete")
	require.Equal(t, "event: message\ndata: "+resultEvent+"\n\n", string(body))

	rec := onlyRecord(t, srv.Proxy(), "k1")
	require.Equal(t, faultproxy.ClientDelivered, rec.ClientResult)
	require.Equal(t, faultproxy.OutcomeOK, rec.Outcome)
	require.Contains(t, rec.Note, "event stream ended after its JSON-RPC response")
}

func TestEventStreamCutBeforeItsResponseIsTruncated(t *testing.T) {
	up := newSSEUpstream(t, func(w http.ResponseWriter, _ *http.Request) {
		writeEvent(w, progressEvent)
		panic(http.ErrAbortHandler)
	})
	srv := startProxy(t, faultproxy.Config{Upstream: up.URL, KeyField: metaKeyField})

	resp, err := postToolCall(t, context.Background(), srv.URL(), toolCall("7", "k1"))
	require.NoError(t, err)
	_, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Error(t, err, "the client must not take the short stream as complete")

	rec := onlyRecord(t, srv.Proxy(), "k1")
	require.Equal(t, faultproxy.ClientTruncated, rec.ClientResult)
	require.Equal(t, faultproxy.OutcomeInfo, rec.Outcome)
}

func TestClientClosingTheEventStreamAfterItsResponseWasAnswered(t *testing.T) {
	up := newSSEUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		writeEvent(w, resultEvent)
		<-r.Context().Done() // the stream stays open until the client is gone
	})
	srv := startProxy(t, faultproxy.Config{Upstream: up.URL, KeyField: metaKeyField})

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := postToolCall(t, ctx, srv.URL(), toolCall("7", "k1"))
	require.NoError(t, err)
	lines := bufio.NewReader(resp.Body)
	for range 3 { // event, data, blank line: the response, whole
		_, err := lines.ReadString('\n')
		require.NoError(t, err)
	}
	resp.Body.Close() // an SDK client stops reading once it has its response

	rec := onlyRecord(t, srv.Proxy(), "k1")
	require.Equal(t, faultproxy.ClientDelivered, rec.ClientResult, "note: %s", rec.Note)
	require.Equal(t, faultproxy.OutcomeOK, rec.Outcome)
	require.Contains(t, rec.Note, "after its JSON-RPC response")
}

// pingUpstream answers with an event stream that never carries the response: a ": ping"
// comment every 20 ms until the proxy ends the call, which closes ended.
func pingUpstream(t *testing.T) (*sseUpstream, chan struct{}) {
	ended := make(chan struct{})
	var once sync.Once
	up := newSSEUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		defer once.Do(func() { close(ended) })
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			if _, err := io.WriteString(w, ": ping\n\n"); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-tick.C:
			}
		}
	})
	return up, ended
}

// An after-* fault waits for an event stream's JSON-RPC response (or its end) at most
// StreamWait from the stream's headers: an upstream that only pings gets the fault applied
// to what arrived, and the journal says so, instead of holding the client for as long as
// the pings go on (the review saw ~36 h). The upstream call is ended.
func TestAfterFaultOnAnEndlessEventStreamIsAppliedWithinTheWait(t *testing.T) {
	for name, c := range map[string]struct {
		cfg  faultproxy.Config
		body string
		key  string
	}{
		"a tool call whose id the proxy reads": {faultproxy.Config{KeyField: metaKeyField}, toolCall("7", "k1"), "k1"},
		"a body that is no JSON-RPC request":   {faultproxy.Config{}, `not json-rpc`, ""},
	} {
		t.Run(name, func(t *testing.T) {
			for _, fault := range []faultproxy.FaultSpec{
				{Type: faultproxy.FaultAfterStatus, Status: 503},
				{Type: faultproxy.FaultAfterTruncate, Bytes: 3},
			} {
				up, ended := pingUpstream(t)
				cfg := c.cfg
				cfg.Upstream, cfg.StreamWait = up.URL, 150*time.Millisecond
				cfg.Rules = []faultproxy.Rule{{Name: "lose", Fault: fault}}
				srv := startProxy(t, cfg)
				// Bounds a broken proxy only: without the wait the stream never ends.
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				resp, err := postToolCall(t, ctx, srv.URL(), c.body)
				require.NoError(t, err, fault.Type)
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				cancel()
				recs := journalOf(t, srv.Proxy())
				require.Len(t, recs, 1)
				rec := recs[0]
				require.Equal(t, fault.Type, rec.Fault)
				require.True(t, rec.ReachedUpstream)
				require.Equal(t, 200, rec.UpstreamStatus)
				require.Contains(t, rec.Note, "no JSON-RPC response", fault.Type)
				require.Contains(t, rec.Note, "150ms", fault.Type)
				require.Contains(t, string(rec.UpstreamBody), ": ping\n\n", "what arrived is journaled")
				switch fault.Type {
				case faultproxy.FaultAfterStatus:
					require.Equal(t, 503, resp.StatusCode)
					require.Equal(t, faultproxy.ClientDelivered, rec.ClientResult)
				case faultproxy.FaultAfterTruncate:
					require.Equal(t, 200, resp.StatusCode)
					require.Equal(t, ": p", string(body))
					require.Equal(t, faultproxy.ClientTruncated, rec.ClientResult)
				}
				select {
				case <-ended:
				case <-time.After(20 * time.Second):
					t.Fatal("the upstream call outlived the fault")
				}
			}
		})
	}
}
