// Command proxychild is a fault proxy process for faultproxy's tests that read what a
// request cost a proxy (its peak RSS counts goroutine stacks, which the heap's
// statistics do not) and whether it survived. The tests build it without the race
// detector, whose shadow memory would be most of what they measure.
//
//	proxychild UPSTREAM_URL
//
// It reads the key from a JSON-RPC body (params.arguments.idempotency_key) with a buffer
// limit of 16 MiB, prints its URL, and serves until its stdin closes.
package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/idemproof/idemproof/faultproxy"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: proxychild UPSTREAM_URL")
		os.Exit(2)
	}
	srv, err := faultproxy.Start(context.Background(), faultproxy.Config{Upstream: os.Args[1],
		KeyField: "params.arguments.idempotency_key", BufferLimit: 16 << 20})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fmt.Println(srv.URL())
	io.Copy(io.Discard, os.Stdin)
	srv.Close()
}
