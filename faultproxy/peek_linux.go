package faultproxy

import (
	"context"
	"errors"
	"net"
	"syscall"
	"time"
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

// peerGone reports whether the client at the other end of nc has closed or reset the
// connection, without consuming a byte and without blocking: EOF or an error pending
// means gone; bytes waiting (a pipelined request) or nothing yet (EAGAIN) mean there.
func peerGone(nc net.Conn) bool {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	gone := false
	var b [1]byte
	err = rc.Read(func(fd uintptr) bool {
		n, _, errno := syscall.Syscall6(syscall.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&b[0])), 1,
			syscall.MSG_PEEK|syscall.MSG_DONTWAIT, 0, 0)
		gone = (errno == 0 && n == 0) || (errno != 0 && errno != syscall.EAGAIN && errno != syscall.EWOULDBLOCK && errno != syscall.EINTR)
		return true
	})
	if err != nil {
		// A passed read deadline says nothing about the peer; a closed conn is ours.
		return errors.Is(err, net.ErrClosed)
	}
	return gone
}

// watchPeer returns a context that ends when the client closes or resets nc (or parent
// ends), and the function that stops watching. The watch waits for nc to turn readable
// without consuming a byte; a pipelined request ends it without cancelling.
func watchPeer(parent context.Context, nc net.Conn) (context.Context, func()) {
	ctx, cancel := context.WithCancel(parent)
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return ctx, cancel
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return ctx, cancel
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		gone := false
		var b [1]byte
		err := rc.Read(func(fd uintptr) bool {
			n, _, errno := syscall.Syscall6(syscall.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&b[0])), 1,
				syscall.MSG_PEEK|syscall.MSG_DONTWAIT, 0, 0)
			switch errno {
			case syscall.EAGAIN, syscall.EINTR:
				return false // nothing yet: wait until readable
			case 0:
				gone = n == 0
			default:
				gone = true
			}
			return true
		})
		if err == nil && gone {
			cancel()
		}
	}()
	return ctx, func() {
		// A passed deadline wakes the waiting read; the next request sets its own.
		nc.SetReadDeadline(time.Unix(1, 0))
		<-done
		nc.SetReadDeadline(time.Time{})
		cancel()
	}
}
