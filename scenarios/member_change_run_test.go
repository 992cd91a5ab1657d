package scenarios_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/verdict"
)

// rpcRefunds is a keyed refund API spoken as plain JSON-RPC 2.0 over HTTP, done right:
// the key is params.idempotency_key, the fingerprint is params by value (without the key,
// and without ignore when set), a repeat replays the stored result, and every answer
// echoes the request's id as written (JSON-RPC 2.0 §5).
type rpcRefunds struct {
	ignore string // a member of params left out of the fingerprint
	keyedLedger
}

// keyedLedger is the state both fakes here keep: stored results by key, effects by order
// (read with a GET ?order_id=), and a counter for refund ids.
type keyedLedger struct {
	mu     sync.Mutex
	keys   map[string]rpcEntry
	ledger map[string]int
	seq    int
}

// serve starts h, whose state is l, on a new test server.
func (l *keyedLedger) serve(t *testing.T, h http.Handler) string {
	t.Helper()
	l.keys, l.ledger = map[string]rpcEntry{}, map[string]int{}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.URL
}

// serveCount answers a GET with the order's count; false for any other method.
func (l *keyedLedger) serveCount(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodGet {
		return false
	}
	l.mu.Lock()
	n := l.ledger[r.URL.Query().Get("order_id")]
	l.mu.Unlock()
	writeJSON(w, 200, map[string]any{"count": n})
	return true
}

type rpcEntry struct {
	fp     string
	result json.RawMessage
}

func startRPCRefunds(t *testing.T, f *rpcRefunds) string { return f.serve(t, f) }

func (f *rpcRefunds) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if f.serveCount(w, r) {
		return
	}
	raw, _ := io.ReadAll(r.Body)
	var req struct {
		ID     json.RawMessage `json:"id"`
		Params map[string]any  `json:"params"`
	}
	if json.Unmarshal(raw, &req) != nil {
		writeJSON(w, 400, map[string]any{"error": "bad json"})
		return
	}
	id := string(req.ID)
	if id == "" {
		id = "null"
	}
	answer := func(member string, v any) {
		out, _ := json.Marshal(v)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,%q:%s}`, id, member, out)
	}
	key, _ := req.Params["idempotency_key"].(string)
	if key == "" {
		answer("error", map[string]any{"code": -32012, "message": "missing idempotency_key"})
		return
	}
	fpParams := map[string]any{}
	for k, v := range req.Params {
		if k != "idempotency_key" && k != f.ignore {
			fpParams[k] = v
		}
	}
	fp, _ := json.Marshal(fpParams) // by value: 100.0 is 100
	f.mu.Lock()
	defer f.mu.Unlock()
	if e, seen := f.keys[key]; seen {
		if e.fp != string(fp) {
			answer("error", map[string]any{"code": -32011, "message": "idempotency_key reused with other params"})
			return
		}
		answer("result", e.result)
		return
	}
	order := fmt.Sprint(req.Params["order_id"])
	f.ledger[order]++
	f.seq++
	result, _ := json.Marshal(map[string]any{"refund_id": f.seq, "order_id": order, "amount": req.Params["amount"]})
	f.keys[key] = rpcEntry{fp: string(fp), result: result}
	answer("result", json.RawMessage(result))
}

func rpcProfile(t *testing.T, base string) *profile.Profile {
	t.Helper()
	p, err := profile.Parse("rpc.yaml", []byte(`name: rpc-refunds
base_url: `+base+`
key_field: params.idempotency_key
operation:
  method: POST
  path: /rpc
  body: '{"jsonrpc": "2.0", "id": 1, "method": "refund.create", "params": {"order_id": "{{.Entity}}", "amount": 100, "reason": "duplicate"}}'
side_effects: {path: '/ledger?order_id={{.Entity}}', count: count}
outcomes:
  in_flight: {json: {path: error.code, equals: -32010}}
  mismatch: {json: {path: error.code, equals: -32011}}
  missing_key: {json: {path: error.code, equals: -32012}}
  success: {json: {path: result, exists: true}}
client_timeout: 5s
`))
	require.NoError(t, err)
	return p
}

// A plain JSON-RPC 2.0 server that fingerprints params and echoes the request's id is not
// failed for the id it echoes: each-member and number-spelling leave the envelope alone.
func TestJSONRPCEnvelopeIsNotChangedOverHTTP(t *testing.T) {
	t.Parallel()
	got := runOn(t, rpcProfile(t, startRPCRefunds(t, &rpcRefunds{})), "fingerprint/each-member", "fingerprint/number-spelling")
	each, spelled := got["fingerprint/each-member"], got["fingerprint/number-spelling"]
	require.Equal(t, verdict.Pass, each.Verdict, each.Message)
	require.Contains(t, each.Message, "params.amount, params.reason")
	require.NotContains(t, each.Message, "not judged")
	require.Equal(t, verdict.Info, spelled.Verdict, spelled.Message)
	require.Contains(t, spelled.Message, "same request")

	// The fingerprint leaving the amount out is still caught.
	got = runOn(t, rpcProfile(t, startRPCRefunds(t, &rpcRefunds{ignore: "amount"})), "fingerprint/each-member")
	each = got["fingerprint/each-member"]
	require.Equal(t, verdict.NonStrict, each.Verdict, each.Message)
	require.Contains(t, each.Message, "the fingerprint ignores params.amount")
}

var (
	moneyValue = regexp.MustCompile(`^-?[0-9]+(\.[0-9]{2})?$`)
	moneyCode  = regexp.MustCompile(`^[A-Z]{3}$`)
)

// moneyRefunds is a PayPal-like refund API: it validates the amount as a decimal string
// and its currency as an ISO 4217 code (400 before the key is looked at), then
// fingerprints the body by value, without amount.value when ignoreValue is set.
type moneyRefunds struct {
	ignoreValue bool
	keyedLedger // the stored result is the refund's body
}

func startMoneyRefunds(t *testing.T, f *moneyRefunds) string { return f.serve(t, f) }

func (f *moneyRefunds) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if f.serveCount(w, r) {
		return
	}
	var body struct {
		OrderID string `json:"order_id"`
		Amount  struct {
			Value        string `json:"value"`
			CurrencyCode string `json:"currency_code"`
		} `json:"amount"`
		RefundDate string `json:"refund_date"`
		Note       string `json:"note"`
	}
	if json.NewDecoder(r.Body).Decode(&body) != nil {
		writeJSON(w, 400, map[string]any{"name": "MALFORMED_REQUEST_JSON"})
		return
	}
	_, dateErr := time.Parse(time.DateOnly, body.RefundDate)
	if !moneyValue.MatchString(body.Amount.Value) || !moneyCode.MatchString(body.Amount.CurrencyCode) || dateErr != nil {
		writeJSON(w, 400, map[string]any{"name": "INVALID_REQUEST", "details": []string{"amount or refund_date"}})
		return
	}
	key := r.Header.Get("PayPal-Request-Id")
	if key == "" {
		writeJSON(w, 400, map[string]any{"name": "MISSING_REQUEST_ID"})
		return
	}
	if f.ignoreValue {
		body.Amount.Value = ""
	}
	fp, _ := json.Marshal(body)
	f.mu.Lock()
	defer f.mu.Unlock()
	if e, seen := f.keys[key]; seen {
		if e.fp != string(fp) {
			writeJSON(w, 422, map[string]any{"name": "UNPROCESSABLE_ENTITY", "details": []string{"PayPal-Request-Id reused with another body"}})
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(201)
		_, _ = w.Write(e.result)
		return
	}
	f.ledger[body.OrderID]++
	f.seq++
	result, _ := json.Marshal(map[string]any{"id": f.seq, "status": "COMPLETED"})
	f.keys[key] = rpcEntry{fp: string(fp), result: result}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(201)
	_, _ = w.Write(result)
}

func moneyProfile(t *testing.T, base string) *profile.Profile {
	t.Helper()
	p, err := profile.Parse("money.yaml", []byte(`name: money-refunds
base_url: `+base+`
key_header: PayPal-Request-Id
operation:
  path: /v2/refunds
  body: '{"order_id": "{{.Entity}}", "amount": {"value": "10.99", "currency_code": "USD"}, "refund_date": "2026-01-31", "note": "duplicate"}'
side_effects: {path: '/v2/refunds?order_id={{.Entity}}', count: count}
expect: {in_flight: 409, mismatch: 422, missing_key: "400"}
client_timeout: 5s
`))
	require.NoError(t, err)
	return p
}

// A server that validates money strings and currency codes sees each-member's changes
// reach its fingerprint: the one that leaves amount.value out of it is reported, the one
// that does not passes with every member judged.
func TestEachMemberChangesMoneyToValidMoney(t *testing.T) {
	t.Parallel()
	got := runOn(t, moneyProfile(t, startMoneyRefunds(t, &moneyRefunds{ignoreValue: true})), "fingerprint/each-member")
	each := got["fingerprint/each-member"]
	require.Equal(t, verdict.NonStrict, each.Verdict, each.Message)
	require.Contains(t, each.Message, "the fingerprint ignores amount.value:")
	require.NotContains(t, each.Message, "not judged")

	got = runOn(t, moneyProfile(t, startMoneyRefunds(t, &moneyRefunds{})), "fingerprint/each-member")
	each = got["fingerprint/each-member"]
	require.Equal(t, verdict.Pass, each.Verdict, each.Message)
	require.Contains(t, each.Message, "amount.value, amount.currency_code, refund_date, note")
	require.NotContains(t, each.Message, "not judged")
}
