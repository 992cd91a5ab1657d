package client_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/faultproxy/client"
)

func start(t *testing.T, token string) (*faultproxy.Server, *httptest.Server) {
	t.Helper()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, `{"ok":true}`)
	}))
	t.Cleanup(up.Close)
	srv, err := faultproxy.Start(context.Background(), faultproxy.Config{Upstream: up.URL, AdminToken: token})
	require.NoError(t, err)
	t.Cleanup(func() { srv.Close() })
	return srv, up
}

func TestClientRoundTrip(t *testing.T) {
	srv, _ := start(t, "s3cret")
	ctx := context.Background()
	c := client.New(srv.AdminURL(), "s3cret")

	require.NoError(t, c.Health(ctx))
	v, err := c.Version(ctx)
	require.NoError(t, err)
	require.Equal(t, faultproxy.Version, v)

	rule := faultproxy.Rule{Name: "lose-first", Match: faultproxy.Match{Attempts: &faultproxy.Range{From: 1, To: 1}},
		Fault: faultproxy.FaultSpec{Type: faultproxy.FaultAfterHold, Duration: 1500 * time.Millisecond, Then: faultproxy.ThenDrop}}
	require.NoError(t, c.AddRule(ctx, rule))
	rules, err := c.Rules(ctx)
	require.NoError(t, err)
	require.Len(t, rules, 1)
	require.Equal(t, rule, rules[0].Rule, "the rule survives the JSON round trip, duration included")

	err = c.AddRule(ctx, rule)
	require.ErrorIs(t, err, faultproxy.ErrRuleExists)

	err = c.AddRule(ctx, faultproxy.Rule{Name: "bad", Fault: faultproxy.FaultSpec{Type: faultproxy.FaultAfterStatus, Status: 42}})
	var ae *client.Error
	require.True(t, errors.As(err, &ae))
	require.Equal(t, http.StatusBadRequest, ae.Status)
	require.Equal(t, "fault.status", ae.Field)

	require.NoError(t, c.DeleteRule(ctx, "lose-first"))
	require.ErrorIs(t, c.DeleteRule(ctx, "lose-first"), faultproxy.ErrRuleNotFound)

	require.NoError(t, c.AddRule(ctx, faultproxy.Rule{Name: "503", Match: faultproxy.Match{Key: "k1"},
		Fault: faultproxy.FaultSpec{Type: faultproxy.FaultAfterStatus}}))
	for _, key := range []string{"k1", "k2"} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL()+"/v1/refunds", strings.NewReader(`{}`))
		req.Header.Set("Idempotency-Key", key)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
	}
	require.NoError(t, srv.Proxy().WaitIdle(ctx))
	recs, err := c.Journal(ctx, faultproxy.JournalQuery{Key: "k1"})
	require.NoError(t, err)
	require.Len(t, recs, 1)
	require.Equal(t, "503", recs[0].Rule)
	require.Equal(t, 201, recs[0].UpstreamStatus)
	require.Equal(t, 503, recs[0].ClientStatus)
	require.Equal(t, faultproxy.OutcomeInfo, recs[0].Outcome)

	page, err := c.JournalPage(ctx, faultproxy.JournalQuery{Since: recs[0].Seq})
	require.NoError(t, err)
	require.Len(t, page.Records, 1)
	require.Equal(t, "k2", page.Records[0].Key)
	require.Equal(t, uint64(2), page.Total)

	require.NoError(t, c.Reset(ctx))
	recs, err = c.Journal(ctx, faultproxy.JournalQuery{})
	require.NoError(t, err)
	require.Empty(t, recs)
	rules, err = c.Rules(ctx)
	require.NoError(t, err)
	require.Empty(t, rules)
}

func TestClientWrongToken(t *testing.T) {
	srv, _ := start(t, "s3cret")
	err := client.New(srv.AdminURL(), "nope").Health(context.Background())
	var ae *client.Error
	require.ErrorAs(t, err, &ae)
	require.Equal(t, http.StatusUnauthorized, ae.Status)
}
