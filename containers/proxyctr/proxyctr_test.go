package proxyctr_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/network"

	"github.com/idemproof/idemproof/containers"
	"github.com/idemproof/idemproof/containers/proxyctr"
	"github.com/idemproof/idemproof/containers/referencectr"
	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/faultproxy/client"
	"github.com/idemproof/idemproof/internal/dockertest"
)

// The proxy in front of another container (here the reference server standing in for
// the user's service): a fault after the upstream committed, then the replay, both in
// the journal behind the admin token.
func TestRunInFrontOfAnotherContainer(t *testing.T) {
	dockertest.Require(t, dockertest.AppImage())
	ctx := context.Background()
	nw, err := network.New(ctx, network.WithLabels(containers.RunLabels()))
	testcontainers.CleanupNetwork(t, nw)
	require.NoError(t, err)

	api, err := referencectr.Run(ctx, dockertest.AppImage(), network.WithNetwork([]string{"api"}, nw))
	testcontainers.CleanupContainer(t, api)
	require.NoError(t, err)

	px, err := proxyctr.Run(ctx, dockertest.AppImage(), "http://api:8080",
		network.WithNetwork([]string{"faultproxy"}, nw), proxyctr.WithAdminToken("s3cret"), proxyctr.WithSeed(1))
	testcontainers.CleanupContainer(t, px)
	require.NoError(t, err)
	require.Equal(t, "s3cret", px.AdminToken())
	info, err := px.Inspect(ctx)
	require.NoError(t, err)
	require.Contains(t, strings.Join(info.Config.Cmd, " "), "--admin-allow-host faultproxy",
		"the admin API answers to the container's network alias")
	proxyURL, err := px.URL(ctx)
	require.NoError(t, err)
	adminURL, err := px.AdminURL(ctx)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(proxyURL, "http://127.0.0.1:"), proxyURL)
	require.True(t, strings.HasPrefix(adminURL, "http://127.0.0.1:"), adminURL)

	ctl := client.New(adminURL, px.AdminToken())
	require.NoError(t, ctl.AddRule(ctx, faultproxy.Rule{
		Name:  "lose-first-response",
		Match: faultproxy.Match{Key: "k-1", Attempts: &faultproxy.Range{From: 1, To: 1}},
		Fault: faultproxy.FaultSpec{Type: faultproxy.FaultAfterStatus, Status: http.StatusServiceUnavailable},
	}))

	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	post := func() int {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, proxyURL+"/v1/refunds",
			strings.NewReader(`{"order_id": "o-1", "amount": 4900}`))
		require.NoError(t, err)
		req.Header.Set("Idempotency-Key", "k-1")
		req.Header.Set("Content-Type", "application/json")
		resp, err := hc.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	require.Equal(t, http.StatusServiceUnavailable, post(), "the committed response replaced by a 503")
	require.Equal(t, http.StatusCreated, post(), "the retry gets the committed result")

	journal, err := ctl.Journal(ctx, faultproxy.JournalQuery{Key: "k-1"})
	require.NoError(t, err)
	require.Len(t, journal, 2)
	require.Equal(t, faultproxy.FaultAfterStatus, journal[0].Fault)
	require.Equal(t, http.StatusCreated, journal[0].UpstreamStatus, "the upstream committed under the fault")
	require.Empty(t, journal[1].Fault)

	_, err = client.New(adminURL, "wrong").Journal(ctx, faultproxy.JournalQuery{})
	require.Error(t, err, "the admin API refuses a wrong token")
}

func TestRunRejectsAnEmptyUpstream(t *testing.T) {
	_, err := proxyctr.Run(context.Background(), "unused", "")
	require.ErrorContains(t, err, "upstream is empty")
}
