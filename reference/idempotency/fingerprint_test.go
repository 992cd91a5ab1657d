package idempotency_test

import (
	"testing"

	"github.com/idemproof/idemproof/reference/idempotency"
	"github.com/stretchr/testify/require"
)

func TestFingerprintIgnoresSpellingNotValues(t *testing.T) {
	base := idempotency.Fingerprint("POST", "/v1/refunds", "alice", []byte(`{"order_id":"o1","amount":4900}`))
	same := [][]byte{
		[]byte(`{"amount":4900,"order_id":"o1"}`),
		[]byte("{ \"order_id\" : \"o1\",\n \"amount\" : 4900 }"),
		[]byte(`{"order_id":"o1","amount":4900.0}`),
		[]byte(`{"order_id":"o1","amount":4.9e3}`),
	}
	for _, b := range same {
		require.Equal(t, base, idempotency.Fingerprint("POST", "/v1/refunds", "alice", b), "body %s", b)
	}
	differ := []struct {
		method, path, principal string
		body                    []byte
	}{
		{"POST", "/v1/refunds", "alice", []byte(`{"order_id":"o1","amount":5000}`)},
		{"POST", "/v1/refunds", "alice", []byte(`{"order_id":"o2","amount":4900}`)},
		{"POST", "/v1/refunds", "alice", []byte(`{"order_id":"o1","amount":"4900"}`)},
		{"POST", "/v1/refunds", "bob", []byte(`{"order_id":"o1","amount":4900}`)},
		{"POST", "/v1/invoices", "alice", []byte(`{"order_id":"o1","amount":4900}`)},
		{"PUT", "/v1/refunds", "alice", []byte(`{"order_id":"o1","amount":4900}`)},
	}
	for _, d := range differ {
		require.NotEqual(t, base, idempotency.Fingerprint(d.method, d.path, d.principal, d.body), "%+v", d)
	}
	// Parts are length-prefixed, so moving a character between them changes the print.
	require.NotEqual(t,
		idempotency.Fingerprint("POST", "/a", "b", nil),
		idempotency.Fingerprint("POST", "/ab", "", nil))
}

func TestCanonicalJSON(t *testing.T) {
	got, ok := idempotency.CanonicalJSON([]byte(`{"b":[1.50,{"y":true,"x":null}],"a":"s"}`))
	require.True(t, ok)
	require.Equal(t, `{"a":"s","b":[1.5,{"x":null,"y":true}]}`, string(got))
	_, ok = idempotency.CanonicalJSON([]byte(`{"a":1} {"b":2}`))
	require.False(t, ok)
	_, ok = idempotency.CanonicalJSON([]byte(`not json`))
	require.False(t, ok)
}

func TestCanonicalNumbers(t *testing.T) {
	for in, want := range map[string]string{
		"4900": "4900", "4900.0": "4900", "4.9e3": "4900", "-0": "0", "0": "0", "-12": "-12", "0.5": "0.5", "0.50": "0.5", "5e-1": "0.5", "-1.25e1": "-12.5", "1e-3": "0.001", "1E2": "100",
	} {
		got, ok := idempotency.CanonicalJSON([]byte(in))
		require.True(t, ok, in)
		require.Equal(t, want, string(got), in)
	}
}
