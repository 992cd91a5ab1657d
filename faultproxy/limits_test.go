package faultproxy_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/faultproxy"
)

// strictUpstream tells complete request bodies from incomplete ones.
type strictUpstream struct {
	*httptest.Server
	mu                sync.Mutex
	complete, partial int
	headersSeen       int
}

func newStrictUpstream(t *testing.T) *strictUpstream {
	u := &strictUpstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.headersSeen++
		u.mu.Unlock()
		_, err := io.ReadAll(r.Body)
		u.mu.Lock()
		if err != nil {
			u.partial++
		} else {
			u.complete++
		}
		u.mu.Unlock()
		w.WriteHeader(http.StatusCreated)
	}))
	t.Cleanup(u.Close)
	return u
}

func (u *strictUpstream) counts() (headers, complete, partial int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.headersSeen, u.complete, u.partial
}

// rawRequest writes raw bytes to the proxy and returns the status line's code (0 when the
// connection ended without a response).
func rawRequest(t *testing.T, addr, raw string) int {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(30 * time.Second)) // a bound on a broken test, not a timing
	_, err = io.WriteString(conn, raw)
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

func startStrict(t *testing.T, cfg faultproxy.Config) (*faultproxy.Server, *strictUpstream) {
	up := newStrictUpstream(t)
	cfg.Upstream = up.URL
	srv, err := faultproxy.Start(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { srv.Close() })
	return srv, up
}

func lastRecord(t *testing.T, p *faultproxy.Proxy) faultproxy.Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, p.WaitIdle(ctx))
	recs, err := p.Journal(ctx, faultproxy.JournalQuery{})
	require.NoError(t, err)
	require.NotEmpty(t, recs)
	return recs[len(recs)-1]
}

// A client that stalls mid-body gets 408 once the body timeout passes (it was never
// timed out before), the journal says so, and the upstream never sees the body as
// complete: a streamed body's upstream call is aborted.
func TestStalledBodyIsTimedOut(t *testing.T) {
	srv, up := startStrict(t, faultproxy.Config{BodyTimeout: 300 * time.Millisecond})
	addr := strings.TrimPrefix(srv.URL(), "http://")
	// 10,000 bytes announced, 10 sent: larger than what is read before forwarding, so
	// the body streams and the upstream gets its headers.
	status := rawRequest(t, addr, "POST /v1/refunds HTTP/1.1\r\nHost: x\r\nIdempotency-Key: k1\r\nContent-Length: 10000\r\n\r\n0123456789")
	rec := lastRecord(t, srv.Proxy())
	require.Equal(t, http.StatusRequestTimeout, status, "%+v", rec)
	require.Equal(t, http.StatusRequestTimeout, rec.ClientStatus)
	require.Contains(t, rec.Note, "client request body failed")
	require.Contains(t, rec.Note, "aborted")
	_, complete, _ := up.counts()
	require.Zero(t, complete, "the upstream never saw a complete request")

	// A chunked body that stalls is timed out before any upstream call.
	status = rawRequest(t, addr, "POST /v1/refunds HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab")
	require.Equal(t, http.StatusRequestTimeout, status)
	rec = lastRecord(t, srv.Proxy())
	require.False(t, rec.ReachedUpstream)
	require.Contains(t, rec.Note, "before the upstream call")
	headers, _, _ := up.counts()
	require.Equal(t, 1, headers, "only the first request reached the upstream")
}

// A malformed chunked body is a 400 and no upstream call (it used to become a 502 after
// the upstream handler ran with a partial body).
func TestMalformedChunkedBodyNeverReachesTheUpstream(t *testing.T) {
	srv, up := startStrict(t, faultproxy.Config{})
	addr := strings.TrimPrefix(srv.URL(), "http://")
	status := rawRequest(t, addr, "POST /v1/refunds HTTP/1.1\r\nHost: x\r\nIdempotency-Key: k2\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nabcde\r\nzz\r\n")
	require.Equal(t, http.StatusBadRequest, status)
	rec := lastRecord(t, srv.Proxy())
	require.False(t, rec.ReachedUpstream)
	require.Equal(t, 0, rec.UpstreamCalls)
	headers, _, _ := up.counts()
	require.Zero(t, headers)

	// Past the 64 KiB read before the upstream call the body streams: a break there
	// aborts the upstream call, so the upstream never takes the body as complete.
	big := strings.Repeat("b", 70<<10)
	status = rawRequest(t, addr, fmt.Sprintf("POST /v1/refunds HTTP/1.1\r\nHost: x\r\nIdempotency-Key: k3\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\nzz\r\n", len(big), big))
	require.Equal(t, http.StatusBadRequest, status)
	rec = lastRecord(t, srv.Proxy())
	require.True(t, rec.ReachedUpstream)
	require.Contains(t, rec.Note, "aborted")
	_, complete, _ := up.counts()
	require.Zero(t, complete, "the upstream never saw the broken body as complete")

	// A well-formed chunked body goes through whole.
	status = rawRequest(t, addr, "POST /v1/refunds HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nabcde\r\n0\r\n\r\n")
	require.Equal(t, http.StatusCreated, status)
	_, complete, _ = up.counts()
	require.Equal(t, 1, complete)
}

// A flood of requests with a 1 MB header keeps the proxy's heap near its journal byte
// budget: records are clipped and the oldest evicted (1,000 such requests used to take
// 1.6 GB).
func TestHeaderFloodStaysWithinTheByteBudget(t *testing.T) {
	const budget = 4 << 20
	srv, _ := startStrict(t, faultproxy.Config{JournalBytes: budget})
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := heap()
	huge := strings.Repeat("h", 1_000_000)
	client := &http.Client{Timeout: 30 * time.Second}
	const requests = 120
	for i := range requests {
		req, err := http.NewRequest(http.MethodGet, srv.URL()+"/flood", nil)
		require.NoError(t, err)
		req.Header.Set("X-Huge", huge)
		req.Header.Set("Idempotency-Key", fmt.Sprint("flood-", i))
		resp, err := client.Do(req)
		require.NoError(t, err)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	client.CloseIdleConnections()
	p := srv.Proxy()
	lastRecord(t, p)
	after := heap()
	const margin = 16 << 20 // the runtime, pools and connections, not the journal
	grown := int64(after) - int64(before)
	require.Less(t, grown, int64(budget+margin), "heap grew by %d bytes", grown)
	st := p.JournalStats()
	require.LessOrEqual(t, st.Bytes, int64(budget))
	require.EqualValues(t, requests, st.Total)
	recs, _ := p.Journal(context.Background(), faultproxy.JournalQuery{Limit: 1})
	require.Len(t, recs, 1)
	require.Greater(t, recs[0].HeadersClipped, 900_000, "the clipped length is recorded")
	require.LessOrEqual(t, len(recs[0].Headers["X-Huge"]), faultproxy.DefaultJournalHeaderLimit)
}

// The journal evicts the oldest records past its byte budget and counts them dropped.
func TestJournalByteBudgetEvictsOldest(t *testing.T) {
	srv, _ := startStrict(t, faultproxy.Config{JournalBytes: 64 << 10})
	client := &http.Client{Timeout: 30 * time.Second}
	for i := range 40 {
		req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("%s/p%d", srv.URL(), i), nil)
		req.Header.Set("X-Filler", strings.Repeat("f", 8000))
		resp, err := client.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
	}
	p := srv.Proxy()
	lastRecord(t, p)
	st := p.JournalStats()
	require.EqualValues(t, 40, st.Total)
	require.Greater(t, st.Dropped, uint64(20))
	recs, _ := p.Journal(context.Background(), faultproxy.JournalQuery{})
	require.EqualValues(t, 40-st.Dropped, len(recs))
	require.Equal(t, "/p39", recs[len(recs)-1].Path, "the newest stay")
	require.EqualValues(t, st.Dropped+1, recs[0].Seq, "the oldest went first")
}

// GET /journal pages: limit (default 1000) records per answer, more says whether others
// follow, and the Go client follows the pages.
func TestJournalPages(t *testing.T) {
	p, err := faultproxy.New(faultproxy.Config{Upstream: "http://127.0.0.1:1", Rules: []faultproxy.Rule{
		{Name: "stop", Fault: faultproxy.FaultSpec{Type: faultproxy.FaultBeforeStatus}},
	}})
	require.NoError(t, err)
	for range 1205 {
		rec := httptest.NewRecorder()
		p.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/x", nil))
	}
	h := p.AdminHandler("")
	code, m, raw := adminCall(t, h, "GET", "/journal", "", nil)
	require.Equal(t, 200, code, raw[:min(200, len(raw))])
	require.Len(t, m["records"], faultproxy.DefaultJournalPage)
	require.Equal(t, true, m["more"])
	require.EqualValues(t, 1205, m["total"])
	code, m, _ = adminCall(t, h, "GET", "/journal?since=1000&limit=500", "", nil)
	require.Equal(t, 200, code)
	require.Len(t, m["records"], 205)
	require.Equal(t, false, m["more"])
	for _, bad := range []string{"0", "-1", "x", "100001"} {
		code, m, _ = adminCall(t, h, "GET", "/journal?limit="+bad, "", nil)
		require.Equal(t, 400, code)
		require.Equal(t, "limit", m["field"])
	}
}

// The journal redacts credentials by default — the common API-key and session-token
// headers of cloud APIs (AWS, Google, GitLab) among them — and what --redact names.
func TestJournalRedactsCredentials(t *testing.T) {
	srv, _ := startStrict(t, faultproxy.Config{Redact: []string{"x-session"}})
	req, _ := http.NewRequest(http.MethodGet, srv.URL()+"/r", nil)
	secret := map[string]string{}
	sent := append([]string{"X-Amz-Security-Token", "X-Goog-Api-Key", "Private-Token", "X-Session"}, faultproxy.DefaultRedactedHeaders...)
	for _, h := range sent {
		if h == "Proxy-Authorization" {
			continue // hop-by-hop: removed before the journal sees it
		}
		secret[h] = "s3cret-" + h
		req.Header.Set(h, secret[h])
	}
	req.Header.Set("X-Plain", "visible")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	rec := lastRecord(t, srv.Proxy())
	for h := range secret {
		require.Equal(t, "[redacted]", rec.Headers[h], h)
	}
	require.Equal(t, "visible", rec.Headers["X-Plain"])
}

// Every numeric bound is checked, with a clear error instead of a crash.
func TestConfigBoundsAreChecked(t *testing.T) {
	for _, cfg := range []faultproxy.Config{
		{JournalCapacity: 9223372036854775807 >> 1}, {JournalCapacity: -1}, {JournalCapacity: 10_000_001},
		{JournalBytes: 1000}, {BufferLimit: -5}, {BufferLimit: 2 << 30}, {AttemptKeyBytes: 10},
		{JournalHeaderLimit: -1}, {Redact: []string{"bad name"}},
	} {
		cfg.Upstream = "http://127.0.0.1:1"
		_, err := faultproxy.New(cfg)
		require.Error(t, err, "%+v", cfg)
		require.Contains(t, err.Error(), "must")
	}
	_, err := faultproxy.New(faultproxy.Config{Upstream: "http://127.0.0.1:1", JournalCapacity: faultproxy.MaxJournalCapacity})
	require.NoError(t, err, "the largest capacity allocates nothing up front")
}

// Attempt counters are bounded by bytes: the least recently used keys are forgotten and
// counted, recently used ones keep counting.
func TestAttemptCountersAreBounded(t *testing.T) {
	p, err := faultproxy.New(faultproxy.Config{Upstream: "http://127.0.0.1:1", AttemptKeyBytes: 64 << 10, Rules: []faultproxy.Rule{
		{Name: "stop", Fault: faultproxy.FaultSpec{Type: faultproxy.FaultBeforeStatus}},
	}})
	require.NoError(t, err)
	send := func(key string) {
		req := httptest.NewRequest(http.MethodPost, "/x", nil)
		req.Header.Set("Idempotency-Key", key)
		p.ServeHTTP(httptest.NewRecorder(), req)
	}
	send("hot")
	for i := range 20000 {
		send(fmt.Sprint("cold-", i, strings.Repeat("k", 40)))
		if i%100 == 0 {
			send("hot")
		}
	}
	send("hot")
	st := p.JournalStats()
	require.Greater(t, st.ForgottenKeys, uint64(10000))
	recs, _ := p.Journal(context.Background(), faultproxy.JournalQuery{Key: "hot"})
	require.Equal(t, 202, recs[len(recs)-1].Attempt, "a key in use is never forgotten")
}

// --key-field is found by a scan that stops at the key: names with gjson syntax are
// plain names, numeric segments index arrays, numbers keep their spelling.
func TestKeyFieldScan(t *testing.T) {
	for field, c := range map[string]struct {
		body, key string
		ok        bool
	}{
		"params.arguments.idempotency_key": {`{"params":{"arguments":{"idempotency_key":"k-1"}}}`, "k-1", true},
		"a.1.k":                            {`{"a":[{"k":"no"},{"k":"yes"}]}`, "yes", true},
		"a.1":                              {`{"a":{"1":12.50}}`, "12.50", true},
		"we*rd.k?":                         {`{"we*rd":{"k?":"w"},"weXrd":{"kk":"wrong"}}`, "w", true},
		"k":                                {`{"k":{"nested":1}}`, "", false},
		"missing":                          {`{"k":"v"}`, "", false},
	} {
		p, err := faultproxy.New(faultproxy.Config{Upstream: "http://127.0.0.1:1", KeyField: field, Rules: []faultproxy.Rule{
			{Name: "stop", Fault: faultproxy.FaultSpec{Type: faultproxy.FaultBeforeStatus}},
		}})
		require.NoError(t, err)
		p.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/x", strings.NewReader(c.body)))
		recs, _ := p.Journal(context.Background(), faultproxy.JournalQuery{})
		require.Len(t, recs, 1)
		require.Equal(t, c.ok, recs[0].HasKey, field)
		require.Equal(t, c.key, recs[0].Key, field)
	}
}

// The admin listener has the body timeout too.
func TestAdminBodyIsTimedOut(t *testing.T) {
	srv, _ := startStrict(t, faultproxy.Config{BodyTimeout: 300 * time.Millisecond})
	status := rawRequest(t, strings.TrimPrefix(srv.AdminURL(), "http://"), "POST /rules HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{\"name\":")
	require.Equal(t, http.StatusRequestTimeout, status)
	require.Empty(t, srv.Proxy().Rules())
}

// --key-field scans the buffered body up to the key instead of decoding it: a 10 MB
// body costs its growing buffer (about 32 MB of allocations, more under -race), not the
// 370–400 MB a decode into any took.
func TestKeyFieldScanMemory(t *testing.T) {
	p, err := faultproxy.New(faultproxy.Config{Upstream: "http://127.0.0.1:1", KeyField: "params.arguments.idempotency_key",
		BufferLimit: 16 << 20, Rules: []faultproxy.Rule{{Name: "stop", Fault: faultproxy.FaultSpec{Type: faultproxy.FaultBeforeStatus}}}})
	require.NoError(t, err)
	var b strings.Builder
	b.WriteString(`{"jsonrpc":"2.0","params":{"arguments":{"idempotency_key":"big-1"},"data":[`)
	for b.Len() < 10<<20 {
		b.WriteString(`1,"x",{"a":[true,null]},`)
	}
	b.WriteString(`0]}}`)
	body := b.String()
	req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	p.ServeHTTP(httptest.NewRecorder(), req)
	runtime.ReadMemStats(&after)
	recs, _ := p.Journal(context.Background(), faultproxy.JournalQuery{})
	require.Equal(t, "big-1", recs[0].Key)
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(8*len(body)), "allocated for a %d-byte body", len(body))
}

// A client that hangs up in the middle of its body is recorded as gone (timed-out, an
// info outcome), and gets no made-up answer; the upstream never sees a complete body.
func TestClientGoneMidBody(t *testing.T) {
	srv, up := startStrict(t, faultproxy.Config{})
	conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL(), "http://"))
	require.NoError(t, err)
	io.WriteString(conn, "POST /v1/refunds HTTP/1.1\r\nHost: x\r\nIdempotency-Key: gone\r\nContent-Length: 10000\r\n\r\n0123456789")
	conn.(*net.TCPConn).CloseWrite()
	conn.SetReadDeadline(time.Now().Add(30 * time.Second)) // bounds a broken test only
	_, err = http.ReadResponse(bufio.NewReader(conn), nil)
	require.Error(t, err, "no answer is made up for a client that went away")
	conn.Close()
	rec := lastRecord(t, srv.Proxy())
	require.Equal(t, faultproxy.ClientTimedOut, rec.ClientResult)
	require.Equal(t, faultproxy.OutcomeInfo, rec.Outcome)
	require.Contains(t, rec.Note, "went away in the middle of the request body")
	_, complete, _ := up.counts()
	require.Zero(t, complete)
}
