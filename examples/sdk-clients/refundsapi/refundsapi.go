// Package refundsapi serves the refunds APIs the SDK examples call: the reference refund
// server (idemproof's own keyed refunds, memory store) in two shapes.
//
//   - JSON: the reference server as it is: POST /v1/refunds {"order_id": …, "amount":
//     4900}, the key in Idempotency-Key and optional (a request without one executes,
//     as at the APIs openai-go and go-retryablehttp are used against), 409 in flight,
//     422 for a key reused with another body, GET /v1/refunds?order_id=… the ledger.
//   - Stripe: the same refunds behind Stripe's wire shape, as stripe-go speaks it: a
//     form-encoded POST /v1/refunds (amount=4900&metadata[order_id]=…&payment_intent=…)
//     turned into the JSON call, and every refusal answered as a Stripe error object
//     ({"error": {"type": "idempotency_error", …}}, 400 for a key reused with other
//     parameters), which is what stripe-go decides its retries by.
//
// Both keep keys for the retention given (Stripe's 24 h by default).
package refundsapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/idemproof/idemproof/reference"
)

// DefaultRetention is how long the APIs keep a key: Stripe's 24 h.
const DefaultRetention = 24 * time.Hour

// Shapes of the API.
const (
	ShapeJSON   = "json"
	ShapeStripe = "stripe"
)

// New returns the API of the shape ("json" or "stripe") and a func that stops it.
func New(shape string, retention time.Duration) (http.Handler, func(), error) {
	if retention <= 0 {
		retention = DefaultRetention
	}
	ref, err := reference.New(reference.WithKeysOptional(true), reference.WithRetention(retention))
	if err != nil {
		return nil, nil, err
	}
	switch shape {
	case ShapeJSON:
		return ref, func() { ref.Close() }, nil
	case ShapeStripe:
		return stripeShaped{ref}, func() { ref.Close() }, nil
	}
	ref.Close()
	return nil, nil, fmt.Errorf("shape %q: want %s or %s", shape, ShapeJSON, ShapeStripe)
}

// stripeShaped speaks Stripe's wire shape in front of the JSON refunds.
type stripeShaped struct{ next http.Handler }

func (s stripeShaped) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/refunds" {
		s.next.ServeHTTP(w, r) // the ledger
		return
	}
	if err := r.ParseForm(); err != nil {
		stripeError(w, http.StatusBadRequest, "invalid_request_error", "", "the body is not form-encoded: "+err.Error())
		return
	}
	amount, err := strconv.Atoi(r.PostForm.Get("amount"))
	order := r.PostForm.Get("metadata[order_id]")
	if err != nil || order == "" {
		stripeError(w, http.StatusBadRequest, "invalid_request_error", "parameter_missing", "amount and metadata[order_id] are required")
		return
	}
	body, _ := json.Marshal(map[string]any{"order_id": order, "amount": amount})
	call := r.Clone(r.Context())
	call.Body, call.ContentLength = nopCloser{bytes.NewReader(body)}, int64(len(body))
	call.Header.Set("Content-Type", "application/json")
	call.PostForm, call.Form = url.Values{}, url.Values{}
	rec := httptest.NewRecorder()
	s.next.ServeHTTP(rec, call)
	res := rec.Result()
	for name, values := range res.Header {
		if name != "Content-Type" && name != "Content-Length" {
			w.Header()[name] = values
		}
	}
	switch {
	case res.StatusCode < 300:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(res.StatusCode)
		w.Write(rec.Body.Bytes())
	case res.StatusCode == http.StatusConflict:
		stripeError(w, http.StatusConflict, "idempotency_error", "idempotency_key_in_use", "There is currently another in-progress request using this Idempotent Key. Please try again later.")
	case res.StatusCode == http.StatusUnprocessableEntity:
		stripeError(w, http.StatusBadRequest, "idempotency_error", "", "Keys for idempotent requests can only be used with the same parameters they were first used with.")
	case res.StatusCode < 500:
		stripeError(w, res.StatusCode, "invalid_request_error", "", strings.TrimSpace(rec.Body.String()))
	default:
		stripeError(w, res.StatusCode, "api_error", "", "the refunds API failed")
	}
}

// stripeError writes a Stripe error object.
func stripeError(w http.ResponseWriter, status int, typ, code, msg string) {
	e := map[string]string{"type": typ, "message": msg}
	if code != "" {
		e["code"] = code
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"error": e})
}

type nopCloser struct{ *bytes.Reader }

func (nopCloser) Close() error { return nil }
