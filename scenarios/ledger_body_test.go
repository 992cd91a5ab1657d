package scenarios_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/verdict"
)

// rpcCounted is a plain JSON-RPC 2.0 server (not MCP) with two methods on POST /rpc:
// refund.create, keyed by params.idempotency_key (a repeat gets the stored result), and
// refund.count, the ledger: its only way to count is a call with a body.
type rpcCounted struct {
	mu      sync.Mutex
	results map[string]json.RawMessage // by key
	ledger  map[string]int             // by order
	counts  int                        // ledger reads
}

func (s *rpcCounted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			OrderID string `json:"order_id"`
			Amount  int    `json:"amount"`
			Key     string `json:"idempotency_key"`
		} `json:"params"`
	}
	if r.URL.Path != "/rpc" || r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&req) != nil {
		http.Error(w, "not a JSON-RPC call", http.StatusBadRequest)
		return
	}
	answer := func(result json.RawMessage) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch req.Method {
	case "refund.count":
		s.counts++
		answer(json.RawMessage(`{"count":` + itoa(s.ledger[req.Params.OrderID]) + `}`))
	case "refund.create":
		if stored, ok := s.results[req.Params.Key]; ok && req.Params.Key != "" {
			answer(stored)
			return
		}
		s.ledger[req.Params.OrderID]++
		result, _ := json.Marshal(map[string]any{"refund_id": "rf_" + req.Params.Key, "order_id": req.Params.OrderID, "amount": req.Params.Amount})
		s.results[req.Params.Key] = result
		answer(result)
	default:
		http.Error(w, "no such method", http.StatusNotFound)
	}
}

const countedRPCProfile = `name: rpc
base_url: %s
key_field: params.idempotency_key
operation:
  path: /rpc
  body: '{"jsonrpc": "2.0", "id": 1, "method": "refund.create", "params": {"order_id": "{{.Entity}}", "amount": 4900}}'
side_effects:
  method: POST
  path: /rpc
  body: '{"jsonrpc": "2.0", "id": 2, "method": "refund.count", "params": {"order_id": "{{.Entity}}"}}'
  count: result.count
expect: {in_flight: 409, mismatch: 422, missing_key: optional}
`

func TestALedgerReadWithABodyCountsAJSONRPCMethod(t *testing.T) {
	t.Parallel()
	s := &rpcCounted{results: map[string]json.RawMessage{}, ledger: map[string]int{}}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	p, err := profile.Parse("rpc.yaml", []byte(strings.Replace(countedRPCProfile, "%s", srv.URL, 1)))
	require.NoError(t, err)
	results := runOn(t, p, "replay/sequential", "replay/after-reset")
	for id, r := range results {
		requirePassOrUnrefusedBurst(t, id, r)
		require.Equal(t, 1, r.Evidence.Record.Ledger[verdict.LedgerOperation], id)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	require.GreaterOrEqual(t, s.counts, 2, "the ledger was read by its method")
}

func TestALedgerBodyIsRefusedWhereNoBodyGoes(t *testing.T) {
	t.Parallel()
	base := strings.Replace(countedRPCProfile, "%s", "http://127.0.0.1:1", 1)
	for _, tc := range []struct{ old, new, want string }{
		{"  method: POST\n", "", `side_effects.body: a GET carries no body: a ledger read with a body (a JSON-RPC counting method) is method: POST`},
		{`"params": {"order_id": "{{.Entity}}"}}'`, `"params": {}}'`, `side_effects.path: or side_effects.body must contain {{.Entity}}`},
	} {
		_, err := profile.Parse("rpc.yaml", []byte(strings.Replace(base, tc.old, tc.new, 1)))
		require.ErrorContains(t, err, tc.want)
	}
}
