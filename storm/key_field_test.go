package storm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/storm"
)

// bodyKeyed fronts a header-keyed API with one that reads the key from the JSON body's
// idempotency_key member (as Square's API does): it moves the member into the
// Idempotency-Key header and out of the body the API fingerprints. A request with an
// Idempotency-Key header of its own is refused, so a key that came by header would show.
func bodyKeyed(t *testing.T, upstream string, headerKeys *atomic.Int64) string {
	t.Helper()
	u, err := url.Parse(upstream)
	require.NoError(t, err)
	rp := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Idempotency-Key") != "" {
			headerKeys.Add(1)
			http.Error(w, "the key goes in the body", http.StatusBadRequest)
			return
		}
		if r.Method == http.MethodPost {
			raw, err := io.ReadAll(r.Body)
			var body map[string]any
			if err != nil || json.Unmarshal(raw, &body) != nil {
				http.Error(w, "want a JSON body", http.StatusBadRequest)
				return
			}
			if key, ok := body["idempotency_key"].(string); ok {
				r.Header.Set("Idempotency-Key", key)
				delete(body, "idempotency_key")
			}
			raw, _ = json.Marshal(body)
			r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(raw)), int64(len(raw))
			r.Header.Set("Content-Length", strconv.Itoa(len(raw)))
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// The storm puts the key in the body when the profile says key_field: the same bytes on
// every attempt of an operation, no key header, and the proxy's journal and faults find
// the key there. A correct API gives no finding; a check-then-set one duplicates.
func TestStormWithTheKeyInTheBody(t *testing.T) {
	t.Parallel()
	run := func(flaws ...string) *storm.Report {
		tgt := startReference(t, flaws...)
		var headerKeys atomic.Int64
		p := *tgt.Profile
		p.BaseURL = bodyKeyed(t, tgt.Profile.BaseURL, &headerKeys)
		p.KeyHeader, p.KeyField = "", "idempotency_key"
		p.ClientTimeout = tgt.Profile.ClientTimeout * 5 // a loaded machine is no finding here
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		rep, err := storm.Run(ctx, storm.Config{Profile: &p, Ops: 300, Seed: 7, NoShrink: true})
		require.NoError(t, err)
		require.Zero(t, headerKeys.Load(), "no attempt carries the key in a header")
		return rep
	}
	rep := run()
	require.True(t, rep.Complete, rep.Interrupted)
	for _, c := range storm.Categories {
		require.Zero(t, rep.Counts[c], "%s: %v", c, rep.Findings[c])
	}
	require.Greater(t, rep.Faulted, 50, "about 30%% of 300 operations had their first answer lost: the proxy found their keys in the body")

	rep = run("check-then-set")
	require.Positive(t, rep.Counts[storm.CatDuplicated], "%v", rep.Counts)
}
