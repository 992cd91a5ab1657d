// Package orders is the loop every SDK example runs: refund each order once, record what
// happened in client-check's outcome file, and remember the orders that are done in the
// state folder, so that a restarted program resumes the one it was killed in instead of
// starting over (a queue worker's ordinary bookkeeping).
package orders

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/idemproof/idemproof/clientcheck/outcome"
)

// Default are the orders an example refunds.
var Default = []string{"order-1", "order-2", "order-3"}

// Config is where a run reports and keeps its bookkeeping.
type Config struct {
	// Orders to refund (nil: Default).
	Orders []string
	// OutcomeFile is client-check's outcome file ("" records nothing).
	OutcomeFile string
	// StateDir keeps the orders that are done ("" keeps nothing).
	StateDir string
	// Log gets one line per order, what its call says happened (nil: stderr).
	Log io.Writer
}

// Client is one run of an SDK example: where it reports, the API it calls, and whose
// key it sends.
type Client struct {
	Config
	// BaseURL is the API (client-check's proxy).
	BaseURL string
	// CallerKey sends an Idempotency-Key the program chose, derived from the order
	// ("refund-" + its id, CallerKeyOf), instead of the SDK's own or none: a key that
	// survives a restart of the program.
	CallerKey bool
}

// CallerKeyOf is the key a program chooses for an order when c.CallerKey is set ("" not).
func (c Client) CallerKeyOf(order string) string {
	if !c.CallerKey {
		return ""
	}
	return "refund-" + order
}

// Refund is one SDK call for one order, and what it says happened.
type Refund func(ctx context.Context, order string) outcome.Result

// Each refunds every order not yet done, in order. A call cut off by ctx is neither
// recorded nor marked done: the restarted program takes it up again.
func Each(ctx context.Context, cfg Config, refund Refund) error {
	ids := cfg.Orders
	if ids == nil {
		ids = Default
	}
	rec := outcome.NewRecorder(cfg.OutcomeFile)
	for _, id := range ids {
		if done(cfg.StateDir, id) {
			continue
		}
		r := refund(ctx, id)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		log := cfg.Log
		if log == nil {
			log = os.Stderr
		}
		fmt.Fprintf(log, "%s: %s\n", id, describe(r))
		if err := rec.Record(id, r); err != nil {
			return err
		}
		if err := markDone(cfg.StateDir, id); err != nil {
			return err
		}
	}
	return nil
}

func describe(r outcome.Result) string {
	switch {
	case r.Err != nil:
		return r.Outcome + ": " + r.Err.Error()
	case r.Status != 0:
		return fmt.Sprintf("%s (%d)", r.Outcome, r.Status)
	}
	return r.Outcome
}

func done(dir, id string) bool {
	if dir == "" {
		return false
	}
	_, err := os.Stat(filepath.Join(dir, "done-"+id))
	return err == nil
}

func markDone(dir, id string) error {
	if dir == "" {
		return nil
	}
	return os.WriteFile(filepath.Join(dir, "done-"+id), nil, 0o644)
}

// FromEnv is the Config client-check's environment names.
func FromEnv() Config {
	return Config{OutcomeFile: os.Getenv(outcome.EnvFile), StateDir: os.Getenv("IDEMPROOF_STATE_DIR")}
}
