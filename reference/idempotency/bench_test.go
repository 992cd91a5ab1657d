package idempotency_test

import (
	"testing"

	"github.com/idemproof/idemproof/reference/idempotency"
)

// go test -run '^$' -bench . ./reference/idempotency/
func BenchmarkFingerprint(b *testing.B) {
	body := []byte(`{"order_id":"order-12345","amount":4900,"reason":"requested_by_customer"}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := idempotency.Fingerprint("POST", "/v1/refunds", "anonymous", body); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseKey(b *testing.B) {
	v := []string{"order-12345-refund-1"}
	b.ReportAllocs()
	for b.Loop() {
		idempotency.ParseKey(v)
	}
}
