package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/transport"
	"github.com/idemproof/idemproof/transport/mcp"
)

// seen records the requests a server got: method (JSON-RPC or HTTP), session header,
// protocol version header.
type seen struct {
	mu   sync.Mutex
	reqs []string
}

func (s *seen) add(r string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, r)
}

func (s *seen) list() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.reqs...)
}

// recording wraps a handler: every request is recorded as "METHOD rpc-method session=S
// version=V".
func recording(s *seen, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		sess := "-"
		if v := r.Header.Get(mcp.HeaderSessionID); v != "" {
			sess = "yes"
		}
		s.add(fmt.Sprintf("%s %s session=%s version=%s auth=%s", r.Method, gjson.GetBytes(body, "method").Str, sess,
			r.Header.Get(mcp.HeaderProtocolVersion), r.Header.Get("Authorization")))
		h.ServeHTTP(w, r)
	})
}

type refundIn struct {
	OrderID string `json:"order_id"`
	Amount  int    `json:"amount"`
}

// sdkServer is a real MCP server on the official go-sdk: a refund tool that counts its
// executions per order (and sends a progress notification first when asked for one), and
// a list_refunds ledger tool.
func sdkServer(t *testing.T, jsonResponse bool) (*httptest.Server, *seen) {
	t.Helper()
	var mu sync.Mutex
	refunds := map[string]int{}
	srv := sdk.NewServer(&sdk.Implementation{Name: "refunds", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "refund"}, func(ctx context.Context, req *sdk.CallToolRequest, in refundIn) (*sdk.CallToolResult, any, error) {
		if tok := req.Params.GetProgressToken(); tok != nil {
			_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: tok, Progress: 0.5, Message: "working"})
		}
		if in.Amount <= 0 {
			res := &sdk.CallToolResult{}
			res.SetError(fmt.Errorf("amount must be positive"))
			return res, nil, nil
		}
		mu.Lock()
		refunds[in.OrderID]++
		mu.Unlock()
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "refunded " + in.OrderID}}}, nil, nil
	})
	type listIn struct {
		OrderID string `json:"order_id"`
	}
	type listOut struct {
		Count int `json:"count"`
	}
	sdk.AddTool(srv, &sdk.Tool{Name: "list_refunds"}, func(ctx context.Context, req *sdk.CallToolRequest, in listIn) (*sdk.CallToolResult, listOut, error) {
		mu.Lock()
		defer mu.Unlock()
		return nil, listOut{Count: refunds[in.OrderID]}, nil
	})
	s := &seen{}
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, &sdk.StreamableHTTPOptions{JSONResponse: jsonResponse})
	ts := httptest.NewServer(recording(s, h))
	t.Cleanup(ts.Close)
	return ts, s
}

func request(t *testing.T, tr *mcp.Transport, url, args, principal string) *transport.Request {
	t.Helper()
	body, err := tr.Frame("", []byte(args))
	require.NoError(t, err)
	h := http.Header{"Authorization": {principal}}
	return &transport.Request{URL: url, Header: h.Clone(), Body: body, Session: principal, SessionHeader: h}
}

func TestSessionLifecycleAgainstTheSDKServer(t *testing.T) {
	for _, jsonResponse := range []bool{false, true} {
		t.Run(fmt.Sprintf("json-response=%v", jsonResponse), func(t *testing.T) {
			ts, s := sdkServer(t, jsonResponse)
			tr := &mcp.Transport{Tool: "refund"}
			snd := tr.Open()
			ctx := t.Context()
			a1, err := snd.Send(ctx, request(t, tr, ts.URL, `{"order_id":"o1","amount":4900}`, "Bearer A"), 5*time.Second)
			require.NoError(t, err)
			a2, err := snd.Send(ctx, request(t, tr, ts.URL, `{"order_id":"o1","amount":4900}`, "Bearer A"), 5*time.Second)
			require.NoError(t, err)
			a3, err := snd.Send(ctx, request(t, tr, ts.URL, `{"order_id":"o1","amount":-1}`, "Bearer B"), 5*time.Second)
			require.NoError(t, err)
			snd.Close()

			require.Equal(t, 200, a1.Status)
			require.Equal(t, outcome.Success, a1.Class)
			require.Equal(t, `{"result":{"content":[{"type":"text","text":"refunded o1"}]}}`, string(a1.Body), "the response without its id")
			require.Equal(t, a1.Body, a2.Body, "two results compare equal although their ids differ")
			require.NotEqual(t, a1.RPCID, a2.RPCID)
			require.Equal(t, "tools/call", a1.RPCMethod)
			require.Equal(t, outcome.BusinessError, a3.Class, "isError true: the tool ran and refused")

			v := mcp.DefaultProtocolVersion
			require.Equal(t, []string{
				"POST initialize session=- version= auth=Bearer A",
				"POST notifications/initialized session=yes version=" + v + " auth=Bearer A",
				"POST tools/call session=yes version=" + v + " auth=Bearer A",
				"POST tools/call session=yes version=" + v + " auth=Bearer A",
				"POST initialize session=- version= auth=Bearer B",
				"POST notifications/initialized session=yes version=" + v + " auth=Bearer B",
				"POST tools/call session=yes version=" + v + " auth=Bearer B",
			}, s.list()[:7], "one session per principal, headers on every request after initialize")
			require.ElementsMatch(t, []string{
				"DELETE  session=yes version=" + v + " auth=Bearer A",
				"DELETE  session=yes version=" + v + " auth=Bearer B",
			}, s.list()[7:], "Close ends both sessions")

			n, err := tr.Count(ctx, transport.Ledger{URL: ts.URL, Tool: "list_refunds", Arguments: []byte(`{"order_id":"o1"}`), Count: "result.structuredContent.count"})
			require.NoError(t, err)
			require.Equal(t, 2, n)
		})
	}
}

func TestSessionPerAttempt(t *testing.T) {
	ts, s := sdkServer(t, false)
	tr := &mcp.Transport{Tool: "refund", SessionPerAttempt: true}
	snd := tr.Open()
	defer snd.Close()
	for range 2 {
		a, err := snd.Send(t.Context(), request(t, tr, ts.URL, `{"order_id":"o2","amount":1}`, "Bearer A"), 5*time.Second)
		require.NoError(t, err)
		require.Equal(t, outcome.Success, a.Class)
	}
	n := 0
	for _, r := range s.list() {
		if strings.HasPrefix(r, "POST initialize") {
			n++
		}
	}
	require.Equal(t, 2, n)
}

func TestProgressBeforeTheResponseIsSkipped(t *testing.T) {
	ts, _ := sdkServer(t, false)
	tr := &mcp.Transport{Tool: "refund"}
	req := request(t, tr, ts.URL, `{"order_id":"o3","amount":1}`, "Bearer A")
	req.Body = []byte(strings.Replace(string(req.Body), `"params":{`, `"params":{"_meta":{"progressToken":"p1"},`, 1))
	snd := tr.Open()
	defer snd.Close()
	a, err := snd.Send(t.Context(), req, 5*time.Second)
	require.NoError(t, err)
	require.Equal(t, outcome.Success, a.Class, "the progress notification is not the answer")
	require.Contains(t, string(a.Body), "refunded o3")
}

// fakeServer answers initialize (with the given capabilities) and notifications by hand,
// and tools/call with answer.
func fakeServer(t *testing.T, capabilities string, answer func(w http.ResponseWriter, id string)) *httptest.Server {
	t.Helper()
	ts, _ := fakeServerSeen(t, capabilities, answer)
	return ts
}

func fakeServerSeen(t *testing.T, capabilities string, answer func(w http.ResponseWriter, id string)) (*httptest.Server, *seen) {
	t.Helper()
	s := &seen{}
	ts := httptest.NewServer(recording(s, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		id := gjson.GetBytes(body, "id").Raw
		switch gjson.GetBytes(body, "method").Str {
		case "initialize":
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set(mcp.HeaderSessionID, "s-1")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":%s,"serverInfo":{"name":"fake","version":"1"}}}`, id, capabilities)
		case "notifications/initialized":
			w.WriteHeader(http.StatusAccepted)
		case "tools/call":
			answer(w, id)
		default:
			w.WriteHeader(http.StatusOK)
		}
	})))
	t.Cleanup(ts.Close)
	return ts, s
}

// A 404 to a request in a session means the server expired the session: as a client
// must, the attempt opens a new one and sends its request again, and the answer there is
// the attempt's. A second 404 (no session lasts) is info: no tool saw the request.
func TestAGoneSessionIsReplacedAndTheRequestSentAgain(t *testing.T) {
	var mu sync.Mutex
	calls, goneFor := 0, 1
	ts, s := fakeServerSeen(t, `{"tools":{}}`, func(w http.ResponseWriter, id string) {
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		if n <= goneFor {
			http.Error(w, "session not found", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{}}`, id)
	})
	initializes := func() int {
		n := 0
		for _, r := range s.list() {
			if strings.HasPrefix(r, "POST initialize") {
				n++
			}
		}
		return n
	}
	tr := &mcp.Transport{Tool: "refund"}
	snd := tr.Open()
	defer snd.Close()
	a, err := snd.Send(t.Context(), request(t, tr, ts.URL, `{}`, "Bearer A"), 5*time.Second)
	require.NoError(t, err)
	require.Equal(t, outcome.Success, a.Class, "the request sent again in the new session")
	require.Equal(t, 2, calls)
	require.Equal(t, 2, initializes(), "a new session after the 404")

	mu.Lock()
	calls, goneFor = 0, 2
	mu.Unlock()
	a, err = snd.Send(t.Context(), request(t, tr, ts.URL, `{}`, "Bearer A"), 5*time.Second)
	require.NoError(t, err)
	require.Equal(t, 404, a.Status, "sent again once")
	require.Equal(t, outcome.Info, a.Class, "no tool saw it: nothing of the key is shown")
	require.Contains(t, a.Err, "session gone")
	require.Equal(t, 3, initializes())
}

func send(t *testing.T, tr *mcp.Transport, url string) (transport.Answer, error) {
	t.Helper()
	snd := tr.Open()
	defer snd.Close()
	return snd.Send(t.Context(), request(t, tr, url, `{"order_id":"o"}`, "Bearer A"), 5*time.Second)
}

func TestEventStreamAnswers(t *testing.T) {
	stream := func(events string) func(http.ResponseWriter, string) {
		return func(w http.ResponseWriter, id string) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, strings.ReplaceAll(events, "ID", id))
		}
	}
	cases := []struct {
		name, events string
		class        outcome.Class
		err          string
	}{
		{"another id first, then ours", ": hi\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":999999,\"result\":{\"x\":1}}\n\n" +
			"data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n" +
			"data: {\"jsonrpc\":\"2.0\",\ndata: \"id\":ID,\"result\":{\"content\":[]}}\n\n", outcome.Success, ""},
		{"cut mid-event", "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":ID,\"res", outcome.Info, "truncated: event stream cut mid-event"},
		{"ended without the response", "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n", outcome.Info, "ended without the response"},
		{"a JSON-RPC error inside a 200", "data: {\"jsonrpc\":\"2.0\",\"id\":ID,\"error\":{\"code\":-32010,\"message\":\"in progress\"}}\n\n", outcome.ClientError, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ts := fakeServer(t, `{"tools":{}}`, stream(c.events))
			a, err := send(t, &mcp.Transport{Tool: "refund"}, ts.URL)
			require.NoError(t, err)
			require.Equal(t, c.class, a.Class)
			require.Contains(t, a.Err, c.err)
		})
	}
}

func TestOutcomeRulesSeeTheResponse(t *testing.T) {
	ts := fakeServer(t, `{"tools":{}}`, func(w http.ResponseWriter, id string) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32010,"message":"in progress"}}`, id)
	})
	inFlight, errs := outcome.Compile(outcome.RuleSpec{JSON: []outcome.JSONSpec{{Path: "error.code", Equals: -32010, HasEquals: true}}})
	require.Empty(t, errs)
	covered := map[outcome.Class]bool{outcome.InFlight: true}
	cl := outcome.NewRules(append([]outcome.ClassRules{{Class: outcome.InFlight, Rules: []outcome.Rule{inFlight}}}, mcp.DefaultOutcomes(covered)...), outcome.Statuses{})
	a, err := send(t, &mcp.Transport{Tool: "refund", Classifier: cl}, ts.URL)
	require.NoError(t, err)
	require.Equal(t, outcome.InFlight, a.Class)
	require.Equal(t, `{"error":{"code":-32010,"message":"in progress"}}`, string(a.Body))
}

func TestIdempotencyCapability(t *testing.T) {
	ok := func(w http.ResponseWriter, id string) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{}}`, id)
	}
	with := fakeServer(t, `{"tools":{"idempotency":{}}}`, ok)
	without := fakeServer(t, `{"tools":{}}`, ok)

	tr := &mcp.Transport{Tool: "refund", RequireIdempotency: true}
	s, err := tr.Initialize(t.Context(), with.URL, nil)
	require.NoError(t, err)
	require.True(t, s.AdvertisesIdempotency())
	require.Equal(t, "s-1", s.ID)
	require.Equal(t, "2025-06-18", s.ProtocolVersion, "the server's version is used from then on")
	a, err := send(t, tr, with.URL)
	require.NoError(t, err)
	require.Equal(t, outcome.Success, a.Class)

	_, err = send(t, tr, without.URL)
	require.ErrorContains(t, err, "does not advertise capabilities.tools.idempotency")
	_, err = send(t, &mcp.Transport{Tool: "refund"}, without.URL)
	require.NoError(t, err, "not required: no capability needed")
}

func TestFrameAndComparable(t *testing.T) {
	tr := &mcp.Transport{Tool: "refund"}
	b, err := tr.Frame("", []byte(`{"order_id": "o", "amount": 1}`))
	require.NoError(t, err)
	var env map[string]any
	require.NoError(t, json.Unmarshal(b, &env))
	require.Equal(t, "2.0", env["jsonrpc"])
	require.Equal(t, "tools/call", env["method"])
	require.Equal(t, map[string]any{"name": "refund", "arguments": map[string]any{"order_id": "o", "amount": float64(1)}}, env["params"])
	_, err = tr.Frame("", []byte(`[1]`))
	require.ErrorContains(t, err, "must be a JSON object")

	stream := []byte("event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{\"a\":1}}\n\n")
	require.Equal(t, `{"result":{"a":1}}`, string(tr.Comparable(stream, "")))
	require.Equal(t, `{"error":{"code":1}}`, string(tr.Comparable([]byte(`{"jsonrpc":"2.0","id":4,"error":{"code":1}}`), "")))
	require.Equal(t, "plain", string(tr.Comparable([]byte("plain"), "")))
}

// A ledger tool call answered with a JSON-RPC error the outcome rules call throttled is
// a rate limit's refusal the caller may wait out, not a broken ledger.
func TestALedgerToolsRateLimitErrorIsThrottled(t *testing.T) {
	ts := fakeServer(t, `{"tools":{}}`, func(w http.ResponseWriter, id string) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32029,"message":"rate limited: retry later"}}`, id)
	})
	limited, errs := outcome.Compile(outcome.RuleSpec{JSON: []outcome.JSONSpec{{Path: "error.code", Equals: -32029, HasEquals: true}}})
	require.Empty(t, errs)
	cl := outcome.NewRules(append([]outcome.ClassRules{{Class: outcome.Throttled, Rules: []outcome.Rule{limited}}}, mcp.DefaultOutcomes(map[outcome.Class]bool{})...), outcome.Statuses{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := (&mcp.Transport{Tool: "refund", Classifier: cl}).Count(ctx, transport.Ledger{URL: ts.URL, Tool: "list_refunds", Arguments: []byte(`{"order_id":"o1"}`), Count: "result.structuredContent.count"})
	var throttled transport.ThrottledRead
	require.ErrorAs(t, err, &throttled)
	require.True(t, throttled.Throttled())
	require.Contains(t, err.Error(), "tool list_refunds answered a rate limit's refusal: -32029 rate limited: retry later")

	// Without the rule it is an error like any other.
	_, err = (&mcp.Transport{Tool: "refund"}).Count(ctx, transport.Ledger{URL: ts.URL, Tool: "list_refunds", Count: "result.structuredContent.count"})
	require.Error(t, err)
	require.False(t, errors.As(err, &throttled))
}

// pollingSDKServer is a real go-sdk server with an event store whose refund tool closes
// its answer's event stream before it finishes (SEP-1699: the client is to resume with
// GET and Last-Event-ID after the retry time), then does the work.
func pollingSDKServer(t *testing.T) (*httptest.Server, *seen, *int) {
	t.Helper()
	var mu sync.Mutex
	executions := 0
	srv := sdk.NewServer(&sdk.Implementation{Name: "polling", Version: "1"}, nil)
	type orderIn struct {
		OrderID string `json:"order_id"`
	}
	sdk.AddTool(srv, &sdk.Tool{Name: "refund"}, func(ctx context.Context, req *sdk.CallToolRequest, in orderIn) (*sdk.CallToolResult, any, error) {
		req.Extra.CloseSSEStream(sdk.CloseSSEStreamArgs{RetryAfter: 20 * time.Millisecond})
		time.Sleep(100 * time.Millisecond)
		mu.Lock()
		executions++
		mu.Unlock()
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "refunded " + in.OrderID}}}, nil, nil
	})
	s := &seen{}
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv },
		&sdk.StreamableHTTPOptions{EventStore: sdk.NewMemoryEventStore(nil)})
	ts := httptest.NewServer(recording(s, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id := r.Header.Get("Last-Event-ID"); id != "" {
			s.add("Last-Event-ID " + id)
		}
		h.ServeHTTP(w, r)
	})))
	t.Cleanup(ts.Close)
	return ts, s, &executions
}

// A server that closes the answer's stream after its priming event is resumed, as the
// specification asks of a client: the attempt's answer is the tool's result, got on the
// GET; the call ran once and was sent once.
func TestAStreamTheServerClosesIsResumed(t *testing.T) {
	ts, s, executions := pollingSDKServer(t)
	tr := &mcp.Transport{Tool: "refund"}
	a, err := send(t, tr, ts.URL)
	require.NoError(t, err)
	require.Equal(t, outcome.Success, a.Class, "%s %s", a.Err, a.Body)
	require.Equal(t, http.StatusOK, a.Status)
	require.Contains(t, string(a.Body), "refunded o")
	require.Equal(t, 1, *executions)
	calls, gets, resumes := 0, 0, 0
	for _, r := range s.list() {
		switch {
		case strings.HasPrefix(r, "POST tools/call"):
			calls++
		case strings.HasPrefix(r, "GET"):
			gets++
			require.Contains(t, r, "session=yes", "the GET resumes the session's stream")
			require.Contains(t, r, "auth=Bearer A", "with the principal's set-up headers")
		case strings.HasPrefix(r, "Last-Event-ID "):
			resumes++
		}
	}
	require.Equal(t, 1, calls, "the call is not sent again")
	require.GreaterOrEqual(t, gets, 1)
	require.Equal(t, gets, resumes, "every GET names the last event id")

	// The journal's copy of the first stream (the priming event only) is no committed
	// response to compare with.
	require.Nil(t, tr.Comparable([]byte("event: prime\nid: 0_0\ndata: \n\nretry: 20\n\n"), ""))
	require.Equal(t, []byte("not found"), tr.Comparable([]byte("not found"), ""), "a plain body stays as it is")
}

// A stream closed without an event id cannot be resumed, and a resumption the server
// refuses leaves the answer unseen: info, never a classified answer.
func TestAStreamThatCannotBeResumedIsInfo(t *testing.T) {
	cases := []struct {
		name, events string
		get          int
		err          string
	}{
		{"no event id", "retry: 10\n\n", 0, "ended without the response"},
		{"the GET refused", "id: e1\ndata:\n\nretry: 10\n\n", http.StatusMethodNotAllowed, "was answered 405"},
		{"the GET's stream ends too", "id: e1\ndata:\n\nretry: 10\n\n", http.StatusOK, "ended without the response"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var mu sync.Mutex
			gets := 0
			inner := fakeServer(t, `{"tools":{}}`, func(w http.ResponseWriter, id string) {
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprint(w, c.events)
			})
			innerURL, err := url.Parse(inner.URL)
			require.NoError(t, err)
			toInner := httputil.NewSingleHostReverseProxy(innerURL)
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method != http.MethodGet {
					toInner.ServeHTTP(w, r)
					return
				}
				mu.Lock()
				gets++
				mu.Unlock()
				if c.get != http.StatusOK {
					w.WriteHeader(c.get)
					return
				}
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprint(w, ": nothing yet\n\n")
			}))
			t.Cleanup(ts.Close)
			a, err := send(t, &mcp.Transport{Tool: "refund"}, ts.URL)
			require.NoError(t, err)
			require.Equal(t, outcome.Info, a.Class)
			require.Contains(t, a.Err, c.err)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case c.get == 0:
				require.Zero(t, gets)
			case c.get == http.StatusOK:
				require.Equal(t, 10, gets, "bounded: the last event id never advances")
			default:
				require.Equal(t, 1, gets)
			}
		})
	}
}

// The retry time a stream set outlives it, as the SSE standard's reconnection time does:
// the resumed streams set none, so every wait is the first stream's 2 s, and a 5 s
// attempt resumes at most twice (a slow machine resumes fewer times, never more). Were
// the time forgotten, the 250 ms default would let it resume all 10 times.
func TestTheRetryTimeOutlivesItsStream(t *testing.T) {
	var mu sync.Mutex
	gets := 0
	inner := fakeServer(t, `{"tools":{}}`, func(w http.ResponseWriter, id string) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "id: e1\ndata:\n\nretry: 2000\n\n")
	})
	innerURL, err := url.Parse(inner.URL)
	require.NoError(t, err)
	toInner := httputil.NewSingleHostReverseProxy(innerURL)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			toInner.ServeHTTP(w, r)
			return
		}
		mu.Lock()
		gets++
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, ": nothing yet\n\n")
	}))
	t.Cleanup(ts.Close)
	a, err := send(t, &mcp.Transport{Tool: "refund"}, ts.URL)
	require.NoError(t, err)
	require.Equal(t, outcome.Info, a.Class)
	mu.Lock()
	defer mu.Unlock()
	require.LessOrEqual(t, gets, 2, "each wait is the 2 s the first stream asked for")
}
