package stdio

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
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

// ShimEnv, set to 1 in a program's environment, makes RunShimIfAsked relay: a test
// binary can then be client-check's shim itself, with no idemproof program installed.
const ShimEnv = "IDEMPROOF_STDIO_SHIM"

// SelfShim is the command that starts this very program as the shim (through env, which
// sets ShimEnv); the caller adds "--attach", ADDR, as client-check does. The program must
// call RunShimIfAsked first thing (a test binary: in TestMain).
func SelfShim() []string { return []string{"env", ShimEnv + "=1", os.Args[0]} }

// RunShimIfAsked relays this process's stdin and stdout to the layer named by its
// "--attach ADDR" arguments and exits, when ShimEnv asks it to (SelfShim); otherwise it
// returns at once. Exit status: 0 when stdin ended first, 1 when the server did, 2 on bad
// arguments.
func RunShimIfAsked() {
	if os.Getenv(ShimEnv) != "1" {
		return
	}
	if len(os.Args) != 3 || os.Args[1] != "--attach" {
		fmt.Fprintln(os.Stderr, "shim: want --attach ADDR, got", os.Args[1:])
		os.Exit(2)
	}
	if err := Relay(context.Background(), os.Args[2], os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "shim:", err)
		os.Exit(1)
	}
	os.Exit(0)
}
