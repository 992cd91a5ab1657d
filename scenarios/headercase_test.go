package scenarios_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/scenarios"
	"github.com/idemproof/idemproof/verdict"
)

// rawServer answers every POST with one fixed 201 and every GET with a count of 1, and
// keeps each request head exactly as it came off the wire (Go's server would
// canonicalize header names before a handler sees them).
func rawServer(t *testing.T) (string, func() []string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	var mu sync.Mutex
	var heads []string
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func(c net.Conn) {
				defer c.Close()
				br := bufio.NewReader(c)
				line, err := br.ReadString('\n')
				if err != nil {
					return
				}
				method, uri, _ := strings.Cut(strings.TrimSpace(line), " ")
				uri, _, _ = strings.Cut(uri, " ")
				var head strings.Builder
				head.WriteString(method + " " + uri + "\n")
				length := 0
				for {
					l, err := br.ReadString('\n')
					if err != nil {
						return
					}
					l = strings.TrimRight(l, "\r\n")
					if l == "" {
						break
					}
					name, value, _ := strings.Cut(l, ":")
					head.WriteString(name + "\n")
					if strings.EqualFold(name, "Content-Length") {
						length, _ = strconv.Atoi(strings.TrimSpace(value))
					}
				}
				_, _ = io.CopyN(io.Discard, br, int64(length))
				mu.Lock()
				heads = append(heads, head.String())
				mu.Unlock()
				body, status := `{"id":"re_1"}`, "201 Created"
				if method == http.MethodGet {
					body, status = `{"count":1}`, "200 OK"
				}
				_, _ = io.WriteString(c, "HTTP/1.1 "+status+"\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"+body)
			}(conn)
		}
	}()
	return "http://" + ln.Addr().String(), func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), heads...)
	}
}

// key/header-case sends its repeat past the proxy, so the target really sees the
// lower-case header name.
func TestHeaderCaseReachesTheTargetInLowerCase(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	base, heads := rawServer(t)
	p := fakeProfile(t, base)
	rep, err := scenarios.Run(ctx, scenarios.RunConfig{Profiles: []*profile.Profile{p}, Only: []string{"key/header-case"}, NoPreflight: true})
	require.NoError(t, err)
	r := rep.Results[0]
	require.Equal(t, verdict.Pass, r.Verdict, r.Message)
	require.Len(t, r.Evidence.Record.Journal, 1, "only the original went through the proxy")

	var posts []string
	for _, h := range heads() {
		if strings.HasPrefix(h, "POST") {
			posts = append(posts, h)
		}
	}
	require.Len(t, posts, 2)
	require.Contains(t, posts[0], "\nIdempotency-Key\n")
	require.Contains(t, posts[1], "\nidempotency-key\n")
}
