package reference_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/idemproof/idemproof/reference"
)

// A retry with the same key gets the stored response, marked as a replay; the same key
// with another amount is refused.
func ExampleNew() {
	srv, err := reference.New() // memory store, open mode
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	ts := httptest.NewServer(srv)
	defer ts.Close()

	post := func(body string) (*http.Response, string) {
		req, _ := http.NewRequest(http.MethodPost, ts.URL+"/v1/refunds", strings.NewReader(body))
		req.Header.Set("Idempotency-Key", "order-42-refund-1")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	first, firstBody := post(`{"order_id":"order-42","amount":4900}`)
	retry, retryBody := post(`{"amount": 4900, "order_id": "order-42"}`)
	changed, _ := post(`{"order_id":"order-42","amount":5000}`)

	fmt.Println(first.StatusCode, first.Header.Get("Idempotent-Replayed") == "")
	fmt.Println(retry.StatusCode, retry.Header.Get("Idempotent-Replayed"), retryBody == firstBody)
	fmt.Println(changed.StatusCode, changed.Header.Get("Content-Type"))
	// Output:
	// 201 true
	// 201 true true
	// 422 application/problem+json
}
