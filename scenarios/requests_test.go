package scenarios_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/scenarios"
)

// sent runs one scenario against a fresh fake and returns the requests the fake received
// (the scenario's only: no preflight).
func sent(t *testing.T, id string) []seenRequest {
	t.Helper()
	return sentWith(t, id, func(*profile.Profile) {})
}

// sentWith is sent with the profile changed by change first.
func sentWith(t *testing.T, id string, change func(*profile.Profile)) []seenRequest {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f := &fakeRefunds{}
	p := fakeProfile(t, startFake(t, f))
	change(p)
	rep, err := scenarios.Run(ctx, scenarios.RunConfig{Profiles: []*profile.Profile{p}, Only: []string{id}, Seed: 42, NoPreflight: true})
	require.NoError(t, err)
	require.Len(t, rep.Results, 1)
	return f.requests()
}

// The variants change exactly what their scenario says, nothing else.
func TestVariantsSendWhatTheyName(t *testing.T) {
	t.Parallel()
	bodies := func(rs []seenRequest) []string {
		out := make([]string, len(rs))
		for i, r := range rs {
			out[i] = strings.ReplaceAll(r.Body, entityOf(r.Body), "E")
		}
		return out
	}
	require.Equal(t, []string{`{"order_id":"E","amount":4900}`, `{"amount":4900,"order_id":"E"}`}, bodies(sent(t, "fingerprint/json-key-order")))
	require.Equal(t, []string{`{"order_id":"E","amount":4900}`, "{\n  \"order_id\": \"E\",\n  \"amount\": 4900\n}"}, bodies(sent(t, "fingerprint/json-whitespace")))
	require.Equal(t, []string{`{"order_id":"E","amount":4900}`, `{"order_id":"E","amount":4900.0}`}, bodies(sent(t, "fingerprint/number-spelling")))

	qs := sent(t, "fingerprint/query-string")
	require.Equal(t, "/v1/refunds", qs[0].URI)
	require.Equal(t, "/v1/refunds?idemproof=1", qs[1].URI)

	hd := sent(t, "fingerprint/unrelated-header")
	require.Empty(t, hd[0].Header.Get("X-Idemproof-Unrelated"))
	require.Equal(t, "variant", hd[1].Header.Get("X-Idemproof-Unrelated"))
	require.Equal(t, hd[0].Header.Get("Idempotency-Key"), hd[1].Header.Get("Idempotency-Key"))
}

func TestKeyFormsSendWhatTheyName(t *testing.T) {
	t.Parallel()
	key := func(r seenRequest) string { return r.Header.Get("Idempotency-Key") }
	main := key(sent(t, "replay/sequential")[0])
	require.Regexp(t, `^idemproof-[0-9a-f]{8}-0-000$`, main, "fresh per run, numbered per scenario")

	require.Len(t, key(sent(t, "key/max-length")[0]), 255)
	require.Len(t, key(sent(t, "key/over-length")[0]), 256)
	require.Contains(t, key(sent(t, "key/control-chars")[0]), "\t")

	sf := sent(t, "key/sf-string")
	require.Equal(t, `"`+key(sf[1])+`"`, key(sf[0]), "the quoted form, then the bare form")

	empty := sent(t, "key/empty")
	require.Len(t, empty, 2)
	require.Contains(t, empty[0].Header, "Idempotency-Key", "present")
	require.Equal(t, "", key(empty[0]), "and empty")

	// An API with shorter keys (AWS's ClientToken: 64) gets keys of its longest length.
	short := func(p *profile.Profile) { p.Expect.MaxKeyLength = 64 }
	require.Len(t, key(sentWith(t, "key/max-length", short)[0]), 64)
	require.Len(t, key(sentWith(t, "key/over-length", short)[0]), 65)
	pair := sentWith(t, "key/long-prefix-distinct", short)
	require.Len(t, pair, 3, "the first key, the second, and the first again (the control)")
	a, b := key(pair[0]), key(pair[1])
	require.Len(t, a, 64)
	require.Len(t, b, 64)
	require.Equal(t, a[:63], b[:63], "all but the last character shared")
	require.NotEqual(t, a, b)

	missing := sent(t, "key/missing")
	require.Len(t, missing, 2, "twice: each request without a key is its own")
	for _, m := range missing {
		require.NotContains(t, m.Header, "Idempotency-Key")
	}
	require.Equal(t, missing[0].Body, missing[1].Body, "the same payload")
}

// Keys and entities never repeat across runs, even with the same seed.
func TestEveryRunMintsFreshKeys(t *testing.T) {
	t.Parallel()
	a := sent(t, "replay/sequential")
	b := sent(t, "replay/sequential")
	require.NotEqual(t, a[0].Header.Get("Idempotency-Key"), b[0].Header.Get("Idempotency-Key"))
	require.NotEqual(t, entityOf(a[0].Body), entityOf(b[0].Body))
}

func entityOf(body string) string {
	i := strings.Index(body, "ip-")
	if i < 0 {
		return "\x00"
	}
	j := strings.IndexByte(body[i:], '"')
	return body[i : i+j]
}
