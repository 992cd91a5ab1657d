package idempotency_test

import (
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/idemproof/idemproof/reference/idempotency"
	"github.com/stretchr/testify/require"
)

func fingerprint(t *testing.T, method, path, principal string, body []byte) string {
	t.Helper()
	fp, err := idempotency.Fingerprint(method, path, principal, body)
	require.NoError(t, err, "%s", body)
	return fp
}

func TestFingerprintIgnoresSpellingNotValues(t *testing.T) {
	base := fingerprint(t, "POST", "/v1/refunds", "alice", []byte(`{"order_id":"o1","amount":4900}`))
	same := [][]byte{
		[]byte(`{"amount":4900,"order_id":"o1"}`),
		[]byte("{ \"order_id\" : \"o1\",\n \"amount\" : 4900 }"),
		[]byte(`{"order_id":"o1","amount":4900.0}`),
		[]byte(`{"order_id":"o1","amount":4.9e3}`),
	}
	for _, b := range same {
		require.Equal(t, base, fingerprint(t, "POST", "/v1/refunds", "alice", b), "body %s", b)
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
		require.NotEqual(t, base, fingerprint(t, d.method, d.path, d.principal, d.body), "%+v", d)
	}
	// Parts are length-prefixed, so moving a character between them changes the print.
	require.NotEqual(t,
		fingerprint(t, "POST", "/a", "b", nil),
		fingerprint(t, "POST", "/ab", "", nil))
}

// The collision of the hardening review: members a decoder takes for one name were
// sorted apart, so {"amount":1,"AMOUNT":2} (executes 2) and {"AMOUNT":2,"amount":1}
// (executes 1) shared a fingerprint. Such bodies are refused now, at any depth.
func TestFingerprintRefusesMembersADecoderMerges(t *testing.T) {
	for _, body := range []string{
		`{"order_id":"c","amount":1,"AMOUNT":2}`,
		`{"order_id":"c","AMOUNT":2,"amount":1}`,
		`{"order_id":"c","ORDER_ID":"d","amount":1}`,
		`{"order_id":"c","amount":1,"amount":2}`,
		`{"a":{"k":1,"\u212a":2}}`,                                              // KELVIN SIGN folds to k
		`[{"x":1},{"s":1,"ſ":2}]`,                                               // LONG S folds to s
		`{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"B":11}`, // past the pairwise size
		`{"a\u0062":1,"AB":2}`,
	} {
		_, err := idempotency.Fingerprint("POST", "/v1/refunds", "p", []byte(body))
		require.ErrorIs(t, err, idempotency.ErrDuplicateMember, body)
		var be *idempotency.BodyError
		require.True(t, errors.As(err, &be))
		require.Equal(t, 400, be.Status)
		require.Contains(t, be.Detail, "once")
	}
	for _, body := range []string{`{"a":1,"b":{"a":2}}`, `{"ab":1,"a b":2}`, `{"k":1,"kk":2}`} {
		_, err := idempotency.Fingerprint("POST", "/v1/refunds", "p", []byte(body))
		require.NoError(t, err, body)
	}
}

func TestFingerprintRefusesNumbersBeyondFloat64(t *testing.T) {
	for _, body := range []string{`{"amount":1e400}`, `[1.8e308]`, `-1e99999999999999999999999`, `{"a":[` + "1" + string(make([]byte, 0)) + `e309]}`} {
		_, err := idempotency.Fingerprint("POST", "/", "p", []byte(body))
		require.ErrorIs(t, err, idempotency.ErrNumberRange, body)
	}
	for _, body := range []string{`1.7976931348623157e308`, `1e-400`, `1e-99999999999999999999`, `0e99999999999`} {
		_, err := idempotency.Fingerprint("POST", "/", "p", []byte(body))
		require.NoError(t, err, body)
	}
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
		"4900": "4900", "4900.0": "4900", "4.9e3": "4900", "-0": "0", "-0.0e5": "0", "0": "0", "-12": "-12", "0.5": "0.5",
		"0.50": "0.5", "5e-1": "0.5", "-1.25e1": "-12.5", "1e-3": "0.001", "1E2": "100", "0.000125e1": "0.00125",
		"123456789012345678901": "123456789012345678901", "1234567890123456789012": "1.234567890123456789012e21",
		"1e20": "100000000000000000000", "1e21": "1e21", "10e21": "1e22", "1.5e300": "1.5e300", "1e-21": "0.000000000000000000001",
		"1e-22": "1e-22", "-25e-24": "-2.5e-23", "1e0000000000000000000002": "100",
	} {
		got, err := idempotency.CanonicalNumber([]byte(in))
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
		body, ok := idempotency.CanonicalJSON([]byte(in))
		require.True(t, ok, in)
		require.Equal(t, want, string(body), in)
	}
	_, err := idempotency.CanonicalNumber([]byte("1e400"))
	require.ErrorIs(t, err, idempotency.ErrNumberRange)
	_, err = idempotency.CanonicalNumber([]byte("1x"))
	require.ErrorIs(t, err, idempotency.ErrNotJSON)
}

// A 1 MB body of large numbers is fingerprinted in memory proportional to the body:
// numbers are never expanded (a body of 1e300s used to cost hundreds of megabytes of
// big-number arithmetic, and 1e400s 300 MB).
func TestFingerprintOfHugeNumbersStaysBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"order_id":"o","n":[`)
	for b.Len() < 1<<20 {
		b.WriteString(`1.5e300,123456789012345678901234567890e-40,`)
	}
	b.WriteString(`0]}`)
	body := []byte(b.String())
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := idempotency.Fingerprint("POST", "/v1/refunds", "p", body)
	runtime.ReadMemStats(&after)
	require.NoError(t, err)
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(8*len(body)), "allocated while fingerprinting a %d-byte body", len(body))
}
