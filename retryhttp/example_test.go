package retryhttp_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/idemproof/idemproof/retryhttp"
)

// A refund whose first response is lost to a 503: the retry carries the same key.
func Example() {
	attempts := 0
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		attempts++
		fmt.Printf("attempt %d key=%s\n", attempts, r.Header.Get("Idempotency-Key"))
		if attempts == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusCreated)
	}))
	defer api.Close()

	client := &retryhttp.Client{HTTPClient: api.Client()}
	resp, err := client.Do(context.Background(), retryhttp.Operation{
		Method: "POST",
		URL:    api.URL + "/v1/refunds",
		Body:   []byte(`{"order_id":"o-1","amount":4900}`),
		Key:    "refund-o-1", // the operation's own id: minted once, before the first attempt
	})
	if err != nil {
		fmt.Println(err) // errors.Is(err, retryhttp.ErrUnknownOutcome): report unknown, not failed
		return
	}
	defer resp.Body.Close()
	fmt.Println(resp.StatusCode)
	// Output:
	// attempt 1 key=refund-o-1
	// attempt 2 key=refund-o-1
	// 201
}
