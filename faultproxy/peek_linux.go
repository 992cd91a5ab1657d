package faultproxy

import (
	"context"
	"errors"
	"net"
	"syscall"
	"time"

	"github.com/idemproof/idemproof/faultproxy/sockpeek"
)

const peekSupported = true

// rawRead runs f on nc's descriptor as syscall.RawConn.Read does (f returning false
// waits until nc is readable); false when nc has no descriptor.
func rawRead(nc net.Conn, f func(fd uintptr) bool) (bool, error) {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return false, nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false, nil
	}
	return true, rc.Read(f)
}

// connIdleAlive reports whether an idle pooled connection can carry a request: the
// upstream has neither closed it (EOF or RST pending) nor sent bytes nobody asked for.
// One non-blocking MSG_PEEK; EAGAIN means alive.
func connIdleAlive(nc net.Conn) bool {
	alive := false
	ok, err := rawRead(nc, func(fd uintptr) bool {
		_, errno := sockpeek.PeekByte(fd)
		alive = sockpeek.WouldBlock(errno)
		return true
	})
	return ok && err == nil && alive
}

// peerGone reports whether the client at the other end of nc has closed or reset the
// connection, without consuming a byte and without blocking: EOF or an error pending
// means gone; bytes waiting (a pipelined request) or nothing yet (EAGAIN) mean there.
func peerGone(nc net.Conn) bool {
	gone := false
	ok, err := rawRead(nc, func(fd uintptr) bool {
		n, errno := sockpeek.PeekByte(fd)
		gone = (errno == 0 && n == 0) || (errno != 0 && !sockpeek.WouldBlock(errno) && errno != syscall.EINTR)
		return true
	})
	if !ok {
		return false
	}
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
	if _, ok := nc.(syscall.Conn); !ok {
		return ctx, cancel
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		gone := false
		_, err := rawRead(nc, func(fd uintptr) bool {
			n, errno := sockpeek.PeekByte(fd)
			switch {
			case sockpeek.WouldBlock(errno), errno == syscall.EINTR:
				return false // nothing yet: wait until readable
			case errno == 0:
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
