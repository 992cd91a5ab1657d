package faultproxy_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/faultproxy"
)

func TestPassThroughDeliversAndJournals(t *testing.T) {
	f := newFixture(t, faultproxy.Config{})
	status, body, err := f.post("k1", `{"amount":4900}`)
	require.NoError(t, err)
	require.Equal(t, 201, status)
	require.Equal(t, "k1", decode(t, body)["key"])

	rec := f.only("k1")
	require.Equal(t, uint64(1), rec.Seq)
	require.Equal(t, "POST", rec.Method)
	require.Equal(t, "/v1/refunds", rec.Path)
	require.True(t, rec.HasKey)
	require.Equal(t, 1, rec.Attempt)
	require.Equal(t, sha(`{"amount":4900}`), rec.BodySHA256)
	require.Empty(t, rec.Rule)
	require.True(t, rec.ReachedUpstream)
	require.Equal(t, 1, rec.UpstreamCalls)
	require.Equal(t, 201, rec.UpstreamStatus)
	require.Equal(t, faultproxy.ClientDelivered, rec.ClientResult)
	require.Equal(t, faultproxy.OutcomeOK, rec.Outcome)
	require.Nil(t, rec.UpstreamBody, "pass-through does not buffer")
}

func TestOutcomeOf4xxIsFail(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnprocessableEntity)
	}))
	defer up.Close()
	f := newFixture(t, faultproxy.Config{Upstream: up.URL})
	status, _, err := f.post("k1", `{}`)
	require.NoError(t, err)
	require.Equal(t, 422, status)
	require.Equal(t, faultproxy.OutcomeFail, f.only("k1").Outcome)
}

func TestUnreachableUpstreamIs502AndInfo(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	url := dead.URL
	dead.Close()
	f := newFixture(t, faultproxy.Config{Upstream: url})
	status, body, err := f.post("k1", `{}`)
	require.NoError(t, err)
	require.Equal(t, 502, status)
	require.Contains(t, string(body), "upstream failed")
	rec := f.only("k1")
	require.False(t, rec.ReachedUpstream)
	require.Equal(t, faultproxy.ClientError, rec.ClientResult)
	require.Equal(t, faultproxy.OutcomeInfo, rec.Outcome)
}

func TestHopByHopHeadersAreNotForwarded(t *testing.T) {
	var got http.Header
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		w.Header().Set("Connection", "X-Upstream-Hop")
		w.Header().Set("X-Upstream-Hop", "1")
		w.Header().Set("X-End", "2")
	}))
	defer up.Close()
	f := newFixture(t, faultproxy.Config{Upstream: up.URL})
	req, _ := http.NewRequest(http.MethodGet, f.srv.URL()+"/p?q=1", nil)
	req.Header.Set("Connection", "X-Hop")
	req.Header.Set("X-Hop", "secret")
	req.Header.Set("Keep-Alive", "timeout=5")
	req.Header.Set("X-Keep", "yes")
	resp, err := f.client.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Empty(t, got.Get("X-Hop"))
	require.Empty(t, got.Get("Keep-Alive"))
	require.Equal(t, "yes", got.Get("X-Keep"))
	require.Empty(t, resp.Header.Get("X-Upstream-Hop"))
	require.Equal(t, "2", resp.Header.Get("X-End"))
}

func TestAttemptOrdinalRuleHitsOnlyFirstAttempt(t *testing.T) {
	f := newFixture(t, faultproxy.Config{})
	f.addRule(faultproxy.Rule{Name: "first", Match: faultproxy.Match{Attempts: &faultproxy.Range{From: 1, To: 1}},
		Fault: faultproxy.FaultSpec{Type: faultproxy.FaultAfterStatus, Status: 503}})

	for _, key := range []string{"a", "b"} {
		s1, _, err := f.post(key, `{}`)
		require.NoError(t, err)
		s2, _, err := f.post(key, `{}`)
		require.NoError(t, err)
		s3, _, err := f.post(key, `{}`)
		require.NoError(t, err)
		require.Equal(t, []int{503, 201, 201}, []int{s1, s2, s3}, "key %s", key)
		recs := f.journal(key)
		require.Len(t, recs, 3)
		for i, rec := range recs {
			require.Equal(t, i+1, rec.Attempt)
		}
		require.Equal(t, "first", recs[0].Rule)
		require.Empty(t, recs[1].Rule)
	}
	// Unkeyed requests never match an attempts rule.
	status, _, err := f.post("", `{}`)
	require.NoError(t, err)
	require.Equal(t, 201, status)
}

func TestAttemptRangeAndCount(t *testing.T) {
	f := newFixture(t, faultproxy.Config{})
	f.addRule(faultproxy.Rule{Name: "one-two", Match: faultproxy.Match{Key: "k*", Attempts: &faultproxy.Range{From: 1, To: 2}},
		Fault: faultproxy.FaultSpec{Type: faultproxy.FaultBeforeStatus}, Count: 3})
	var got []int
	for _, key := range []string{"k1", "k1", "k1", "k2", "k2", "x"} {
		s, _, err := f.post(key, `{}`)
		require.NoError(t, err)
		got = append(got, s)
	}
	// k1: attempts 1,2 faulted, 3 passes; k2: attempt 1 faulted (count 3 used up), 2 passes.
	require.Equal(t, []int{503, 503, 201, 503, 201, 201}, got)
	require.Equal(t, 3, f.proxy.Rules()[0].Fired)
}

func TestFirstMatchingRuleWins(t *testing.T) {
	f := newFixture(t, faultproxy.Config{})
	f.addRule(faultproxy.Rule{Name: "get", Match: faultproxy.Match{Method: "get"}, Fault: faultproxy.FaultSpec{Type: faultproxy.FaultBeforeStatus, Status: 418}})
	f.addRule(faultproxy.Rule{Name: "refunds", Match: faultproxy.Match{Path: "/v1/*", Headers: map[string]string{"x-tenant": ""}},
		Fault: faultproxy.FaultSpec{Type: faultproxy.FaultBeforeStatus, Status: 429}})
	f.addRule(faultproxy.Rule{Name: "all", Fault: faultproxy.FaultSpec{Type: faultproxy.FaultBeforeStatus, Status: 500}})

	do := func(method, path string, tenant bool) int {
		req, _ := http.NewRequest(method, f.srv.URL()+path, nil)
		if tenant {
			req.Header.Set("X-Tenant", "t")
		}
		resp, err := f.client.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	require.Equal(t, 418, do("GET", "/v1/refunds", true))
	require.Equal(t, 429, do("POST", "/v1/refunds", true))
	require.Equal(t, 500, do("POST", "/v1/refunds", false))
	require.Equal(t, 500, do("POST", "/v2/refunds", true))

	require.NoError(t, f.proxy.DeleteRule(context.Background(), "all"))
	require.Equal(t, 201, do("POST", "/v2/refunds", true))
	require.ErrorIs(t, f.proxy.DeleteRule(context.Background(), "all"), faultproxy.ErrRuleNotFound)
}

func TestSameSeedSameFaultSequence(t *testing.T) {
	run := func(seed int64) string {
		f := newFixture(t, faultproxy.Config{Seed: seed})
		f.addRule(faultproxy.Rule{Name: "coin", Probability: 0.5, Fault: faultproxy.FaultSpec{Type: faultproxy.FaultBeforeStatus}})
		var b strings.Builder
		for i := 0; i < 40; i++ {
			s, _, err := f.post(fmt.Sprint("k", i), `{}`)
			require.NoError(t, err)
			if s == 503 {
				b.WriteByte('F')
			} else {
				b.WriteByte('.')
			}
		}
		return b.String()
	}
	a, b, c := run(7), run(7), run(8)
	require.Equal(t, a, b, "same seed, same sequence")
	require.NotEqual(t, a, c, "another seed, another sequence")
	require.Contains(t, a, "F")
	require.Contains(t, a, ".")
}

func TestResetClearsRulesJournalAndAttempts(t *testing.T) {
	f := newFixture(t, faultproxy.Config{})
	f.addRule(faultproxy.Rule{Name: "r", Match: faultproxy.Match{Attempts: &faultproxy.Range{From: 2}}, Fault: faultproxy.FaultSpec{Type: faultproxy.FaultBeforeStatus}})
	f.post("k", `{}`)
	require.NoError(t, f.proxy.Reset(context.Background()))
	require.Empty(t, f.proxy.Rules())
	require.Empty(t, f.journal(""))
	f.post("k", `{}`)
	require.Equal(t, 1, f.only("k").Attempt, "attempts count from 1 again after Reset")
}

func TestJournalIsBoundedAndCountsDrops(t *testing.T) {
	f := newFixture(t, faultproxy.Config{JournalCapacity: 3})
	for i := 0; i < 5; i++ {
		_, _, err := f.post(fmt.Sprint("k", i), `{}`)
		require.NoError(t, err)
	}
	recs := f.journal("")
	require.Len(t, recs, 3)
	require.Equal(t, []uint64{3, 4, 5}, []uint64{recs[0].Seq, recs[1].Seq, recs[2].Seq})
	st := f.proxy.JournalStats()
	require.Equal(t, uint64(5), st.Total)
	require.Equal(t, uint64(2), st.Dropped)
	since, err := f.proxy.Journal(context.Background(), faultproxy.JournalQuery{Since: 4})
	require.NoError(t, err)
	require.Len(t, since, 1)
}

func TestKeyFieldInBody(t *testing.T) {
	f := newFixture(t, faultproxy.Config{KeyField: "params.arguments.idempotency_key"})
	f.addRule(faultproxy.Rule{Name: "k", Match: faultproxy.Match{Key: "tool-*"}, Fault: faultproxy.FaultSpec{Type: faultproxy.FaultAfterStatus}})
	body := `{"jsonrpc":"2.0","method":"tools/call","params":{"arguments":{"idempotency_key":"tool-1","amount":5}}}`
	status, _, err := f.post("", body)
	require.NoError(t, err)
	require.Equal(t, 503, status)
	rec := f.only("tool-1")
	require.True(t, rec.HasKey)
	require.Equal(t, 1, rec.UpstreamCalls)
	require.Equal(t, sha(body), rec.BodySHA256)
	require.Equal(t, float64(len(body)), decode(t, rec.UpstreamBody)["body_bytes"], "the buffered body is forwarded whole")
}

func TestResponseOverBufferLimitIsNotFaulted(t *testing.T) {
	big := strings.Repeat("x", 4096)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, big) }))
	defer up.Close()
	f := newFixture(t, faultproxy.Config{Upstream: up.URL, BufferLimit: 1024})
	f.addRule(faultproxy.Rule{Name: "lost", Fault: faultproxy.FaultSpec{Type: faultproxy.FaultAfterStatus}})
	status, body, err := f.post("k", `{}`)
	require.NoError(t, err)
	require.Equal(t, 200, status)
	require.Equal(t, big, string(body))
	rec := f.only("k")
	require.Contains(t, rec.Note, "over buffer limit")
	require.Equal(t, faultproxy.OutcomeOK, rec.Outcome)
}

// The proxy's upstream transport must not replay a keyed request by itself: here the
// upstream reads a keyed, bodyless POST on a reused connection, commits, and hangs up
// without answering — exactly the case Go's Transport would retry.
func TestKeyedRequestIsNotReplayedByTheTransport(t *testing.T) {
	var commits atomic.Int32
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Idempotency-Key") == "" {
			return // warm-up: leaves an idle keep-alive connection in the proxy's pool
		}
		commits.Add(1)
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
	}))
	defer up.Close()
	f := newFixture(t, faultproxy.Config{Upstream: up.URL})
	req, _ := http.NewRequest(http.MethodGet, f.srv.URL()+"/warm", nil)
	resp, err := f.client.Do(req)
	require.NoError(t, err)
	resp.Body.Close()

	req, _ = http.NewRequest(http.MethodPost, f.srv.URL()+"/v1/refunds", nil)
	req.Header.Set("Idempotency-Key", "k")
	resp, err = f.client.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 502, resp.StatusCode)
	require.Equal(t, int32(1), commits.Load(), "the upstream saw the keyed request exactly once")
	rec := f.only("k")
	require.Equal(t, 1, rec.UpstreamCalls)
	require.True(t, rec.ReachedUpstream, "the request was written before the upstream hung up")
}

func TestManyConcurrentClients(t *testing.T) {
	f := newFixture(t, faultproxy.Config{})
	f.addRule(faultproxy.Rule{Name: "first", Match: faultproxy.Match{Attempts: &faultproxy.Range{From: 1, To: 1}}, Fault: faultproxy.FaultSpec{Type: faultproxy.FaultAfterStatus}})
	f.addRule(faultproxy.Rule{Name: "second", Match: faultproxy.Match{Attempts: &faultproxy.Range{From: 2, To: 2}}, Fault: faultproxy.FaultSpec{Type: faultproxy.FaultAfterReset}})
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	const clients, perClient = 32, 3
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			key := fmt.Sprint("c", c)
			var got []string
			for a := 0; a < perClient; a++ {
				req, _ := http.NewRequest(http.MethodPost, f.srv.URL()+"/v1/refunds", strings.NewReader(`{}`))
				req.Header.Set("Idempotency-Key", key)
				// Without GetBody the client's own Transport cannot silently replay the
				// keyed request after the reset (the pitfall this proxy guards against).
				req.GetBody = nil
				resp, err := client.Do(req)
				if err != nil {
					got = append(got, "err")
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				got = append(got, fmt.Sprint(resp.StatusCode))
			}
			if strings.Join(got, ",") != "503,err,201" {
				errs <- fmt.Errorf("client %d saw %v", c, got)
			}
		}(c)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Equal(t, clients*perClient, f.up.total(), "every attempt committed once upstream")
	recs := f.journal("")
	require.Len(t, recs, clients*perClient)
	for c := 0; c < clients; c++ {
		require.Equal(t, perClient, f.up.commits(fmt.Sprint("c", c)))
	}
}

func TestConnectIsRefused(t *testing.T) {
	f := newFixture(t, faultproxy.Config{})
	conn, err := net.Dial("tcp", strings.TrimPrefix(f.srv.URL(), "http://"))
	require.NoError(t, err)
	defer conn.Close()
	_, err = io.WriteString(conn, "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n")
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	require.Equal(t, 0, f.up.total())
}

func TestKeyStarMatchesAnyKeyEvenWithSlash(t *testing.T) {
	f := newFixture(t, faultproxy.Config{})
	f.addRule(faultproxy.Rule{Name: "any", Match: faultproxy.Match{Key: "*"}, Fault: faultproxy.FaultSpec{Type: faultproxy.FaultBeforeStatus}})
	f.addRule(faultproxy.Rule{Name: "glob", Match: faultproxy.Match{NoKey: true, Path: "/v1/ref*"}, Fault: faultproxy.FaultSpec{Type: faultproxy.FaultBeforeStatus, Status: 429}})
	s, _, err := f.post("tenant/a/1", `{}`)
	require.NoError(t, err)
	require.Equal(t, 503, s)
	s, _, err = f.post("", `{}`)
	require.NoError(t, err)
	require.Equal(t, 429, s)
}

func TestHTTPSUpstreamNeedsInsecureForSelfSigned(t *testing.T) {
	up := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusCreated)
	}))
	defer up.Close()

	strict := newFixture(t, faultproxy.Config{Upstream: up.URL})
	status, body, err := strict.post("k", `{}`)
	require.NoError(t, err)
	require.Equal(t, http.StatusBadGateway, status)
	require.Contains(t, string(body), "certificate")

	insecure := newFixture(t, faultproxy.Config{Upstream: up.URL, InsecureSkipVerify: true})
	status, _, err = insecure.post("k", `{}`)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, status)
}

// A test CA given as TLSClientConfig.RootCAs verifies the upstream: no InsecureSkipVerify.
func TestHTTPSUpstreamVerifiedWithTLSClientConfig(t *testing.T) {
	up := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusCreated)
	}))
	defer up.Close()
	roots := x509.NewCertPool()
	roots.AddCert(up.Certificate())
	tc := &tls.Config{RootCAs: roots}

	f := newFixture(t, faultproxy.Config{Upstream: up.URL, TLSClientConfig: tc})
	status, body, err := f.post("k", `{}`)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, status, "%s", body)
	require.Empty(t, tc.NextProtos, "the caller's config is cloned, never changed")
}

func TestUpstreamBasePathIsAPrefix(t *testing.T) {
	var got string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = r.URL.RequestURI() }))
	defer up.Close()
	f := newFixture(t, faultproxy.Config{Upstream: up.URL + "/api/"})
	req, _ := http.NewRequest(http.MethodGet, f.srv.URL()+"/v1/refunds?order_id=o%201", nil)
	resp, err := f.client.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, "/api/v1/refunds?order_id=o%201", got)
	require.Equal(t, "/v1/refunds?order_id=o%201", f.only("").Path)
}

func TestUpstreamsRoundRobin(t *testing.T) {
	a, b := newUpstream(t, "a"), newUpstream(t, "b")
	f := newFixture(t, faultproxy.Config{Upstreams: []string{a.URL, b.URL}})
	for i := 0; i < 6; i++ {
		status, _, err := f.post(fmt.Sprint("k", i), `{}`)
		require.NoError(t, err)
		require.Equal(t, 201, status)
	}
	require.Equal(t, 3, a.total())
	require.Equal(t, 3, b.total())
	require.Equal(t, 0, f.up.total(), "the fixture's own upstream is not configured")
}

// An upstream that answers before reading the body: the Transport may still be sending
// the body while the proxy finishes the attempt (a race this test runs under -race).
func TestUpstreamAnswersBeforeReadingBody(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusRequestEntityTooLarge)
	}))
	defer up.Close()
	f := newFixture(t, faultproxy.Config{Upstream: up.URL})
	for i := 0; i < 5; i++ {
		key := fmt.Sprint("big-", i)
		req, _ := http.NewRequest(http.MethodPost, f.srv.URL()+"/upload", io.LimitReader(zeros{}, 4<<20))
		req.Header.Set("Idempotency-Key", key)
		resp, err := f.client.Do(req)
		if err == nil {
			resp.Body.Close()
			require.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
		}
		rec := f.only(key)
		require.True(t, rec.ReachedUpstream)
		require.Equal(t, 1, rec.UpstreamCalls)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
