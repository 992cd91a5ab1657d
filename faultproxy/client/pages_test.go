package client_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/faultproxy/client"
)

// Journal follows GET /journal's pages (1,000 records each by default) to the end, or
// stops at the query's limit.
func TestJournalFollowsPages(t *testing.T) {
	srv, err := faultproxy.Start(context.Background(), faultproxy.Config{Upstream: "http://127.0.0.1:1", Rules: []faultproxy.Rule{
		{Name: "stop", Fault: faultproxy.FaultSpec{Type: faultproxy.FaultBeforeStatus}},
	}})
	require.NoError(t, err)
	defer srv.Close()
	p := srv.Proxy()
	for range 2500 {
		p.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/x", nil))
	}
	c := client.New(srv.AdminURL(), "")
	recs, err := c.Journal(context.Background(), faultproxy.JournalQuery{})
	require.NoError(t, err)
	require.Len(t, recs, 2500)
	for i, r := range recs {
		require.EqualValues(t, i+1, r.Seq)
	}
	recs, err = c.Journal(context.Background(), faultproxy.JournalQuery{Since: 100, Limit: 1500})
	require.NoError(t, err)
	require.Len(t, recs, 1500)
	require.EqualValues(t, 101, recs[0].Seq)
	page, err := c.JournalPage(context.Background(), faultproxy.JournalQuery{Limit: 10})
	require.NoError(t, err)
	require.Len(t, page.Records, 10)
	require.True(t, page.More)
	require.EqualValues(t, 2500, page.Total)
}
