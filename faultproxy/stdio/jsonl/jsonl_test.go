package jsonl_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/faultproxy/stdio/jsonl"
)

func TestReaderSplitsLinesAndBoundsThem(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 100)
	r := jsonl.NewReader(strings.NewReader("{\"a\":1}\r\n"+long+"\n{\"b\":2}\n{\"cut\""), 50)
	line, err := r.Next()
	require.NoError(t, err)
	require.Equal(t, `{"a":1}`, string(line), "the carriage return before the newline is no part of the message")
	head, err := r.Next()
	require.ErrorIs(t, err, jsonl.ErrLineTooLong)
	require.True(t, strings.HasPrefix(long, string(head)))
	line, err = r.Next()
	require.NoError(t, err, "reading goes on after a line over the bound")
	require.Equal(t, `{"b":2}`, string(line))
	line, err = r.Next()
	require.ErrorIs(t, err, io.ErrUnexpectedEOF, "a writer that died mid-line")
	require.Equal(t, `{"cut"`, string(line))
	_, err = r.Next()
	require.ErrorIs(t, err, io.EOF)
}

func TestWriterWritesWholeLines(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	w := jsonl.NewWriter(&buf)
	require.Error(t, w.WriteLine([]byte("a\nb")), "two messages in one")
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			require.NoError(t, w.WriteLine([]byte(`{"jsonrpc":"2.0","method":"m"}`)))
		}()
	}
	wg.Wait()
	r := jsonl.NewReader(&buf, 0)
	for range 50 {
		line, err := r.Next()
		require.NoError(t, err)
		require.Equal(t, `{"jsonrpc":"2.0","method":"m"}`, string(line))
	}
	_, err := r.Next()
	require.True(t, errors.Is(err, io.EOF))
}

func TestParse(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		line   string
		kind   jsonl.Kind
		id     string
		method string
	}{
		{`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{}}`, jsonl.Request, `7`, "tools/call"},
		{`{"jsonrpc":"2.0","id":"a-1","method":"initialize"}`, jsonl.Request, `"a-1"`, "initialize"},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, jsonl.Notification, ``, "notifications/initialized"},
		{`{"jsonrpc":"2.0","id":7,"result":{}}`, jsonl.Response, `7`, ""},
		{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`, jsonl.Response, ``, ""},
		{`{"jsonrpc":"1.0","id":7,"method":"x"}`, jsonl.Invalid, ``, ""},
		{`[{"jsonrpc":"2.0","id":7,"method":"x"}]`, jsonl.Invalid, ``, ""},
		{`Listening on stdio...`, jsonl.Invalid, ``, ""},
	} {
		m := jsonl.Parse([]byte(tc.line))
		require.Equal(t, tc.kind, m.Kind, tc.line)
		require.Equal(t, tc.id, string(m.ID), tc.line)
		require.Equal(t, tc.method, m.Method, tc.line)
	}
}
