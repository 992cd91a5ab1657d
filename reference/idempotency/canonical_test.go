package idempotency_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/idemproof/idemproof/reference/idempotency"
	"github.com/stretchr/testify/require"
)

func TestCanonicalJSONEquivalences(t *testing.T) {
	same := map[string]string{
		`{"a":"x"}`:                        `{"\u0061" : "x"}`,
		`{"s":"é\"\\/"}`:                   `{"s":"\u00e9\"\\\/"}`,
		`{"a":[1,{"c":1,"b":2}],"z":null}`: "{ \"z\":null ,\"a\":[ 1 , { \"b\" : 2 , \"c\" : 1 } ] }",
		`[1e2,-0,0.10]`:                    `[100,0,1e-1]`,
	}
	for a, b := range same {
		ca, ok := idempotency.CanonicalJSON([]byte(a))
		require.True(t, ok, a)
		cb, ok := idempotency.CanonicalJSON([]byte(b))
		require.True(t, ok, b)
		require.Equal(t, string(ca), string(cb), "%s vs %s", a, b)
	}
	got, _ := idempotency.CanonicalJSON([]byte(`{"c":"\u0001"}`))
	require.Equal(t, `{"c":"\u0001"}`, string(got))
}

func TestCanonicalJSONRejectsWhatIsNotJSON(t *testing.T) {
	for _, in := range []string{
		``, ` `, `{`, `{"a":1,}`, `[1,]`, `{"a" 1}`, `{a:1}`, `01`, `1.`, `-`, `.5`, `1e`, `+1`, `tru`, `nul`,
		`"open`, "\"ctl\x01\"", `"bad \x escape"`, `{"a":1}x`, `1 2`, strings.Repeat("[", 600) + strings.Repeat("]", 600),
	} {
		_, ok := idempotency.CanonicalJSON([]byte(in))
		require.False(t, ok, "%q", in)
	}
}

// FuzzCanonicalJSON: accepted exactly when the standard library calls it valid (but for
// the documented refusals), idempotent, and the canonical form decodes to the same value.
func FuzzCanonicalJSON(f *testing.F) {
	for _, seed := range []string{`{"b":1,"a":[true,null,"x"]}`, `4.9e3`, `"\ud83d\ude00"`, `{"a":{"b":{}}}`, `[]`, `-0.0`, `{"a":1,"a":2}`, `0.5`, `[1.25e-3,1e400]`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, ok := idempotency.CanonicalJSON(in)
		if ok {
			require.True(t, json.Valid(in), "accepted invalid JSON %q", in)
		}
		// Valid JSON may be refused only for the documented limits: nesting (fingerprinted
		// byte for byte), or a *BodyError (duplicate member, number beyond float64).
		_, fpErr := idempotency.Fingerprint("POST", "/", "p", in)
		limited := strings.Count(string(in), "[")+strings.Count(string(in), "{") > 500 || fpErr != nil
		if json.Valid(in) && !limited {
			require.True(t, ok, "refused valid JSON %q", in)
		}
		if !ok {
			return
		}
		require.LessOrEqual(t, len(out), 6*len(in)+32, "the canonical form stays linear in the input")
		again, ok := idempotency.CanonicalJSON(out)
		require.True(t, ok, "canonical form %q must be valid", out)
		require.Equal(t, string(out), string(again))
		var a, b any
		require.NoError(t, json.Unmarshal(in, &a))
		require.NoError(t, json.Unmarshal(out, &b))
		require.Equal(t, a, b, "%q and its canonical form %q decode apart", in, out)
	})
}
