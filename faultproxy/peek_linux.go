package faultproxy

import (
	"net"
	"syscall"
	"unsafe"
)

const peekSupported = true

// connIdleAlive reports whether an idle pooled connection can carry a request: the
// upstream has neither closed it (EOF or RST pending) nor sent bytes nobody asked for.
// One non-blocking MSG_PEEK; EAGAIN means alive.
func connIdleAlive(nc net.Conn) bool {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	alive := false
	var b [1]byte
	err = rc.Read(func(fd uintptr) bool {
		_, _, errno := syscall.Syscall6(syscall.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&b[0])), 1,
			syscall.MSG_PEEK|syscall.MSG_DONTWAIT, 0, 0)
		alive = errno == syscall.EAGAIN || errno == syscall.EWOULDBLOCK
		return true
	})
	return err == nil && alive
}
