package sse_test

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/transport/sse"
)

func readAll(t *testing.T, r io.Reader) ([]sse.Event, error) {
	t.Helper()
	rd := sse.NewReader(r)
	var out []sse.Event
	for i := 0; i < 100; i++ {
		ev, err := rd.Next()
		if err != nil {
			return out, err
		}
		out = append(out, ev)
	}
	t.Fatal("more than 100 events")
	return nil, nil
}

func TestSeveralEvents(t *testing.T) {
	stream := "event: message\nid: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n" +
		"id: 2\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\n\n"
	evs, err := readAll(t, strings.NewReader(stream))
	require.ErrorIs(t, err, io.EOF)
	require.Len(t, evs, 2)
	require.Equal(t, "message", evs[0].Type)
	require.Equal(t, "1", evs[0].ID)
	require.Equal(t, `{"jsonrpc":"2.0","method":"notifications/progress"}`, string(evs[0].Data))
	require.Equal(t, "", evs[1].Type)
	require.Equal(t, `{"jsonrpc":"2.0","id":7,"result":{}}`, string(evs[1].Data))
}

func TestSplitEventsAndLineEndings(t *testing.T) {
	// Data over several lines is joined with \n; CRLF and CR end lines too; the reader
	// gets the stream one byte at a time, as a slow network delivers it.
	stream := "data: {\"a\":\r\ndata:  1}\r\n\r\nretry: 1500\rdata:x\r\r"
	evs, err := readAll(t, iotest.OneByteReader(strings.NewReader(stream)))
	require.ErrorIs(t, err, io.EOF)
	require.Len(t, evs, 2)
	require.Equal(t, "{\"a\":\n 1}", string(evs[0].Data), "one leading space is stripped, the rest kept")
	require.Equal(t, "x", string(evs[1].Data))
	require.Equal(t, 1500, evs[1].Retry)
}

func TestCommentsAndEmptyBlocksAreSkipped(t *testing.T) {
	stream := ": keep-alive\n\n:another\nid: 5\n\nevent: ping\n\ndata: only\n: inside\n\n"
	evs, err := readAll(t, strings.NewReader(stream))
	require.ErrorIs(t, err, io.EOF)
	require.Len(t, evs, 1, "blocks without data dispatch nothing")
	require.Equal(t, "only", string(evs[0].Data))
}

func TestCutMidEvent(t *testing.T) {
	for name, stream := range map[string]string{
		"inside a data line": "data: {\"id\":1,\"result\":{}}\n\ndata: {\"id\":2,\"res",
		"before the blank":   "data: {\"id\":1,\"result\":{}}\n\ndata: {\"id\":2}\n",
		"after a field":      "data: {\"id\":1,\"result\":{}}\n\nevent: message\n",
	} {
		t.Run(name, func(t *testing.T) {
			evs, err := readAll(t, strings.NewReader(stream))
			require.ErrorIs(t, err, sse.ErrCut)
			require.Len(t, evs, 1, "the complete event before the cut is still returned")
		})
	}
}

func TestReaderErrorIsNotEOF(t *testing.T) {
	boom := errors.New("connection reset by peer")
	_, err := readAll(t, io.MultiReader(strings.NewReader("data: x\n"), iotest.ErrReader(boom)))
	require.ErrorIs(t, err, boom)
	require.NotErrorIs(t, err, sse.ErrCut)
}

func TestEventOverTheBound(t *testing.T) {
	_, err := readAll(t, strings.NewReader("data: "+strings.Repeat("x", sse.MaxEventBytes+1)+"\n\n"))
	require.ErrorContains(t, err, "over")
}

func TestLastEventIDAndRetryOutliveTheirEvents(t *testing.T) {
	// An MCP priming event (an id, empty data), then a retry hint alone, then the server
	// closes: what a client needs to resume is what the fields set, dispatched or not.
	rd := sse.NewReader(strings.NewReader("id: s1-1\ndata:\n\nretry: 250\n\n: bye\n\n"))
	ev, err := rd.Next()
	require.NoError(t, err)
	require.Empty(t, ev.Data)
	require.Equal(t, "s1-1", rd.LastEventID())
	_, err = rd.Next()
	require.ErrorIs(t, err, io.EOF)
	require.Equal(t, "s1-1", rd.LastEventID())
	require.Equal(t, 250, rd.RetryMillis())

	rd = sse.NewReader(strings.NewReader("id: 9\n\nid\ndata: x\n\n"))
	_, err = rd.Next()
	require.NoError(t, err)
	require.Equal(t, "", rd.LastEventID(), "an empty id field resets the last event id, as the standard says")
}
