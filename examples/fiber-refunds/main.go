// Command fiber-refunds is a small refund API built on another framework's idempotency
// middleware (gofiber/fiber v2, middleware/idempotency), used to check that idemproof's
// verdicts match what that middleware really does. It is a separate Go module so the
// framework never enters idemproof's own dependencies.
//
// What the middleware's source does (v2.52): the key is looked up, then a per-key lock is
// taken (a concurrent repeat WAITS, it gets no 409), the handler runs, and whatever
// response it produced is stored under the key alone — no request fingerprint (a reused
// key with another payload is replayed the first response), no principal or endpoint
// scope, 5xx responses stored like any other, no replay marker header. A request
// without a key runs without idempotency.
//
// The key lifetime (the middleware's Lifetime) comes from FIBER_LIFETIME (default 2s),
// which profile.yaml reads as its retention too.
package main

import (
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/idempotency"
)

type refund struct {
	ID      string `json:"id"`
	OrderID string `json:"order_id"`
	Amount  int64  `json:"amount"`
	Reason  string `json:"reason,omitempty"`
}

type ledger struct {
	mu      sync.Mutex
	next    int
	refunds map[string][]refund
}

func (l *ledger) add(r refund) refund {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.next++
	r.ID = "re_" + strconv.Itoa(l.next)
	l.refunds[r.OrderID] = append(l.refunds[r.OrderID], r)
	return r
}

func (l *ledger) list(order string) []refund {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]refund{}, l.refunds[order]...)
}

// newApp builds the server. With uuidKeys the middleware keeps its default
// KeyHeaderValidate, which accepts only 36-character keys (a UUID's length) and answers
// any other key with a 500 (its error is not a *fiber.Error); the harness checks it with
// expect.key_format: uuid (profile-uuid.yaml). Without it, the server accepts keys of 1-255
// characters as the IETF draft suggests (profile.yaml), so every key/* scenario runs.
func newApp(lifetime time.Duration, uuidKeys bool) *fiber.App {
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	cfg := idempotency.Config{
		Lifetime:            lifetime,
		KeyHeader:           "Idempotency-Key",
		KeepResponseHeaders: []string{"Content-Type", "Location"},
	}
	if !uuidKeys {
		cfg.KeyHeaderValidate = func(k string) error {
			if len(k) > 255 {
				return fiber.NewError(fiber.StatusBadRequest, "Idempotency-Key longer than 255 characters")
			}
			return nil
		}
	}
	app.Use(idempotency.New(cfg))
	l := &ledger{refunds: map[string][]refund{}}
	app.Post("/v1/refunds", func(c *fiber.Ctx) error {
		var in refund
		if err := c.BodyParser(&in); err != nil || in.OrderID == "" || in.Amount <= 0 {
			return c.Status(fiber.StatusBadRequest).JSON(fiber.Map{"error": "order_id and a positive amount are required"})
		}
		if d, err := time.ParseDuration(c.Get("X-Test-Delay")); err == nil && d > 0 && d <= 30*time.Second {
			time.Sleep(d) // hold the work so a repeat arrives while it is in flight
		}
		if s, err := strconv.Atoi(c.Get("X-Test-Fail")); err == nil && s >= 500 && s <= 599 {
			return c.Status(s).JSON(fiber.Map{"error": "injected failure"})
		}
		if in.Amount > 1000000 {
			return c.Status(fiber.StatusPaymentRequired).JSON(fiber.Map{"error": "refund limit exceeded"})
		}
		r := l.add(in)
		c.Location("/v1/refunds/" + r.ID)
		return c.Status(fiber.StatusCreated).JSON(r)
	})
	app.Get("/v1/refunds", func(c *fiber.Ctx) error {
		rs := l.list(c.Query("order_id"))
		return c.JSON(fiber.Map{"data": rs, "count": len(rs)})
	})
	app.Get("/healthz", func(c *fiber.Ctx) error { return c.SendString("ok") })
	return app
}

// LifetimeEnv names the key lifetime the server keeps and profile.yaml declares as its
// retention (${FIBER_LIFETIME:-2s}): one variable, so the two never disagree.
const LifetimeEnv = "FIBER_LIFETIME"

// defaultLifetime is the lifetime without FIBER_LIFETIME: short, so that `idemproof
// check` waits the expiry scenarios out quickly. The middleware's memory storage expires
// keys on a clock of whole seconds, up to a second early: a client's retries (client-check)
// need a longer one (the README sets FIBER_LIFETIME=1m).
const defaultLifetime = 2 * time.Second

// envLifetime is FIBER_LIFETIME, or defaultLifetime when it is unset.
func envLifetime() (time.Duration, error) {
	v := os.Getenv(LifetimeEnv)
	if v == "" {
		return defaultLifetime, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s=%q: want a positive duration such as 2s or 1m", LifetimeEnv, v)
	}
	return d, nil
}

func main() {
	lifetime, err := envLifetime()
	if err != nil {
		fmt.Fprintln(os.Stderr, "fiber-refunds:", err)
		os.Exit(2)
	}
	listen := flag.String("listen", "127.0.0.1:8090", "address to listen on")
	uuidKeys := flag.Bool("uuid-keys", false, "keep the middleware's default KeyHeaderValidate: only 36-character keys (a UUID); check it with profile-uuid.yaml")
	flag.Parse()
	app := newApp(lifetime, *uuidKeys)
	fmt.Fprintf(os.Stderr, "fiber-refunds: listening on http://%s, keys kept %s (%s)\n", *listen, lifetime, LifetimeEnv)
	if err := app.Listen(*listen); err != nil && !errors.Is(err, os.ErrClosed) {
		log.Fatal(err)
	}
}
