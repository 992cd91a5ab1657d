package stdio_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/idemproof/idemproof/faultproxy"
	"github.com/idemproof/idemproof/faultproxy/stdio"
)

func newLayer(t *testing.T, rules ...faultproxy.Rule) *stdio.Layer {
	t.Helper()
	l, err := stdio.New(stdio.Config{
		Command:  stdio.Command{Args: []string{os.Args[0]}, Env: testServer("counter")},
		KeyField: "params._meta.key",
		Rules:    rules,
		Classify: func(line []byte) string {
			if gjson.GetBytes(line, "result").Exists() {
				return "success"
			}
			return "server_error"
		},
		StopGrace: 500 * time.Millisecond,
	})
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	return l
}

func connect(t *testing.T, l *stdio.Layer) (*stdio.Conn, *bufio.Reader) {
	t.Helper()
	c, err := l.Connect()
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c, bufio.NewReader(c)
}

func journal(t *testing.T, l *stdio.Layer) []faultproxy.Record {
	t.Helper()
	require.NoError(t, l.Engine().WaitIdle(context.Background()))
	recs, err := l.Engine().Journal(context.Background(), faultproxy.JournalQuery{})
	require.NoError(t, err)
	return recs
}

func rule(name, fault string, mod func(*faultproxy.Rule)) faultproxy.Rule {
	r := faultproxy.Rule{Name: name, Match: faultproxy.Match{Key: "K*", Attempts: &faultproxy.Range{From: 1, To: 1}}, Fault: faultproxy.FaultSpec{Type: fault}}
	if mod != nil {
		mod(&r)
	}
	return r
}

func TestPassThroughJournalsEveryMessage(t *testing.T) {
	t.Parallel()
	l := newLayer(t)
	c, r := connect(t, l)
	require.NoError(t, c.Send(request(1, "initialize", ""), nil))
	require.Equal(t, `{"id":1,"jsonrpc":"2.0","result":{"method":"initialize","n":1}}`, lines(t, r, 1)[0])
	_, err := c.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"))
	require.NoError(t, err)
	require.NoError(t, c.Send(request(2, "tools/call", `{"_meta":{"key":"K1"}}`), map[string]string{"x-step": "original"}))
	require.Contains(t, lines(t, r, 1)[0], `"n":2`)

	recs := journal(t, l)
	require.Len(t, recs, 3)
	require.Equal(t, "1", byMethod(recs, "initialize").RPCID)
	require.NotNil(t, byMethod(recs, "notifications/initialized"))
	call := byMethod(recs, "tools/call")
	require.Equal(t, "stdio", call.Method)
	require.Equal(t, "tools/call", call.RPCMethod)
	require.Equal(t, "K1", call.Key)
	require.Equal(t, 1, call.Attempt)
	require.Equal(t, map[string]string{"X-Step": "original"}, call.Headers, "the attributes, never sent to the server")
	require.Equal(t, faultproxy.ClientDelivered, call.ClientResult)
	require.Equal(t, 200, call.UpstreamStatus)
	require.Equal(t, "success", call.Class)
	require.Equal(t, faultproxy.OutcomeOK, call.Outcome)
}

func TestAfterDropLosesTheCommittedAnswerOnly(t *testing.T) {
	t.Parallel()
	l := newLayer(t, rule("drop", faultproxy.FaultAfterDrop, nil))
	c, r := connect(t, l)
	require.NoError(t, c.Send(request(1, "tools/call", `{"_meta":{"key":"K1"}}`), nil))
	require.NoError(t, c.Send(request(2, "tools/call", `{"_meta":{"key":"K1"}}`), nil))
	got := lines(t, r, 1)[0]
	require.Equal(t, int64(2), gjson.Get(got, "id").Int(), "the first answer never came; the retry's did")
	require.Equal(t, int64(2), gjson.Get(got, "result.n").Int(), "the server executed the first")

	recs := journal(t, l)
	require.Len(t, recs, 2)
	first := byAttempt(recs, 1)
	require.Equal(t, "drop", first.Rule)
	require.Equal(t, faultproxy.ClientDropped, first.ClientResult)
	require.Equal(t, faultproxy.OutcomeInfo, first.Outcome)
	require.Equal(t, "info", first.Class)
	require.True(t, first.ReachedUpstream)
	require.Equal(t, 200, first.UpstreamStatus, "the server answered")
	require.Contains(t, string(first.UpstreamBody), `"n":1`, "what it committed is kept")
	require.Equal(t, faultproxy.ClientDelivered, byAttempt(recs, 2).ClientResult)
}

func TestFaultsOnThePipe(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		rule      faultproxy.Rule
		client    string // what the client reads for the faulted request, "" for nothing
		result    string
		serverSaw int64 // requests the server saw when the second one is answered
	}{
		{"before-drop", rule("r", faultproxy.FaultBeforeDrop, nil), "", faultproxy.ClientDropped, 1},
		{"before-reset is a drop", rule("r", faultproxy.FaultBeforeReset, nil), "", faultproxy.ClientDropped, 1},
		{"after-close is a drop", rule("r", faultproxy.FaultAfterClose, nil), "", faultproxy.ClientDropped, 2},
		{"after-truncate", rule("r", faultproxy.FaultAfterTruncate, func(r *faultproxy.Rule) { r.Fault.Bytes = 8 }), `{"id":1,`, faultproxy.ClientTruncated, 2},
		{"before-status answers for the server", rule("r", faultproxy.FaultBeforeStatus, func(r *faultproxy.Rule) {
			r.Fault.Body = `{"jsonrpc":"2.0","id":null,"error":{"code":-32010,"message":"in flight"}}`
		}), `{"jsonrpc":"2.0","id":1,"error":{"code":-32010,"message":"in flight"}}`, faultproxy.ClientDelivered, 1},
		{"after-status replaces the answer", rule("r", faultproxy.FaultAfterStatus, func(r *faultproxy.Rule) {
			r.Fault.Body = `{"jsonrpc":"2.0","id":0,"error":{"code":-32603,"message":"lost"}}`
		}), `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"lost"}}`, faultproxy.ClientDelivered, 2},
		{"duplicate", rule("r", faultproxy.FaultDuplicate, nil), `"n":1`, faultproxy.ClientDelivered, 3},
		{"after-hold then drop", rule("r", faultproxy.FaultAfterHold, func(r *faultproxy.Rule) { r.Fault.Duration, r.Fault.Then = 50*time.Millisecond, "drop" }), "", faultproxy.ClientDropped, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			l := newLayer(t, tc.rule)
			c, r := connect(t, l)
			require.NoError(t, c.Send(request(1, "tools/call", `{"_meta":{"key":"K1"}}`), nil))
			if tc.client != "" {
				require.Contains(t, lines(t, r, 1)[0], tc.client)
			}
			recs := journal(t, l)
			require.Len(t, recs, 1)
			require.Equal(t, tc.result, recs[0].ClientResult)
			// The retry shows what the server saw of the first.
			require.NoError(t, c.Send(request(2, "tools/call", `{"_meta":{"key":"K1"}}`), nil))
			require.Equal(t, tc.serverSaw, gjson.Get(lines(t, r, 1)[0], "result.n").Int())
		})
	}
}

func TestAfterKillEndsTheServerAndItsGroup(t *testing.T) {
	t.Parallel()
	l, err := stdio.New(stdio.Config{
		// A shell whose child outlives it unless its group is killed.
		Command:   stdio.Command{Args: []string{"sh", "-c", `sleep 300 & exec "$0"`, os.Args[0]}, Env: testServer("counter")},
		KeyField:  "params._meta.key",
		Rules:     []faultproxy.Rule{rule("kill", faultproxy.FaultAfterKill, nil)},
		StopGrace: 500 * time.Millisecond,
	})
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	c, r := connect(t, l)
	pid := c.Process().Pid()
	require.NoError(t, c.Send(request(1, "tools/call", `{"_meta":{"key":"K1"}}`), nil))
	_, err = r.ReadString('\n')
	require.ErrorIs(t, err, io.EOF, "the client sees its server's output end, no answer")
	<-c.Done()
	require.Contains(t, c.Exit(), "killed")
	require.Empty(t, liveInGroup(t, pid), "nothing of its process group is left")
	recs := journal(t, l)
	require.Equal(t, faultproxy.ClientKilled, recs[0].ClientResult)
	require.Equal(t, 200, recs[0].UpstreamStatus, "it answered before it was killed")
	require.ErrorIs(t, c.Send(request(2, "tools/call", `{}`), nil), stdio.ErrServerGone)

	// The next connection starts it again.
	c2, r2 := connect(t, l)
	require.NoError(t, c2.Send(request(1, "tools/call", `{"_meta":{"key":"K1"}}`), nil))
	require.Equal(t, int64(1), gjson.Get(lines(t, r2, 1)[0], "result.n").Int(), "a new process")
}

func TestCloseStopsEveryServer(t *testing.T) {
	t.Parallel()
	l, err := stdio.New(stdio.Config{
		Command:   stdio.Command{Args: []string{"sh", "-c", `trap "" TERM; sleep 300 & while read line; do :; done; sleep 300`}},
		StopGrace: 100 * time.Millisecond,
	})
	require.NoError(t, err)
	c, err := l.Connect()
	require.NoError(t, err)
	pid := c.Process().Pid()
	require.NoError(t, l.Close())
	require.Empty(t, liveInGroup(t, pid), "a server that ignores its closed stdin and SIGTERM is killed, with its children")
	<-c.Done()
	_, err = l.Connect()
	require.Error(t, err, "a closed layer starts nothing")
}

func TestServeGivesEachConnectionItsServer(t *testing.T) {
	t.Parallel()
	l := newLayer(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go l.Serve(ln)
	t.Cleanup(func() { ln.Close() })
	for range 2 {
		nc, err := net.Dial("tcp", ln.Addr().String())
		require.NoError(t, err)
		_, err = nc.Write(append(request(7, "tools/call", `{"_meta":{"key":"K9"}}`), '\n'))
		require.NoError(t, err)
		r := bufio.NewReader(nc)
		require.Equal(t, int64(1), gjson.Get(lines(t, r, 1)[0], "result.n").Int(), "a server of its own")
		require.NoError(t, nc.(*net.TCPConn).CloseWrite())
		_, err = r.ReadString('\n')
		require.ErrorIs(t, err, io.EOF, "the client ended: its server was stopped and the connection closed")
		nc.Close()
	}
	recs := journal(t, l)
	require.Len(t, recs, 2)
	require.Equal(t, []int{1, 2}, []int{recs[0].Attempt, recs[1].Attempt}, "one journal, one attempt counter for every connection")
}

func TestCheckFaultSaysWhatAPipeCannotExpress(t *testing.T) {
	t.Parallel()
	err := stdio.CheckFault(faultproxy.FaultSpec{Type: faultproxy.FaultAfterStatus, Status: 503})
	require.ErrorContains(t, err, "no status")
	var fe *faultproxy.FieldError
	require.ErrorAs(t, err, &fe)
	require.Equal(t, "fault.status", fe.Field)
	require.ErrorContains(t, stdio.CheckFault(faultproxy.FaultSpec{Type: faultproxy.FaultBeforeStatus}), "JSON-RPC response")
	require.ErrorContains(t, stdio.CheckFault(faultproxy.FaultSpec{Type: faultproxy.FaultBeforeStatus, Body: `{"jsonrpc":"2.0","error":{}}`, RetryAfter: 1}), "no headers")
	require.NoError(t, stdio.CheckFault(faultproxy.FaultSpec{Type: faultproxy.FaultAfterKill}))
	require.ErrorContains(t, stdio.CheckFault(faultproxy.FaultSpec{Type: "after-boom"}), "after-kill")
	_, err = stdio.New(stdio.Config{Command: stdio.Command{Args: []string{"true"}}, Rules: []faultproxy.Rule{{Name: "x", Fault: faultproxy.FaultSpec{Type: faultproxy.FaultAfterStatus}}}})
	require.ErrorContains(t, err, "rule \"x\"")
	require.True(t, strings.Contains(strings.Join(stdio.FaultTypes(), ","), "after-drop"))
}

// An in-process server: each connection runs it anew over its own pipes, its state is
// shared, and a kill ends the connection, not the state.
func TestInProcessServerSurvivesAKill(t *testing.T) {
	t.Parallel()
	var seen atomic.Int64
	serve := func(ctx context.Context, in io.Reader, out io.Writer) error {
		sc := bufio.NewScanner(in)
		for sc.Scan() {
			n := seen.Add(1)
			id := gjson.GetBytes(sc.Bytes(), "id").Raw
			if _, err := fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"n":%d}}`+"\n", id, n); err != nil {
				return err
			}
		}
		return ctx.Err()
	}
	l, err := stdio.New(stdio.Config{Serve: serve, KeyField: "params._meta.key", Rules: []faultproxy.Rule{rule("kill", faultproxy.FaultAfterKill, nil)}})
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	c, r := connect(t, l)
	require.Nil(t, c.Process())
	require.NoError(t, c.Send(request(1, "tools/call", `{"_meta":{"key":"K1"}}`), nil))
	_, err = r.ReadString('\n')
	require.ErrorIs(t, err, io.EOF)
	require.Contains(t, c.Exit(), "killed")
	c2, r2 := connect(t, l)
	require.NoError(t, c2.Send(request(1, "tools/call", `{"_meta":{"key":"K1"}}`), nil))
	require.Equal(t, int64(2), gjson.Get(lines(t, r2, 1)[0], "result.n").Int(), "the state outlived the kill")
}
