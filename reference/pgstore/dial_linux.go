package pgstore

import (
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// setDeadPeerTimeout sets TCP_USER_TIMEOUT on TCP sockets (not on a Unix socket).
func setDeadPeerTimeout(network, _ string, c syscall.RawConn) error {
	if !strings.HasPrefix(network, "tcp") {
		return nil
	}
	var serr error
	err := c.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT, int(deadPeerTimeout.Milliseconds()))
	})
	if err != nil {
		return err
	}
	return serr
}
