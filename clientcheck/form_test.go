package clientcheck_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/clientcheck"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/verdict"
)

// formServer is a Stripe-shaped API: POST /v1/refunds with a form body
// (amount=4900&metadata[order_id]=E), or POST /v1/charges/E/refunds with amount=4900,
// keyed by Idempotency-Key (a repeat gets the stored answer); GET /ledger?order=E
// counts E's refunds.
func formServer(t *testing.T) *httptest.Server {
	var mu sync.Mutex
	stored, effects := map[string]string{}, map[string]int{}
	refund := func(w http.ResponseWriter, r *http.Request, order string) {
		mu.Lock()
		defer mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		key := r.Header.Get("Idempotency-Key")
		if out, ok := stored[key]; ok && key != "" {
			w.Write([]byte(out))
			return
		}
		effects[order]++
		out := fmt.Sprintf(`{"id":"re_%s_%d","object":"refund"}`, order, effects[order])
		stored[key] = out
		w.Write([]byte(out))
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/refunds", func(w http.ResponseWriter, r *http.Request) {
		require.NoError(t, r.ParseForm())
		refund(w, r, r.PostForm.Get("metadata[order_id]"))
	})
	mux.HandleFunc("POST /v1/charges/{charge}/refunds", func(w http.ResponseWriter, r *http.Request) {
		refund(w, r, r.PathValue("charge"))
	})
	return startWithLedger(t, mux, &mu, effects)
}

const formProfile = `name: form-api
base_url: %s
operation:
  method: POST
  path: %s
  headers: {Content-Type: application/x-www-form-urlencoded}
  body: '%s'
side_effects:
  path: /ledger?order={{.Entity}}
  count: n
expect: { in_flight: 409, mismatch: 400, missing_key: optional }
`

// formClient posts a form refund for each order, up to 3 attempts, under keyFor's key.
func formClient(keyFor func(order string, attempt int) string) clientcheck.ClientFunc {
	return func(ctx context.Context, env clientcheck.Env) error {
		c := &http.Client{Timeout: 2 * time.Second}
		for _, order := range []string{"ch_1", "ch_2", "ch_3"} {
			for attempt := 1; attempt <= 3; attempt++ {
				target := strings.ReplaceAll(env.OperationURL, "{{.Entity}}", url.PathEscape(order))
				body := strings.ReplaceAll(env.OperationBody, "{{.Entity}}", url.QueryEscape(order))
				req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, strings.NewReader(body))
				if err != nil {
					return err
				}
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				if key := keyFor(order, attempt); key != "" {
					req.Header.Set("Idempotency-Key", key)
				}
				resp, err := c.Do(req)
				if err != nil {
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					break
				}
			}
		}
		return nil
	}
}

// A form-encoded API (Stripe's shape) names the operation in a form field or in the
// path; client-check finds it there without an entity: line, counts each operation's
// effects, and tells a kept key from one minted per attempt.
func TestAFormEncodedTargetNamesItsOperationInAFieldOrThePath(t *testing.T) {
	srv := formServer(t)
	for _, tc := range []struct{ path, body, entity string }{
		{"/v1/refunds", "amount=4900&metadata[order_id]={{.Entity}}", "form:metadata[order_id]"},
		{"/v1/charges/{{.Entity}}/refunds", "amount=4900", "path:/v1/charges/{{.Entity}}/refunds"},
	} {
		p, err := profile.Parse("form-api.yaml", []byte(fmt.Sprintf(formProfile, srv.URL, tc.path, tc.body)))
		require.NoError(t, err)
		entity, err := clientcheck.EntityOf(p)
		require.NoError(t, err)
		require.Equal(t, tc.entity, entity.String())

		cfg := clientcheck.Config{Profile: p, FaultSpec: "503", Seed: 3, Timeout: 30 * time.Second}
		res, err := clientcheck.Run(context.Background(), cfg, formClient(func(order string, _ int) string { return "refund-" + tc.path + order }))
		require.NoError(t, err)
		require.NoError(t, res.Err(), tc.entity)
		require.Equal(t, map[string]int{"ch_1": 1, "ch_2": 1, "ch_3": 1}, res.Observation.Ledger, tc.entity)

		res, err = clientcheck.Run(context.Background(), cfg, formClient(func(order string, attempt int) string {
			return fmt.Sprintf("refund-%s-%s-%d-%d", tc.path, order, attempt, time.Now().UnixNano())
		}))
		require.NoError(t, err)
		require.ErrorContains(t, res.Err(), "key minted per attempt", tc.entity)
		require.Greater(t, res.Observation.Ledger["ch_1"], 1, "every fresh key executes again: %s", tc.entity)
	}
}

// A client that sends no key at all (an SDK as shipped, retrying a 5xx): the proxy
// numbers attempts per key, so the front marks each operation's first keyless attempt,
// and the fault it was dealt reaches it. Its retry of the committed request is then the
// duplicate it is, and no check says the key was kept.
func TestAClientWithoutKeysMeetsItsFaultsAndDuplicates(t *testing.T) {
	srv := formServer(t)
	p, err := profile.Parse("form-api.yaml", []byte(fmt.Sprintf(formProfile, srv.URL, "/v1/refunds", "amount=4900&metadata[order_id]={{.Entity}}")))
	require.NoError(t, err)
	cfg := clientcheck.Config{Profile: p, FaultSpec: "503", Seed: 3, Timeout: 30 * time.Second}
	res, err := clientcheck.Run(context.Background(), cfg, formClient(func(string, int) string { return "" }))
	require.NoError(t, err)
	require.Equal(t, map[string]int{"ch_1": 2, "ch_2": 2, "ch_3": 2}, res.Observation.Ledger, "each first attempt got the 503 after it committed, and was retried")
	verdicts := map[string]verdict.Verdict{}
	for _, r := range res.Report.Results {
		verdicts[r.ScenarioID] = r.Verdict
	}
	// One cause, one finding: the missing key, with its consequences under it.
	require.Equal(t, verdict.Fail, verdicts[clientcheck.IDNoKey])
	require.Equal(t, verdict.NA, verdicts[clientcheck.IDOneEffect])
	require.Equal(t, verdict.NA, verdicts[clientcheck.IDSameKeyOnRetry])
	require.Len(t, res.Findings(), 1, res.Err())
	require.ErrorContains(t, res.Err(), "sends no key: 3 of 3 operation(s)")
	for _, line := range clientcheck.ScheduleLines(res.Observation) {
		require.NotContains(t, line, "applied to 0", line)
	}
}

// The 409 and 422 kinds stand in for the API's own refusals, so they carry the body the
// profile says the API sends: under extends: stripe, Stripe's error object as JSON (a
// client such as stripe-go decides by it whether to retry), elsewhere problem+json.
func TestRefusalKindsSendTheAPIsOwnBody(t *testing.T) {
	srv := formServer(t)
	for _, tc := range []struct{ extends, wantType, wantBody string }{
		{"extends: stripe\n", "application/json", `"code":"idempotency_key_in_use"`},
		{"", "application/problem+json", `"type":"idempotency-key-in-use"`},
	} {
		doc := strings.Replace(fmt.Sprintf(formProfile, srv.URL, "/v1/refunds", "amount=4900&metadata[order_id]={{.Entity}}"), "name: form-api\n", "name: form-api\n"+tc.extends, 1)
		if tc.extends != "" {
			doc = strings.Replace(doc, "expect: { in_flight: 409, mismatch: 400, missing_key: optional }\n", "", 1)
		}
		p, err := profile.Parse("form-api.yaml", []byte(doc))
		require.NoError(t, err)
		var mu sync.Mutex
		got := map[string]string{}
		client := func(ctx context.Context, env clientcheck.Env) error {
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, env.OperationURL, strings.NewReader("amount=4900&metadata[order_id]=ch_9"))
			if err != nil {
				return err
			}
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Idempotency-Key", "refund-ch_9")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			mu.Lock()
			got["status"], got["type"], got["body"] = fmt.Sprint(resp.StatusCode), resp.Header.Get("Content-Type"), string(b)
			mu.Unlock()
			return nil
		}
		_, err = clientcheck.Run(context.Background(), clientcheck.Config{Profile: p, FaultSpec: "409", Seed: 1, Timeout: 30 * time.Second}, client)
		require.NoError(t, err)
		require.Equal(t, "409", got["status"], tc.extends)
		require.Equal(t, tc.wantType, got["type"], tc.extends)
		require.Contains(t, got["body"], tc.wantBody, tc.extends)
	}
}

// startWithLedger serves mux with GET /ledger?order=E added: {"n": E's count in effects},
// read under mu.
func startWithLedger(t *testing.T, mux *http.ServeMux, mu *sync.Mutex, effects map[string]int) *httptest.Server {
	mux.HandleFunc("GET /ledger", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(w, `{"n": %d}`, effects[r.URL.Query().Get("order")])
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}
