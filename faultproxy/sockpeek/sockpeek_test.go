package sockpeek_test

import (
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/faultproxy/sockpeek"
)

// pair is the two ends of a loopback TCP connection.
func pair(t *testing.T) (client, server net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	client, err = net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	server = <-accepted
	require.NotNil(t, server)
	t.Cleanup(func() { client.Close(); server.Close() })
	return client, server
}

func TestGoneSeesACloseWithoutConsumingOrBlocking(t *testing.T) {
	if !sockpeek.Supported {
		t.Skip("no peek on this platform")
	}
	client, server := pair(t)
	require.False(t, sockpeek.Gone(server), "an open, quiet connection")

	_, err := client.Write([]byte("x"))
	require.NoError(t, err)
	require.False(t, sockpeek.Gone(server), "a byte waiting (or not yet arrived) is a peer still there")

	// A Read pending in another goroutine (net/http's background read) does not block it.
	read := make(chan []byte, 1)
	go func() {
		b := make([]byte, 8)
		n, _ := server.Read(b)
		read <- b[:n]
	}()
	require.Equal(t, []byte("x"), <-read, "the peeked byte was not consumed")
	go func() { server.Read(make([]byte, 1)) }()
	require.False(t, sockpeek.Gone(server), "with a Read pending on an open connection")

	require.NoError(t, client.Close())
	require.Eventually(t, func() bool { return sockpeek.Gone(server) }, 5*time.Second, time.Millisecond, "the peer's close")
}
