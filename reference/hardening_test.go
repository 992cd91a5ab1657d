package reference_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/idemproof/idemproof/reference"
	"github.com/idemproof/idemproof/reference/idempotency"
	"github.com/idemproof/idemproof/reference/memstore"
	"github.com/idemproof/idemproof/reference/servertest"
	"github.com/stretchr/testify/require"
)

// The collision of the hardening review, end to end: {"amount":1,"AMOUNT":2} executes
// amount 2, and {"AMOUNT":2,"amount":1} under the same key was then replayed although it
// would refund 1. Both are refused with 400 before the key is recorded, so the corrected
// body executes under the same key.
func TestCaseVariantMembersAreRefusedBeforeTheKey(t *testing.T) {
	e := servertest.Start(t, memstore.New())
	order, key := servertest.Fresh("order"), servertest.Fresh("key")
	for _, b := range []string{
		`{"order_id":"` + order + `","amount":1,"AMOUNT":2}`,
		`{"order_id":"` + order + `","AMOUNT":2,"amount":1}`,
		`{"order_id":"` + order + `","ORDER_ID":"other","amount":1}`,
		`{"order_id":"` + order + `","amount":1e400}`,
	} {
		r := e.Post(t, refunds, key, b)
		require.Equal(t, http.StatusBadRequest, r.Status, b)
		require.Equal(t, "application/problem+json", r.Header.Get("Content-Type"))
		require.False(t, r.Replayed())
	}
	require.Equal(t, 0, e.Count(t, "refunds", order))
	ok := e.Post(t, refunds, key, body(order, 1))
	require.Equal(t, http.StatusCreated, ok.Status, "no key was recorded by the refused bodies: %s", ok.Body)
	require.Equal(t, 1, e.Count(t, "refunds", order))
}

func TestAnonymousIsNotABearerToken(t *testing.T) {
	e := servertest.Start(t, memstore.New())
	order, key := servertest.Fresh("order"), servertest.Fresh("key")
	r := e.Post(t, refunds, key, body(order, 4900), "Authorization", "Bearer anonymous")
	require.Equal(t, http.StatusUnauthorized, r.Status)
	require.Contains(t, string(r.Body), "reserved")
	_, err := reference.New(reference.WithTokens("a", reference.Anonymous))
	require.ErrorContains(t, err, "reserved")
}

// FuzzFingerprintAgreesWithDecoder is the differential test the fingerprint is held to:
// two bodies with the same fingerprint must decode to the same Go value with
// encoding/json, and to the same refund with the create handler's own decoding, so no
// other payload can ever be answered with a stored response. Each input is compared with
// a respelling of itself (members shuffled, names and strings escaped, numbers written
// another way: what a fingerprint should not tell apart, unless the names collide) and
// with the second input.
func FuzzFingerprintAgreesWithDecoder(f *testing.F) {
	for _, seed := range [][2]string{
		{`{"order_id":"c","amount":1,"AMOUNT":2}`, `{"order_id":"c","AMOUNT":2,"amount":1}`},
		{`{"order_id":"c","ORDER_ID":"d","amount":1}`, `{"ORDER_ID":"d","order_id":"c","amount":1}`},
		{`{"order_id":"o","amount":4900,"reason":"r"}`, `{"reason":"r","amount":4.9e3,"order_id":"o"}`},
		{`{"a":{"k":1,"\u212a":2}}`, `{"a":{"\u212a":2,"k":1}}`},
		{`{"order_id":"\xff","amount":1}`, `{"order_id":"\xfe","amount":1}`},
		{`{"a\xff":1,"a\xfe":2}`, `{"a\xfe":2,"a\xff":1}`},
		{`[1e308, 0.1, -0, 1e-400]`, `[1E308,0.10,0,0]`},
		{`{"order_id":"o","amount":1e21}`, `{"order_id":"o","amount":1000000000000000000000}`},
	} {
		f.Add([]byte(seed[0]), []byte(seed[1]), uint64(1))
	}
	f.Fuzz(func(t *testing.T, a, b []byte, seed uint64) {
		sameMeaning(t, a, respell(a, rand.New(rand.NewPCG(seed, 7))))
		sameMeaning(t, a, b)
	})
}

// sameMeaning fails when a and b share a fingerprint but decode apart.
func sameMeaning(t *testing.T, a, b []byte) {
	t.Helper()
	fa, errA := idempotency.Fingerprint("POST", refunds, "p", a)
	fb, errB := idempotency.Fingerprint("POST", refunds, "p", b)
	if errA != nil || errB != nil || fa != fb {
		return
	}
	var va, vb any
	ea, eb := json.Unmarshal(a, &va), json.Unmarshal(b, &vb)
	require.Equal(t, ea == nil, eb == nil, "same fingerprint, one decodes and one not: %q %q", a, b)
	require.Equal(t, va, vb, "same fingerprint, other values: %q %q", a, b)
	oa, amountA, reasonA, problemA := reference.DecodeCreateForTest(bytes.NewReader(a))
	ob, amountB, reasonB, problemB := reference.DecodeCreateForTest(bytes.NewReader(b))
	require.Equal(t, problemA == "", problemB == "", "same fingerprint, one refund valid: %q %q", a, b)
	require.Equal(t, []any{oa, amountA, reasonA}, []any{ob, amountB, reasonB}, "same fingerprint, other refunds: %q %q", a, b)
}

// respell rewrites a JSON body as another spelling of its tokens: members reordered,
// characters of names and strings \u-escaped, numbers with a zero fraction or an
// exponent. Bodies it cannot read come back unchanged.
func respell(in []byte, rng *rand.Rand) []byte {
	dec := json.NewDecoder(bytes.NewReader(in))
	dec.UseNumber()
	var out bytes.Buffer
	if respellValue(dec, rng, &out, 0) != nil {
		return in
	}
	return out.Bytes()
}

func respellValue(dec *json.Decoder, rng *rand.Rand, out *bytes.Buffer, depth int) error {
	if depth > 64 {
		return errTooDeep
	}
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch v := tok.(type) {
	case json.Delim:
		if v == '[' {
			out.WriteByte('[')
			for i := 0; dec.More(); i++ {
				if i > 0 {
					out.WriteByte(',')
				}
				if err := respellValue(dec, rng, out, depth+1); err != nil {
					return err
				}
			}
			_, err := dec.Token()
			out.WriteByte(']')
			return err
		}
		var members []string
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return err
			}
			var m bytes.Buffer
			respellString(k.(string), rng, &m)
			m.WriteByte(':')
			if err := respellValue(dec, rng, &m, depth+1); err != nil {
				return err
			}
			members = append(members, m.String())
		}
		rng.Shuffle(len(members), func(i, j int) { members[i], members[j] = members[j], members[i] })
		out.WriteString("{" + strings.Join(members, " , ") + "}")
		_, err := dec.Token()
		return err
	case string:
		respellString(v, rng, out)
	case json.Number:
		s := v.String()
		switch rng.IntN(3) {
		case 0:
			if !strings.ContainsAny(s, ".eE") {
				s += ".0"
			}
		case 1:
			s += "e0"
		}
		out.WriteString(s)
	default:
		b, _ := json.Marshal(v)
		out.Write(b)
	}
	return nil
}

func respellString(s string, rng *rand.Rand, out *bytes.Buffer) {
	out.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\' || r < 0x20 || (r < 0x80 && rng.IntN(4) == 0):
			out.WriteString(`\u00`)
			out.WriteString(hex2(byte(r)))
		default:
			out.WriteRune(r)
		}
	}
	out.WriteByte('"')
}

func hex2(b byte) string { const h = "0123456789abcdef"; return string([]byte{h[b>>4], h[b&15]}) }

var errTooDeep = errTooDeepT{}

type errTooDeepT struct{}

func (errTooDeepT) Error() string { return "too deep" }

// A client that stalls mid-body is answered 408 once the body timeout passes, and the
// key it sent stays free.
func TestStalledBodyIsTimedOut(t *testing.T) {
	e := servertest.Start(t, memstore.New(), reference.WithBodyTimeout(300*time.Millisecond))
	order, key := servertest.Fresh("order"), servertest.Fresh("key")
	conn, err := net.Dial("tcp", strings.TrimPrefix(e.URL, "http://"))
	require.NoError(t, err)
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(30 * time.Second)) // bounds a broken test only
	fmt.Fprintf(conn, "POST /v1/refunds HTTP/1.1\r\nHost: x\r\nIdempotency-Key: %s\r\nContent-Length: 100\r\n\r\n{\"order_id\":", key)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusRequestTimeout, resp.StatusCode)
	ok := e.Post(t, refunds, key, body(order, 4900))
	require.Equal(t, http.StatusCreated, ok.Status, "%s", ok.Body)
}
