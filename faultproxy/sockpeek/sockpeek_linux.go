package sockpeek

import (
	"net"
	"syscall"
	"unsafe"
)

// Supported says whether this platform can peek.
const Supported = true

// PeekByte looks at the next byte on fd without consuming it and without blocking: n is
// 0 with errno 0 at EOF, errno is EAGAIN when nothing has arrived.
func PeekByte(fd uintptr) (n uintptr, errno syscall.Errno) {
	var b [1]byte
	n, _, errno = syscall.Syscall6(syscall.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&b[0])), 1,
		syscall.MSG_PEEK|syscall.MSG_DONTWAIT, 0, 0)
	return n, errno
}

// WouldBlock is the errno of a peek that found nothing yet.
func WouldBlock(errno syscall.Errno) bool {
	return errno == syscall.EAGAIN || errno == syscall.EWOULDBLOCK
}

// Gone reports whether the peer of nc has closed or reset it: EOF or an error pending.
// Bytes waiting or nothing yet mean it is there. It goes through RawConn.Control, which
// takes none of the descriptor's read locks, so it neither waits for nor disturbs a
// Read another goroutine has pending (net/http's background read of a request being
// answered). False when nc has no descriptor.
func Gone(nc net.Conn) bool {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	gone := false
	if err := rc.Control(func(fd uintptr) {
		n, errno := PeekByte(fd)
		gone = (errno == 0 && n == 0) || (errno != 0 && !WouldBlock(errno) && errno != syscall.EINTR)
	}); err != nil {
		return false
	}
	return gone
}
