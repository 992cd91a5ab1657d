package stdio

import (
	"context"
	"fmt"
	"io"
	"net"
	"sync/atomic"
)

// Relay is the shim's other half: it connects to a layer serving on addr (Layer.Serve,
// in another process: client-check) and passes in to it and what comes back to out, so
// the layer stands behind a command an agent host starts as its server. It returns nil
// when in ended first (the host stopped its server), and an error wrapping
// ErrServerGone when the layer closed the connection first (the server exited, or a
// fault killed it): the host then sees its server exit.
func Relay(ctx context.Context, addr string, in io.Reader, out io.Writer) error {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("relay to the fault layer at %s: %w", addr, err)
	}
	defer conn.Close()
	var inEnded atomic.Bool
	go func() {
		_, _ = io.Copy(conn, in)
		inEnded.Store(true)
		if tc, ok := conn.(*net.TCPConn); ok {
			_ = tc.CloseWrite() // the layer stops the server, then closes its side
		}
	}()
	go func() {
		<-ctx.Done()
		conn.Close()
	}()
	_, err = io.Copy(out, conn)
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case inEnded.Load():
		return nil
	case err != nil:
		return fmt.Errorf("relay: %w: %w", ErrServerGone, err)
	}
	return fmt.Errorf("relay: %w (the fault layer ended the connection)", ErrServerGone)
}
