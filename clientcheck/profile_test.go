package clientcheck_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/clientcheck"
	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/verdict"
	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// toolServer is a JSON-RPC tool endpoint that carries the key in the body: POST /rpc
// with params.arguments.{order, idempotency_key}; a repeat of a key gets the stored
// result. GET /ledger?order=E is {"n": N}. Any other method on /rpc (an initialize
// call) is answered and never executes.
func toolServer(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(toolHandler(t))
	t.Cleanup(srv.Close)
	return srv
}

// toolHandler is toolServer's handler.
func toolHandler(t *testing.T) http.Handler {
	var mu sync.Mutex
	stored, effects := map[string][]byte{}, map[string]int{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /rpc", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     int    `json:"id"`
			Method string `json:"method"`
			Params struct {
				Arguments struct {
					Order string `json:"order"`
					Key   string `json:"idempotency_key"`
				} `json:"arguments"`
			} `json:"params"`
		}
		body, _ := io.ReadAll(r.Body)
		require.NoError(t, json.Unmarshal(body, &req))
		w.Header().Set("Content-Type", "application/json")
		if req.Method != "tools/call" {
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"result":{}}`, req.ID)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if out, ok := stored[req.Params.Arguments.Key]; ok && req.Params.Arguments.Key != "" {
			w.Write(out)
			return
		}
		effects[req.Params.Arguments.Order]++
		out := []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"refunded %s"}]}}`, req.ID, req.Params.Arguments.Order))
		stored[req.Params.Arguments.Key] = out
		w.Write(out)
	})
	mux.HandleFunc("GET /ledger", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(w, `{"n": %d}`, effects[r.URL.Query().Get("order")])
	})
	return mux
}

const toolProfile = `name: tool-api
base_url: %s
key_field: params.arguments.idempotency_key
operation:
  method: POST
  path: /rpc
  body: '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"refund","arguments":{"order":"{{.Entity}}"}}}'
side_effects:
  path: /ledger?order={{.Entity}}
  count: n
expect: { in_flight: 409, mismatch: 422, missing_key: optional }
`

// toolClient initialises once, then calls the tool for each order, up to 3 attempts,
// with keyFor's key in the body.
func toolClient(keyFor func(order string, attempt int) string) clientcheck.ClientFunc {
	return toolClientNumbering(keyFor, false)
}

// toolClientNumbering is toolClient; with newIDs each request gets a JSON-RPC id of its
// own, as every MCP SDK numbers them, the retries' too.
func toolClientNumbering(keyFor func(order string, attempt int) string, newIDs bool) clientcheck.ClientFunc {
	nextID := 1
	return func(ctx context.Context, env clientcheck.Env) error {
		c := &http.Client{Timeout: 500 * time.Millisecond}
		post := func(body string) (int, error) {
			req, err := http.NewRequestWithContext(ctx, env.OperationMethod, env.MCPEndpoint, strings.NewReader(body))
			if err != nil {
				return 0, err
			}
			resp, err := c.Do(req)
			if err != nil {
				return 0, err
			}
			defer resp.Body.Close()
			io.Copy(io.Discard, resp.Body)
			return resp.StatusCode, nil
		}
		if _, err := post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`); err != nil {
			return err
		}
		for _, order := range []string{"o-1", "o-2"} {
			for attempt := 1; attempt <= 3; attempt++ {
				var call map[string]any
				body := strings.ReplaceAll(env.OperationBody, "{{.Entity}}", order)
				if err := json.Unmarshal([]byte(body), &call); err != nil {
					return err
				}
				call["params"].(map[string]any)["arguments"].(map[string]any)["idempotency_key"] = keyFor(order, attempt)
				if newIDs {
					nextID++
					call["id"] = nextID
				}
				b, _ := json.Marshal(call)
				if status, err := post(string(bytes.TrimSpace(b))); err == nil && status == 200 {
					break
				}
			}
		}
		return nil
	}
}

func loadToolProfile(t *testing.T) *profile.Profile {
	p, err := profile.Parse("tool-api.yaml", []byte(fmt.Sprintf(toolProfile, toolServer(t).URL)))
	require.NoError(t, err)
	return p
}

func TestAProfileTargetWithTheKeyInTheBody(t *testing.T) {
	p := loadToolProfile(t)
	entity, err := clientcheck.EntityOf(p)
	require.NoError(t, err)
	require.Equal(t, profile.EntityRef{JSON: "params.arguments.order"}, entity, "inferred: the one body field that is {{.Entity}}")

	res, err := clientcheck.Run(context.Background(), clientcheck.Config{Profile: p, FaultSpec: "503", Seed: 1, Timeout: 30 * time.Second},
		toolClient(func(order string, _ int) string { return "call-" + order }))
	require.NoError(t, err)
	require.NoError(t, res.Err())
	require.Equal(t, "", res.Env.KeyHeader)
	require.Equal(t, "params.arguments.idempotency_key", res.Env.KeyField)
	require.Equal(t, res.Env.BaseURL+"/rpc", res.Env.MCPEndpoint, "a JSON-RPC operation gets its endpoint URL")
	require.Equal(t, map[string]int{"o-1": 1, "o-2": 1}, res.Observation.Ledger)
	require.Len(t, res.Observation.Attempts, 4, "the initialize call names no operation and carries no key: not an attempt")

	attempts := res.Attempts("o-1")
	require.Len(t, attempts, 2)
	require.Equal(t, "after-status", attempts[0].Fault)
	require.Equal(t, outcome.ServerError, attempts[0].Class)
	require.Equal(t, "200", attempts[1].Delivered)
	require.Equal(t, outcome.Success, attempts[1].Class)
	require.Equal(t, "call-o-1", attempts[1].Key)
	require.True(t, attempts[1].Time.After(attempts[0].Time))
	require.Positive(t, attempts[0].Duration, "real durations")

	var b strings.Builder
	clientcheck.WriteAttempts(&b, attempts, "  ")
	require.Regexp(t, `(?m)^  1  \+0s +\S+ +K1 +after-status +200 +503 +server_error`, b.String())
	require.Regexp(t, `(?m)^  2  \+\S+ +\S+ +K1 +- +200 +200 +success`, b.String())
	require.Contains(t, b.String(), "keys: K1=call-o-1")

	for _, r := range res.Report.Results {
		if r.ScenarioID == clientcheck.OperationIDPrefix+"o-1" {
			require.Positive(t, r.DurationMS, "an operation's duration is its span")
			require.Len(t, r.Evidence.Record.History, 4)
		} else if r.ScenarioID == clientcheck.IDCommandSucceeded {
			require.Positive(t, r.DurationMS, "a check's duration is the client's run")
		}
	}
}

// A JSON-RPC client numbers every request, its retries too: the id is no part of the
// payload, so a retry under the kept key is the same payload, and one under a fresh key
// is the same payload re-sent under it.
func TestAJSONRPCRetryWithANewIDIsTheSamePayload(t *testing.T) {
	p := loadToolProfile(t)
	cfg := clientcheck.Config{Profile: p, FaultSpec: "503", Seed: 1, Timeout: 30 * time.Second}
	res, err := clientcheck.Run(context.Background(), cfg, toolClientNumbering(func(order string, _ int) string { return "call-" + order }, true))
	require.NoError(t, err)
	require.NoError(t, res.Err(), "a correct retry with its own JSON-RPC id")

	res, err = clientcheck.Run(context.Background(), cfg, toolClientNumbering(func(order string, attempt int) string {
		return fmt.Sprintf("call-%s-%d", order, attempt)
	}, true))
	require.NoError(t, err)
	require.ErrorContains(t, res.Err(), "key minted per attempt", "the same payload under a fresh key, whatever its id")
}

func TestAProfileTargetCatchesAKeyMintedPerAttempt(t *testing.T) {
	p := loadToolProfile(t)
	res, err := clientcheck.Run(context.Background(), clientcheck.Config{Profile: p, FaultSpec: "503", Seed: 1, Timeout: 30 * time.Second},
		toolClient(func(order string, attempt int) string { return fmt.Sprintf("call-%s-%d", order, attempt) }))
	require.NoError(t, err)
	failed := map[string]bool{}
	for _, f := range res.Findings() {
		failed[f.ScenarioID] = true
	}
	require.True(t, failed[clientcheck.IDKeyPerAttempt], res.Err())
	require.True(t, failed[clientcheck.IDOneEffect], res.Err())
	require.Equal(t, 3, res.Observation.Ledger["o-1"], "every fresh key was faulted after it executed")
}

func TestAProfileTargetThatIsDownIsAnErrorBeforeTheRun(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	p, err := profile.Parse("tool-api.yaml", []byte(fmt.Sprintf(toolProfile, srv.URL)))
	require.NoError(t, err)
	_, err = clientcheck.Run(context.Background(), clientcheck.Config{Profile: p}, func(string) error { return nil })
	require.ErrorContains(t, err, "preflight: the target "+srv.URL+" does not answer its ledger (is it running?)")
}

func TestAProfileWithoutAnEntityToFindIsAnError(t *testing.T) {
	p := loadToolProfile(t)
	p.Operation.Body = `{"jsonrpc":"2.0","method":"tools/call","params":{"a":"{{.Entity}}","b":"{{.Entity}}"}}`
	_, err := clientcheck.EntityOf(p)
	require.ErrorContains(t, err, "entity: client-check needs to know where a request names its logical operation; declare it, e.g. entity: {json: order_id}")
}

// A profile that tells its in-flight refusals by an outcome rule no answer can be built
// from (a text pattern) declares no in-flight status: the 409 kind has nothing to answer
// with, and is refused before the run instead of sending the proxy's default 503 as an
// "in-flight" answer that every client may rightly retry at once.
func TestThe409KindNeedsAnInFlightStatus(t *testing.T) {
	doc := strings.Replace(toolProfile, "expect: { in_flight: 409, mismatch: 422, missing_key: optional }", `expect: { mismatch: 422, missing_key: optional }
outcomes:
  in_flight: {text: "in progress"}`, 1)
	p, err := profile.Parse("tool-api.yaml", []byte(fmt.Sprintf(doc, toolServer(t).URL)))
	require.NoError(t, err)
	_, err = clientcheck.Run(context.Background(), clientcheck.Config{Profile: p, FaultSpec: "409", Timeout: 30 * time.Second}, toolClient(func(order string, _ int) string { return "call-" + order }))
	require.ErrorContains(t, err, `fault "409": the profile tool-api declares no expect.in_flight status`)
}

// jsonRPCProfile is toolProfile for a server that refuses inside a 200, with JSON-RPC
// errors its outcome rules name, as an MCP server does.
var jsonRPCProfile = strings.Replace(toolProfile, "expect: { in_flight: 409, mismatch: 422, missing_key: optional }", `outcomes:
  in_flight: {json: [{path: error.code, equals: -32010}, {path: error.data.reason, equals: in_flight}]}
  mismatch: {status: 200, json: {path: error.code, equals: -32011}}
expect: { missing_key: optional }`, 1)

// refusalClient calls the tool for each order with a key of its own, numbering every
// request anew as the SDKs do and reading an answer only when its id is the call's (an
// answer with another id answers no call of its: the attempt times out). An in-flight
// refusal is retried after 100 ms with the same key unless giveUp; any other JSON-RPC
// error is final. It returns how many answers carried another id.
func refusalClient(giveUp bool, foreign *int) clientcheck.ClientFunc {
	return refusalClientWaiting(giveUp, false, foreign)
}

// refusalClientWaiting is refusalClient that, with honourHint, waits as long as the
// refusal's error.data.retry_after_ms says (100 ms where it says nothing).
func refusalClientWaiting(giveUp, honourHint bool, foreign *int) clientcheck.ClientFunc {
	return func(ctx context.Context, env clientcheck.Env) error {
		c := &http.Client{Timeout: 2 * time.Second}
		id := 0
		for _, order := range []string{"o-1", "o-2"} {
			for attempt := 1; attempt <= 4; attempt++ {
				id++
				body := strings.ReplaceAll(env.OperationBody, "{{.Entity}}", order)
				body, _ = sjson.Set(body, "id", id)
				body, _ = sjson.Set(body, "params.arguments.idempotency_key", "call-"+order)
				req, err := http.NewRequestWithContext(ctx, env.OperationMethod, env.MCPEndpoint, strings.NewReader(body))
				if err != nil {
					return err
				}
				resp, err := c.Do(req)
				if err != nil {
					continue
				}
				answer, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if gjson.GetBytes(answer, "id").Int() != int64(id) {
					*foreign++
					continue
				}
				if code := gjson.GetBytes(answer, "error.code"); code.Exists() {
					if code.Int() == -32010 && !giveUp {
						wait := 100 * time.Millisecond
						if ms := gjson.GetBytes(answer, "error.data.retry_after_ms"); honourHint && ms.Exists() {
							wait = time.Duration(ms.Int()) * time.Millisecond
						}
						time.Sleep(wait)
						continue
					}
				}
				break
			}
		}
		return nil
	}
}

// Against a server that refuses inside a 200 with JSON-RPC errors, the 409 and 422 kinds
// answer as it would: a 200 whose JSON-RPC error is built from the profile's rule for the
// class, its id the refused call's, which the SDK clients need to take it as the answer
// to their call. A loop that retries the in-flight refusal has no findings; one that
// gives up on it leaves the operation unresolved.
func TestThe409And422KindsAnswerAsTheJSONRPCServerDoes(t *testing.T) {
	p, err := profile.Parse("tool-api.yaml", []byte(fmt.Sprintf(jsonRPCProfile, toolServer(t).URL)))
	require.NoError(t, err)
	foreign := 0
	res, err := clientcheck.Run(context.Background(), clientcheck.Config{Profile: p, FaultSpec: "409,422", Seed: 1, Timeout: 30 * time.Second}, refusalClient(false, &foreign))
	require.NoError(t, err)
	require.NoError(t, res.Err())
	require.Zero(t, foreign, "every answer, the injected refusals too, carried its call's id")
	require.Equal(t, map[outcome.Class]int{outcome.InFlight: 1, outcome.Mismatch: 1}, injectedClasses(t, res, "200"))
	require.Equal(t, 1, res.Observation.Ledger["o-1"]+res.Observation.Ledger["o-2"], "the in-flight refusal's retry committed; the mismatch was final")

	res, err = clientcheck.Run(context.Background(), clientcheck.Config{Profile: p, FaultSpec: "409", Seed: 1, Timeout: 30 * time.Second}, refusalClient(true, &foreign))
	require.NoError(t, err)
	require.ErrorContains(t, res.Err(), clientcheck.IDLostResolved)
}

// A JSON-RPC server that says in its error's data how long to wait: the profile's rule
// names where (retry_after), the 409 kind writes its Retry-After seconds there, and a
// client is held to that wait, not to the 50 ms backoff.
func TestThe409KindSaysTheWaitWhereTheRuleSaysAndTheClientIsHeldToIt(t *testing.T) {
	doc := strings.Replace(jsonRPCProfile, "in_flight: {json: [{path: error.code, equals: -32010}, {path: error.data.reason, equals: in_flight}]}",
		"in_flight: {json: [{path: error.code, equals: -32010}, {path: error.data.reason, equals: in_flight}], retry_after: {path: error.data.retry_after_ms, unit: ms}}", 1)
	p, err := profile.Parse("tool-api.yaml", []byte(fmt.Sprintf(doc, toolServer(t).URL)))
	require.NoError(t, err)
	foreign := 0
	res, err := clientcheck.Run(context.Background(), clientcheck.Config{Profile: p, FaultSpec: "409=1", Seed: 1, Timeout: 30 * time.Second}, refusalClientWaiting(false, false, &foreign))
	require.NoError(t, err)
	v := resultOf(t, res, clientcheck.ID409Hammered)
	require.Equal(t, verdict.Fail, v.Verdict, v.Message)
	require.Contains(t, v.Evidence.Examples[0], "(error.data.retry_after_ms 1s)", "the wait the body asked for, and where it said it")

	res, err = clientcheck.Run(context.Background(), clientcheck.Config{Profile: p, FaultSpec: "409=1", Seed: 1, Timeout: 30 * time.Second}, refusalClientWaiting(false, true, &foreign))
	require.NoError(t, err)
	v = resultOf(t, res, clientcheck.ID409Hammered)
	require.Equal(t, verdict.Pass, v.Verdict, v.Message)
	require.Zero(t, foreign)
}

// resultOf is the run's result for one check.
func resultOf(t *testing.T, res *clientcheck.Result, id string) verdict.Result {
	t.Helper()
	for _, r := range res.Report.Results {
		if r.ScenarioID == id {
			return r
		}
	}
	t.Fatalf("no result for %s", id)
	return verdict.Result{}
}

// The transport: mcp form of a profile names a tool and reads the ledger by a tool call:
// client-check refuses it with the form it needs, instead of a ledger "not running".
