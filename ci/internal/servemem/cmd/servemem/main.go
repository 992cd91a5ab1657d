// Command servemem runs the full-size check of the reference server's memory bound:
//
//	servemem -idemproof BIN [-refunds 600000] [-clients 16] [-retention 5s] [-max-rss 300MB]
//
// It prints the answers by status and the server's peak and final resident set, and exits
// 1 when the peak is over -max-rss (ci/bench serve-memory; docs/reference.md).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"time"

	"github.com/idemproof/idemproof/ci/internal/servemem"
)

func main() {
	bin := flag.String("idemproof", "idemproof", "the idemproof binary")
	refunds := flag.Int("refunds", 600_000, "keyed refunds to send, each a new key and order")
	clients := flag.Int("clients", 16, "concurrent keep-alive clients")
	retention := flag.Duration("retention", 5*time.Second, "serve's --retention")
	maxRSS := flag.Int64("max-rss", 300<<20, "the largest peak resident set that passes, bytes")
	memoryLimit := flag.String("memory-limit", "", "serve's --memory-limit (empty: its default)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	cfg := servemem.Config{Idemproof: *bin, Refunds: *refunds, Clients: *clients, Retention: *retention}
	if *memoryLimit != "" {
		cfg.Args = []string{"--memory-limit", *memoryLimit}
	}
	res, err := servemem.Run(ctx, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "servemem:", err)
		os.Exit(2)
	}
	statuses := make([]int, 0, len(res.Statuses))
	for s := range res.Statuses {
		statuses = append(statuses, s)
	}
	sort.Ints(statuses)
	fmt.Printf("%d refunds in %s, %d clients, retention %s:", *refunds, res.Elapsed.Round(time.Second), *clients, *retention)
	for _, s := range statuses {
		name := fmt.Sprint(s)
		if s == 0 {
			name = "transport error"
		}
		fmt.Printf(" %s ×%d", name, res.Statuses[s])
	}
	fmt.Printf("\nserve's peak RSS %.1f MB, RSS at the end %.1f MB (bound %.0f MB)\n",
		float64(res.PeakRSS)/(1<<20), float64(res.RSS)/(1<<20), float64(*maxRSS)/(1<<20))
	if res.PeakRSS > *maxRSS {
		fmt.Println("FAIL: the peak is over the bound")
		os.Exit(1)
	}
	fmt.Println("ok")
}
