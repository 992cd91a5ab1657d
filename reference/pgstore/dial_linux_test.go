package pgstore

import (
	"context"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// A TCP connection to the database gives up on a dead peer after deadPeerTimeout; a Unix
// socket connection, which has no such option, still dials.
func TestDialerSetsTheDeadPeerTimeout(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	c, err := dialer(0).DialContext(context.Background(), "tcp", ln.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	raw, err := c.(*net.TCPConn).SyscallConn()
	require.NoError(t, err)
	var ms int
	var gerr error
	require.NoError(t, raw.Control(func(fd uintptr) {
		ms, gerr = unix.GetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT)
	}))
	require.NoError(t, gerr)
	require.Equal(t, int(deadPeerTimeout/time.Millisecond), ms)
	require.Equal(t, deadPeerTimeout, dialer(0).Timeout, "no connect_timeout in the DSN")
	require.Equal(t, 3*time.Second, dialer(3*time.Second).Timeout, "the DSN's connect_timeout")

	sock := filepath.Join(t.TempDir(), "s")
	uln, err := net.Listen("unix", sock)
	require.NoError(t, err)
	defer uln.Close()
	uc, err := dialer(time.Second).DialContext(context.Background(), "unix", sock)
	require.NoError(t, err)
	uc.Close()
}
