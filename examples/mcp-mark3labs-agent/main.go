package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/idemproof/idemproof/clientcheck/outcome"
)

func main() {
	cfg := Config{Endpoint: os.Getenv("IDEMPROOF_MCP_ENDPOINT"), Tool: os.Getenv("IDEMPROOF_MCP_TOOL"), StateDir: os.Getenv("IDEMPROOF_STATE_DIR"), Log: os.Stderr}
	if cmd := os.Getenv("IDEMPROOF_MCP_COMMAND"); cmd != "" {
		if err := json.Unmarshal([]byte(cmd), &cfg.Command); err != nil {
			fmt.Fprintln(os.Stderr, "mcp-mark3labs-agent: IDEMPROOF_MCP_COMMAND:", err)
			os.Exit(2)
		}
	}
	flag.StringVar(&cfg.Endpoint, "endpoint", cfg.Endpoint, "the Streamable HTTP endpoint (default $IDEMPROOF_MCP_ENDPOINT)")
	flag.IntVar(&cfg.Refunds, "n", 3, "how many refund tool calls")
	flag.StringVar(&cfg.OrderPrefix, "orders", "order-", "order id prefix")
	flag.IntVar(&cfg.Attempts, "attempts", 5, "attempts per tool call")
	flag.DurationVar(&cfg.AttemptTimeout, "timeout", time.Second, "per-attempt timeout (keep it under client-check's hold)")
	flag.BoolVar(&cfg.KeyPerAttempt, "key-per-attempt", false, "the bug: mint a fresh key for every attempt")
	flag.BoolVar(&cfg.NewKeyOnReconnect, "new-key-on-reconnect", false, "the bug: after a broken session (a stdio server that died), a new key")
	flag.BoolVar(&cfg.OtherArguments, "other-arguments", false, "the bug: the retry sends other arguments under the key")
	flag.BoolVar(&cfg.FailedOnLoss, "failed-on-loss", false, "the bug: a lost answer is reported failed, not retried")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	outcomes, err := Run(ctx, cfg)
	if werr := writeOutcomes(os.Getenv(outcome.EnvFile), outcomes); werr != nil && err == nil {
		err = werr
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcp-mark3labs-agent:", err)
		os.Exit(1)
	}
}

// writeOutcomes appends one line per tool call to client-check's outcome file ("": none).
func writeOutcomes(path string, outcomes []outcome.Line) error {
	if path == "" {
		return nil
	}
	w := outcome.NewWriter(path)
	for _, o := range outcomes {
		if err := w.Write(o); err != nil {
			return err
		}
	}
	return nil
}
