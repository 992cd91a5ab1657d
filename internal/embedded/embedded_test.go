package embedded_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/internal/dockertest"
	"github.com/idemproof/idemproof/internal/embedded"
)

// refund posts one refund for order with key and returns the response's status, replay
// marker and body.
func refund(t *testing.T, base, key, order string, hooks map[string]string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+"/v1/refunds",
		strings.NewReader(`{"order_id": "`+order+`", "amount": 4900}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", key)
	req.Header.Set("Authorization", "Bearer idemproof-a")
	for k, v := range hooks {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header.Get("Idempotent-Replayed"), string(body)
}

func start(t *testing.T, cfg embedded.Config) *embedded.Target {
	t.Helper()
	tgt, err := embedded.Start(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, tgt.Close()) })
	return tgt
}

func TestStartServesTheReferenceAsItsProfileDeclares(t *testing.T) {
	tgt := start(t, embedded.Config{})
	p := tgt.Profile
	require.Equal(t, "reference", p.Name)
	require.True(t, strings.HasPrefix(p.BaseURL, "http://127.0.0.1:"), p.BaseURL)
	require.NotEqual(t, "http://127.0.0.1:8080", p.BaseURL, "never a fixed port")

	st, marker, first := refund(t, p.BaseURL, "k-1", "order-1", nil)
	require.Equal(t, http.StatusCreated, st, first)
	require.Empty(t, marker)
	st, marker, again := refund(t, p.BaseURL, "k-1", "order-1", nil)
	require.Equal(t, http.StatusCreated, st)
	require.Equal(t, "true", marker)
	require.Equal(t, first, again, "the replay carries the committed body")

	// Test hooks are on: the fail hook answers the declared 5xx.
	st, _, _ = refund(t, p.BaseURL, "k-2", "order-2", map[string]string{"X-Test-Fail": "503"})
	require.Equal(t, http.StatusServiceUnavailable, st)
}

func TestStartWithAFlawNamesTheVariant(t *testing.T) {
	tgt := start(t, embedded.Config{Flaws: []string{"no-replay-header"}})
	require.Equal(t, "reference+no-replay-header", tgt.Profile.Name)
	refund(t, tgt.Profile.BaseURL, "k-1", "order-1", nil)
	st, marker, _ := refund(t, tgt.Profile.BaseURL, "k-1", "order-1", nil)
	require.Equal(t, http.StatusCreated, st)
	require.Empty(t, marker, "the flaw drops the replay marker")
}

func TestStartRejectsBadInput(t *testing.T) {
	_, err := embedded.Start(context.Background(), embedded.Config{Flaws: []string{"no-such-flaw"}})
	require.ErrorContains(t, err, `unknown flaw "no-such-flaw"`)
	require.ErrorContains(t, err, "check-then-set", "the error lists the valid flaws")

	_, err = embedded.Start(context.Background(), embedded.Config{Store: "mysql://x"})
	require.ErrorContains(t, err, `store "mysql://x": want "memory" or a postgres:// DSN`)
}

func TestCloseTwice(t *testing.T) {
	tgt, err := embedded.Start(context.Background(), embedded.Config{})
	require.NoError(t, err)
	require.NoError(t, tgt.Close())
	require.NoError(t, tgt.Close())
	_, err = http.Get(tgt.Profile.BaseURL + "/healthz")
	require.Error(t, err, "the listener is closed")
}

func TestStartOnPostgres(t *testing.T) {
	pg := dockertest.RunPostgres(t)
	tgt := start(t, embedded.Config{Store: pg.DSN})
	require.Equal(t, "reference@postgres", tgt.Profile.Name)
	st, _, body := refund(t, tgt.Profile.BaseURL, "k-pg", "order-pg", nil)
	require.Equal(t, http.StatusCreated, st, body)
	st, marker, _ := refund(t, tgt.Profile.BaseURL, "k-pg", "order-pg", nil)
	require.Equal(t, http.StatusCreated, st)
	require.Equal(t, "true", marker)
}
