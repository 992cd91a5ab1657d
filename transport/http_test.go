package transport_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/transport"
)

func TestCountWithGJSONPaths(t *testing.T) {
	body := []byte(`{"count": 2, "data": [{"id": 1}, {"id": 2}, {"id": 3}], "result": {"structuredContent": {"count": 4}}, "half": 1.5, "name": "x"}`)
	for path, want := range map[string]int{"count": 2, "data.#": 3, "data": 3, "result.structuredContent.count": 4, `data.#(id>1)#`: 2} {
		n, err := transport.Count(body, path)
		require.NoError(t, err, path)
		require.Equal(t, want, n, path)
	}
	for path, msg := range map[string]string{"missing": "nothing at that path", "half": "is not a count", "name": "is not a count"} {
		_, err := transport.Count(body, path)
		require.ErrorContains(t, err, msg, path)
	}
	_, err := transport.Count([]byte("<html>"), "count")
	require.ErrorContains(t, err, "not JSON")
}

func TestHTTPSendClassifiesCompleteAnswersOnly(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/busy":
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusConflict)
		case "/cut":
			w.Header().Set("Content-Length", "100")
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write([]byte("partial"))
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.(*net.TCPConn).Close()
		case "/ledger":
			_, _ = w.Write([]byte(`{"data":[1,2]}`))
		default:
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write([]byte(`{"id":"rf_1"}`))
		}
	}))
	defer ts.Close()
	h := &transport.HTTP{Classifier: outcome.Statuses{InFlight: 409}}
	snd := h.Open()
	defer snd.Close()
	send := func(path string) transport.Answer {
		a, err := snd.Send(t.Context(), &transport.Request{Method: "POST", URL: ts.URL + path, Header: http.Header{}}, 5*time.Second)
		require.NoError(t, err)
		return a
	}
	ok := send("/ok")
	require.Equal(t, outcome.Success, ok.Class)
	require.Equal(t, `{"id":"rf_1"}`, string(ok.Body))
	busy := send("/busy")
	require.Equal(t, outcome.InFlight, busy.Class)
	require.Equal(t, "1", busy.Header.Get("Retry-After"))
	cut := send("/cut")
	require.Equal(t, outcome.Info, cut.Class)
	require.Equal(t, 201, cut.Status)
	require.Contains(t, cut.Err, "truncated")

	n, err := h.Count(t.Context(), transport.Ledger{URL: ts.URL + "/ledger", Count: "data.#"})
	require.NoError(t, err)
	require.Equal(t, 2, n)
	_, err = h.Count(t.Context(), transport.Ledger{URL: ts.URL + "/busy", Count: "data.#"})
	require.ErrorContains(t, err, "answered 409")
}
