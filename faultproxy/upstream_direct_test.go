package faultproxy_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/faultproxy"
)

// rawUpstream answers each request on a connection with answer(n), n counting requests
// from 1, then hangs up when answer says so.
func rawUpstream(t *testing.T, answer func(n int32) (string, bool)) (string, *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	var n atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					io.Copy(io.Discard, req.Body)
					out, hangUp := answer(n.Add(1))
					if _, err := io.WriteString(c, out); err != nil || hangUp {
						return
					}
				}
			}()
		}
	}()
	return "http://" + ln.Addr().String(), &n
}

// An upstream that closes a keep-alive connection after answering, without saying so:
// the pooled connection is found dead before reuse, the next attempt goes out on a new
// one and reaches the upstream exactly once.
func TestIdleConnectionTheUpstreamClosedIsNotReused(t *testing.T) {
	url, n := rawUpstream(t, func(int32) (string, bool) {
		return "HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok", true
	})
	f := newFixture(t, faultproxy.Config{Upstream: url})
	for i, key := range []string{"a", "b", "c"} {
		if i > 0 {
			time.Sleep(50 * time.Millisecond) // the FIN arrives while the connection is idle
		}
		status, body, err := f.post(key, `{"x":1}`)
		require.NoError(t, err)
		require.Equal(t, http.StatusCreated, status)
		require.Equal(t, "ok", string(body))
		rec := f.only(key)
		require.Equal(t, 1, rec.UpstreamCalls)
		require.Equal(t, faultproxy.OutcomeOK, rec.Outcome)
	}
	require.Equal(t, int32(3), n.Load())
}

// Bytes the upstream sent on an idle connection that nobody asked for must not be taken
// as the next request's response.
func TestUnsolicitedBytesOnIdleConnectionAreNotAResponse(t *testing.T) {
	url, n := rawUpstream(t, func(int32) (string, bool) {
		return "HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok" +
			"HTTP/1.1 418 I'm a teapot\r\nContent-Length: 0\r\n\r\n", false
	})
	f := newFixture(t, faultproxy.Config{Upstream: url})
	for i, key := range []string{"a", "b"} {
		if i > 0 {
			time.Sleep(20 * time.Millisecond)
		}
		status, _, err := f.post(key, `{"x":1}`)
		require.NoError(t, err)
		require.Equal(t, http.StatusCreated, status)
	}
	require.Equal(t, int32(2), n.Load())
}

// Interim 1xx answers are skipped; the client gets the final response.
func TestInterimResponsesAreSkipped(t *testing.T) {
	url, _ := rawUpstream(t, func(int32) (string, bool) {
		return "HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n" +
			"HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok", false
	})
	f := newFixture(t, faultproxy.Config{Upstream: url})
	status, body, err := f.post("k", `{"x":1}`)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, status)
	require.Equal(t, "ok", string(body))
	require.Equal(t, 201, f.only("k").UpstreamStatus)
}

// A client that gives up while the upstream is still working ends the upstream call; the
// attempt is journaled as timed out, and the proxy goes on serving.
func TestClientGivingUpEndsTheUpstreamCall(t *testing.T) {
	var ended atomic.Int32
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.URL.Path == "/hang" {
			select {
			case <-r.Context().Done():
				ended.Add(1)
			case <-time.After(5 * time.Second):
			}
			return
		}
		w.WriteHeader(http.StatusCreated)
	}))
	defer up.Close()
	f := newFixture(t, faultproxy.Config{Upstream: up.URL})
	f.client.Timeout = 200 * time.Millisecond
	req, _ := http.NewRequest(http.MethodPost, f.srv.URL()+"/hang", strings.NewReader(`{}`))
	req.Header.Set("Idempotency-Key", "hang")
	start := time.Now()
	_, err := f.client.Do(req)
	require.Error(t, err)
	rec := f.only("hang")
	require.Less(t, time.Since(start), 3*time.Second)
	require.Equal(t, faultproxy.ClientTimedOut, rec.ClientResult)
	require.True(t, rec.ReachedUpstream)
	require.Equal(t, 1, rec.UpstreamCalls)
	require.Eventually(t, func() bool { return ended.Load() == 1 }, 3*time.Second, 10*time.Millisecond,
		"the upstream saw its connection end")

	f.client.Timeout = 5 * time.Second
	status, _, err := f.post("next", `{}`)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, status)
}

// A client that retries the moment its connection is closed finds the attempt it retries
// already journaled: records of a key come in the order the client saw them end.
func TestDamagedAttemptIsJournaledBeforeTheClientSeesTheDamage(t *testing.T) {
	for _, fault := range []string{faultproxy.FaultAfterClose, faultproxy.FaultAfterReset} {
		f := newFixture(t, faultproxy.Config{})
		f.addRule(faultproxy.Rule{Name: "first", Match: faultproxy.Match{Key: "*", Attempts: &faultproxy.Range{From: 1, To: 1}},
			Fault: faultproxy.FaultSpec{Type: fault}})
		for i := 0; i < 30; i++ {
			key := fmt.Sprint(fault, "-", i)
			_, _, err := f.post(key, `{"x":1}`)
			require.Error(t, err)
			status, _, err := f.post(key, `{"x":1}`)
			require.NoError(t, err)
			require.Equal(t, http.StatusCreated, status)
			recs := f.journal(key)
			require.Len(t, recs, 2)
			require.Equal(t, 1, recs[0].Attempt, "%s: the damaged first attempt comes first: %+v", key, recs)
			require.Equal(t, fault, recs[0].Fault)
		}
	}
}
