package retrypolicy_test

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
)

// paymentsAPI is a keyed refund API shaped unlike the reference server (see
// testdata/payments-api.yaml): POST /api/payments/refunds with the key in
// X-Idempotency-Key and {"refund":{"payment":P,"cents":N}}; the key is recorded with a
// fingerprint before the work, the stored answer is replayed, a repeat in flight gets
// 409 with Retry-After, the key with another payload gets 400, a bad amount 422, no key
// simply executes. GET /api/payments/ledger?payment=P is {"entries":[…],"meta":{"total":N}}.
type paymentsAPI struct {
	mu      sync.Mutex
	keys    map[string]*storedAnswer
	entries map[string][]map[string]any
	next    int
}

type storedAnswer struct {
	fingerprint [32]byte
	done        bool
	status      int
	body        []byte
}

func startPaymentsAPI() *httptest.Server {
	api := &paymentsAPI{keys: map[string]*storedAnswer{}, entries: map[string][]map[string]any{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/payments/refunds", api.refund)
	mux.HandleFunc("GET /api/payments/ledger", api.ledger)
	return httptest.NewServer(mux)
}

func (a *paymentsAPI) refund(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		answer(w, http.StatusBadRequest, map[string]any{"error": map[string]any{"code": "unreadable_body"}})
		return
	}
	key := r.Header.Get("X-Idempotency-Key")
	if key == "" {
		status, out := a.execute(body)
		writeRaw(w, status, out, false)
		return
	}
	fp := sha256.Sum256(body)
	a.mu.Lock()
	st, seen := a.keys[key]
	switch {
	case seen && st.fingerprint != fp:
		a.mu.Unlock()
		answer(w, http.StatusBadRequest, map[string]any{"error": map[string]any{"code": "idempotency_key_reused"}})
		return
	case seen && !st.done:
		a.mu.Unlock()
		w.Header().Set("Retry-After", "1")
		answer(w, http.StatusConflict, map[string]any{"error": map[string]any{"code": "idempotency_key_in_use"}})
		return
	case seen:
		a.mu.Unlock()
		writeRaw(w, st.status, st.body, true)
		return
	}
	st = &storedAnswer{fingerprint: fp}
	a.keys[key] = st // recorded before the work
	a.mu.Unlock()
	status, out := a.execute(body)
	a.mu.Lock()
	st.done, st.status, st.body = true, status, out
	a.mu.Unlock()
	writeRaw(w, status, out, false)
}

// execute is the work: one ledger entry per valid refund.
func (a *paymentsAPI) execute(body []byte) (int, []byte) {
	var in struct {
		Refund struct {
			Payment string `json:"payment"`
			Cents   int    `json:"cents"`
		} `json:"refund"`
	}
	if json.Unmarshal(body, &in) != nil || in.Refund.Payment == "" || in.Refund.Cents <= 0 {
		out, _ := json.Marshal(map[string]any{"error": map[string]any{"code": "invalid_refund"}})
		return http.StatusUnprocessableEntity, out
	}
	a.mu.Lock()
	a.next++
	entry := map[string]any{"id": fmt.Sprintf("rf_%d", a.next), "payment": in.Refund.Payment, "cents": in.Refund.Cents}
	a.entries[in.Refund.Payment] = append(a.entries[in.Refund.Payment], entry)
	a.mu.Unlock()
	out, _ := json.Marshal(map[string]any{"refund": entry})
	return http.StatusCreated, out
}

func (a *paymentsAPI) ledger(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	entries := append([]map[string]any{}, a.entries[r.URL.Query().Get("payment")]...)
	a.mu.Unlock()
	answer(w, http.StatusOK, map[string]any{"entries": entries, "meta": map[string]any{"total": len(entries)}})
}

func answer(w http.ResponseWriter, status int, v any) {
	out, _ := json.Marshal(v)
	writeRaw(w, status, out, false)
}

func writeRaw(w http.ResponseWriter, status int, body []byte, replay bool) {
	w.Header().Set("Content-Type", "application/json")
	if replay {
		w.Header().Set("X-Idempotent-Replay", "true")
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
