package scenarios_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/scenarios"
	"github.com/idemproof/idemproof/verdict"
)

// signedRefunds keeps keys per (key, scopeBy): with scopeBy the whole Authorization
// value, a client that signs every attempt anew (AWS SigV4: a new date and signature on
// each retry) never meets its key again.
func signedRefunds(t *testing.T, scopeBy func(*http.Request) string) (*httptest.Server, *[]string) {
	var mu sync.Mutex
	stored, effects := map[string][]byte{}, map[string]int{}
	var auths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if r.Method == http.MethodGet {
			fmt.Fprintf(w, `{"count":%d}`, effects[r.URL.Query().Get("order_id")])
			return
		}
		auths = append(auths, r.Header.Get("Authorization"))
		body, _ := io.ReadAll(r.Body)
		key := r.Header.Get("Idempotency-Key") + "|" + scopeBy(r)
		if out, ok := stored[key]; ok {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusCreated)
			w.Write(out)
			return
		}
		order := gjson.GetBytes(body, "order_id").String()
		effects[order]++
		out := []byte(fmt.Sprintf(`{"id":"re_%d","order_id":%q}`, len(stored), order))
		stored[key] = out
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		w.Write(out)
	}))
	t.Cleanup(srv.Close)
	return srv, &auths
}

const signedProfile = `name: signed
base_url: %s
operation:
  path: /v1/refunds
  body: '{"order_id": "{{.Entity}}", "amount": 4900}'
side_effects: {path: '/v1/refunds?order_id={{.Entity}}', count: count}
principals:
  - {Authorization: "AWS4-HMAC-SHA256 Credential=AKIDALICE/20261204/us-east-1/refunds/aws4_request, Signature={{.Nonce}}"}
expect: {in_flight: 409, mismatch: 422, missing_key: "400"}
`

// {{.Nonce}} in a header value is fresh on every request, the retries' too: a server
// that scopes its keys by a header a client sends anew on each attempt is caught, and a
// correct one is not.
func TestANonceInAHeaderChangesOnEveryAttempt(t *testing.T) {
	t.Parallel()
	run := func(scopeBy func(*http.Request) string) (verdict.Result, []string) {
		srv, auths := signedRefunds(t, scopeBy)
		p, err := profile.Parse("signed.yaml", []byte(fmt.Sprintf(signedProfile, srv.URL)))
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		rep, err := scenarios.Run(ctx, scenarios.RunConfig{Profiles: []*profile.Profile{p}, Only: []string{"replay/sequential"}, Seed: 1, NoPreflight: true})
		require.NoError(t, err)
		require.Len(t, rep.Results, 1)
		return rep.Results[0], *auths
	}
	r, auths := run(func(*http.Request) string { return "alice" })
	require.Equal(t, verdict.Pass, r.Verdict, r.Message)
	require.Len(t, auths, 2)
	require.NotEqual(t, auths[0], auths[1], "each attempt signed anew")
	require.True(t, strings.HasPrefix(auths[0], "AWS4-HMAC-SHA256 Credential=AKIDALICE/"))

	r, _ = run(func(r *http.Request) string { return r.Header.Get("Authorization") })
	require.Equal(t, verdict.Fail, r.Verdict, "keys scoped by the whole signature: %s", r.Message)

	_, err := profile.Parse("signed.yaml", []byte(strings.Replace(fmt.Sprintf(signedProfile, "http://127.0.0.1:1"), "{{.Nonce}}", "{{.Nonse}}", 1)))
	require.ErrorContains(t, err, "principals[0].Authorization: template:")
	require.ErrorContains(t, err, "available in header values: {{.Entity}}, {{.Nonce}}")
}
