package faultproxy_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/faultproxy"
)

func TestAfterTruncateCommitsOnceClientGetsPart(t *testing.T) {
	f := newFixture(t, faultproxy.Config{})
	f.addRule(faultproxy.Rule{Name: "cut", Fault: faultproxy.FaultSpec{Type: faultproxy.FaultAfterTruncate, Bytes: 5}})

	req, _ := http.NewRequest(http.MethodPost, f.srv.URL()+"/v1/refunds", strings.NewReader(`{}`))
	req.Header.Set("Idempotency-Key", "k1")
	resp, err := f.client.Do(req)
	require.NoError(t, err, "headers arrive")
	require.Equal(t, 201, resp.StatusCode)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	require.Equal(t, `{"com`, string(body))
	require.Equal(t, 1, f.up.commits("k1"))

	rec := f.only("k1")
	require.Equal(t, faultproxy.ClientTruncated, rec.ClientResult)
	require.Equal(t, 201, rec.ClientStatus)
	require.Equal(t, faultproxy.OutcomeInfo, rec.Outcome)
}

func TestAfterTruncateBeyondBodyDeliversWhole(t *testing.T) {
	f := newFixture(t, faultproxy.Config{})
	f.addRule(faultproxy.Rule{Name: "cut", Fault: faultproxy.FaultSpec{Type: faultproxy.FaultAfterTruncate, Bytes: 1 << 20}})
	status, body, err := f.post("k1", `{}`)
	require.NoError(t, err)
	require.Equal(t, 201, status)
	require.Equal(t, "k1", decode(t, body)["key"])
	rec := f.only("k1")
	require.Equal(t, faultproxy.ClientDelivered, rec.ClientResult)
	require.Contains(t, rec.Note, "delivered whole")
}
