package clientcheck_test

import (
	"compress/gzip"
	"context"
	"encoding/json"
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

	"github.com/idemproof/idemproof/clientcheck"
	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/verdict"
)

// rpcRefunds is a JSON-RPC refund tool whose every answer is a 200, told apart by its body
// only: {"result": …} for an executed or replayed call, {"error": {"code": -32011}} for
// its key reused with another amount. It gzips an answer to a request that accepts gzip,
// and counts the answers it gzipped.
func rpcRefunds(t *testing.T, gzipped *atomic.Int32) *httptest.Server {
	var mu sync.Mutex
	type stored struct {
		amount float64
		answer []byte
	}
	keys, effects := map[string]stored{}, map[string]int{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /rpc", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Params struct {
				Arguments struct {
					Order  string  `json:"order"`
					Amount float64 `json:"amount"`
					Key    string  `json:"idempotency_key"`
				} `json:"arguments"`
			} `json:"params"`
		}
		body, _ := io.ReadAll(r.Body)
		require.NoError(t, json.Unmarshal(body, &req))
		args := req.Params.Arguments
		mu.Lock()
		s, seen := keys[args.Key]
		var answer []byte
		switch {
		case seen && s.amount == args.Amount:
			answer = s.answer
		case seen:
			answer = []byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32011,"message":"idempotency key reused with another payload"}}`)
		default:
			effects[args.Order]++
			answer = []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"result":{"refunded":%q,"amount":%v}}`, args.Order, args.Amount))
			keys[args.Key] = stored{args.Amount, answer}
		}
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			w.Write(answer)
			return
		}
		gzipped.Add(1)
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		zw.Write(answer)
		zw.Close()
	})
	return startWithLedger(t, mux, &mu, effects)
}

const rpcProfile = `name: rpc-refunds
base_url: %s
key_field: params.arguments.idempotency_key
operation:
  path: /rpc
  body: '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"refund","arguments":{"order":"{{.Entity}}","amount":100}}}'
side_effects: {path: '/ledger?order={{.Entity}}', count: n}
expect: {in_flight: 409, missing_key: optional}
outcomes:
  mismatch: {json: {path: error.code, equals: -32011}}
  success: {json: {path: result, exists: true}}
`

// rpcClient refunds o-1 (retrying past a 503), then o-2, and then reuses o-2's key with
// another amount and, the client bug client/422-retried names, sends that again
// unchanged after the mismatch. acceptGzip: every request asks for gzip, which the
// client then reads itself (Go's transport decodes only what it asked for on its own).
func rpcClient(acceptGzip bool) clientcheck.ClientFunc {
	return func(ctx context.Context, env clientcheck.Env) error {
		c := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableCompression: true}}
		post := func(order, key string, amount int) (int, error) {
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"refund","arguments":{"order":%q,"amount":%d,"idempotency_key":%q}}}`, order, amount, key)
			req, err := http.NewRequestWithContext(ctx, env.OperationMethod, env.OperationURL, strings.NewReader(body))
			if err != nil {
				return 0, err
			}
			if acceptGzip {
				req.Header.Set("Accept-Encoding", "gzip")
			}
			resp, err := c.Do(req)
			if err != nil {
				return 0, err
			}
			defer resp.Body.Close()
			r := io.Reader(resp.Body)
			if resp.Header.Get("Content-Encoding") == "gzip" {
				zr, err := gzip.NewReader(resp.Body)
				if err != nil {
					return 0, err
				}
				r = zr
			}
			if _, err := io.ReadAll(r); err != nil {
				return 0, err
			}
			return resp.StatusCode, nil
		}
		for _, order := range []string{"o-1", "o-2"} {
			for attempt := 1; attempt <= 3; attempt++ {
				if status, err := post(order, "call-"+order, 100); err == nil && status == 200 {
					break
				}
			}
		}
		for range 2 {
			if _, err := post("o-2", "call-o-2", 150); err != nil {
				return err
			}
		}
		return nil
	}
}

// client-check classes the answers its client got after undoing their Content-Encoding:
// the same JSON-RPC answers gzipped get the classes, and the run the verdicts, they get
// uncompressed (a success by its result, a mismatch by its error code, both inside a 200).
func TestGzippedAnswersAreClassedByWhatTheySay(t *testing.T) {
	run := func(acceptGzip bool) (*clientcheck.Result, int32) {
		var gzipped atomic.Int32
		p, err := profile.Parse("rpc-refunds.yaml", []byte(fmt.Sprintf(rpcProfile, rpcRefunds(t, &gzipped).URL)))
		require.NoError(t, err)
		res, err := clientcheck.Run(context.Background(), clientcheck.Config{Profile: p, FaultSpec: "503", Seed: 1, Timeout: 30 * time.Second}, rpcClient(acceptGzip))
		require.NoError(t, err)
		return res, gzipped.Load()
	}
	classes := func(res *clientcheck.Result, op string) []outcome.Class {
		var out []outcome.Class
		for _, a := range res.Attempts(op) {
			out = append(out, a.Class)
		}
		return out
	}
	verdicts := func(res *clientcheck.Result) map[string]verdict.Verdict {
		out := map[string]verdict.Verdict{}
		for _, r := range res.Report.Results {
			out[r.ScenarioID] = r.Verdict
		}
		return out
	}

	plain, n := run(false)
	require.Zero(t, n)
	require.Equal(t, []outcome.Class{outcome.ServerError, outcome.Success}, classes(plain, "o-1"), "a 503 after the commit, then the replay")
	require.Equal(t, []outcome.Class{outcome.ServerError, outcome.Success, outcome.Mismatch, outcome.Mismatch}, classes(plain, "o-2"))
	require.Equal(t, verdict.Fail, verdicts(plain)[clientcheck.ID422Retried], "the mismatch sent again unchanged")
	require.Equal(t, verdict.Pass, verdicts(plain)[clientcheck.IDLostResolved])

	compressed, n := run(true)
	require.Equal(t, int32(6), n, "every answer of the target was gzipped (two of them the proxy replaced with its 503)")
	for _, a := range compressed.Attempts("o-2") {
		if a.Fault == "" {
			require.Equal(t, "200", a.Delivered)
		}
	}
	require.Equal(t, classes(plain, "o-1"), classes(compressed, "o-1"))
	require.Equal(t, classes(plain, "o-2"), classes(compressed, "o-2"))
	require.Equal(t, verdicts(plain), verdicts(compressed))
	require.Equal(t, plain.Observation.Ledger, compressed.Observation.Ledger)
}
