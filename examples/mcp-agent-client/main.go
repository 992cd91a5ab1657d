package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	refunds := 3
	if n, err := strconv.Atoi(os.Getenv("IDEMPROOF_REFUNDS")); err == nil {
		refunds = n
	}
	cfg := Config{}
	flag.StringVar(&cfg.Endpoint, "endpoint", endpointFromEnv(), "the MCP endpoint (default: $IDEMPROOF_BASE_URL + $IDEMPROOF_MCP_ENDPOINT, or /mcp)")
	flag.IntVar(&cfg.Refunds, "n", refunds, "how many refund tool calls (default: $IDEMPROOF_REFUNDS, or 3)")
	flag.StringVar(&cfg.OrderPrefix, "orders", "order-", "order id prefix: order-1, order-2, …")
	keyField := os.Getenv("IDEMPROOF_KEY_FIELD")
	if keyField == "" {
		keyField = DefaultKeyField
	}
	flag.StringVar(&cfg.KeyField, "key-field", keyField, "where the key travels: params._meta.NAME or params.arguments.NAME (default: $IDEMPROOF_KEY_FIELD, or "+DefaultKeyField+")")
	flag.StringVar(&cfg.Tool, "tool", "refund", "the tool to call")
	flag.BoolVar(&cfg.KeyPerAttempt, "key-per-attempt", false, "the bug: mint a fresh key for every attempt")
	flag.BoolVar(&cfg.NewKeyOnReconnect, "new-key-on-reconnect", false, "the bug: after a broken session (a stdio server that died), a new key")
	flag.BoolVar(&cfg.OtherArguments, "other-arguments", false, "the bug: the retry sends other arguments under the key")
	flag.BoolVar(&cfg.FailedOnLoss, "failed-on-loss", false, "the bug: a lost answer is reported failed, not retried")
	flag.IntVar(&cfg.Attempts, "attempts", 5, "attempts per tool call")
	flag.DurationVar(&cfg.AttemptTimeout, "timeout", time.Second, "per-attempt timeout")
	flag.Parse()
	cfg.Log = os.Stderr
	cfg.StateDir = os.Getenv("IDEMPROOF_STATE_DIR")
	if cmd := os.Getenv("IDEMPROOF_MCP_COMMAND"); cmd != "" {
		// client-check over stdio: the server is a command to start (a JSON argv).
		if err := json.Unmarshal([]byte(cmd), &cfg.Command); err != nil {
			fmt.Fprintln(os.Stderr, "mcp-agent-client: IDEMPROOF_MCP_COMMAND:", err)
			os.Exit(2)
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	outcomes, err := Run(ctx, cfg)
	if werr := writeOutcomes(os.Getenv("IDEMPROOF_OUTCOME_FILE"), outcomes); werr != nil && err == nil {
		err = werr
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcp-agent-client:", err)
		os.Exit(1)
	}
}

// endpointFromEnv is client-check's proxy URL plus the MCP endpoint path (or a whole URL
// in IDEMPROOF_MCP_ENDPOINT).
func endpointFromEnv() string {
	base, path := os.Getenv("IDEMPROOF_BASE_URL"), os.Getenv("IDEMPROOF_MCP_ENDPOINT")
	switch {
	case strings.HasPrefix(path, "http://") || strings.HasPrefix(path, "https://"):
		return path
	case base == "":
		return ""
	case path == "":
		path = "/mcp"
	}
	return strings.TrimSuffix(base, "/") + "/" + strings.TrimPrefix(path, "/")
}

// writeOutcomes appends one JSON line per tool call to client-check's outcome file.
func writeOutcomes(path string, outcomes []Outcome) error {
	if path == "" {
		return nil
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("outcome file: %w", err)
	}
	enc := json.NewEncoder(f)
	for _, o := range outcomes {
		if err := enc.Encode(o); err != nil {
			f.Close()
			return fmt.Errorf("outcome file: %w", err)
		}
	}
	return f.Close()
}
