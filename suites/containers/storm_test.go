package containers_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/testcontainers/testcontainers-go"

	"github.com/idemproof/idemproof/containers/referencectr"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/storm"
)

// stormConfig sizes the storm. CI runs the default; the documented full size is
// IDEMPROOF_STORM_OPS=10000.
type stormConfig struct {
	Ops      int           // logical refunds (IDEMPROOF_STORM_OPS, default 2000)
	Seed     int64         // deals the schedules (IDEMPROOF_STORM_SEED)
	Deadline time.Duration // the whole storm, a hard bound (IDEMPROOF_STORM_TIMEOUT)
	// Flaw runs both replicas with a known flaw (IDEMPROOF_STORM_FLAW), to watch the storm
	// catch a broken server; empty in CI.
	Flaw string
}

func stormConfigFromEnv() (stormConfig, error) {
	c := stormConfig{Ops: storm.DefaultOps, Seed: 5, Deadline: 10 * time.Minute}
	if v := os.Getenv("IDEMPROOF_STORM_OPS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return c, fmt.Errorf("IDEMPROOF_STORM_OPS=%q: want a positive number of operations", v)
		}
		c.Ops = n
	}
	if v := os.Getenv("IDEMPROOF_STORM_SEED"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return c, fmt.Errorf("IDEMPROOF_STORM_SEED=%q: want an integer", v)
		}
		c.Seed = n
	}
	if v := os.Getenv("IDEMPROOF_STORM_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return c, fmt.Errorf("IDEMPROOF_STORM_TIMEOUT=%q: want a Go duration such as 20m", v)
		}
		c.Deadline = d
	}
	c.Flaw = os.Getenv("IDEMPROOF_STORM_FLAW")
	return c, nil
}

// The storm of package storm (the one `idemproof storm` runs), against two replicas on
// one PostgreSQL behind the proxy container, with two disruptions of its own on top: a
// PostgreSQL restart at a third of the operations and a replica kill at two thirds. Each
// copy keeps retrying long enough to outlast them (a PostgreSQL stop is bounded at 10 s
// and its readiness at 60 s, a replica's start at 60 s).
var _ = Describe("a fault storm on two replicas", Label("containers", "storm", "level:safety"), func() {
	It("loses and duplicates nothing through 30% after-upstream faults, a PostgreSQL restart and a replica kill", func(ctx SpecContext) {
		cfg, err := stormConfigFromEnv()
		Expect(err).NotTo(HaveOccurred())
		nw := newNetwork(ctx)
		pg := startPostgres(ctx, nw)
		opts := []testcontainers.ContainerCustomizer{referencectr.WithRetention(time.Hour), referencectr.WithLockTimeout(2 * time.Second)}
		if cfg.Flaw != "" {
			opts = append(opts, referencectr.WithFlaw(cfg.Flaw))
		}
		ref1 := startReference(ctx, nw, "reference-1", opts...)
		ref2 := startReference(ctx, nw, "reference-2", opts...)
		px := startProxy(ctx, nw, cfg.Seed, "reference-1", "reference-2")
		proxyURL, err := px.URL(ctx)
		Expect(err).NotTo(HaveOccurred())
		adminURL, err := px.AdminURL(ctx)
		Expect(err).NotTo(HaveOccurred())
		base, err := ref1.URL(ctx)
		Expect(err).NotTo(HaveOccurred())
		prof, err := profile.Builtin("reference")
		Expect(err).NotTo(HaveOccurred())
		prof.BaseURL = base // the ledger, read from a replica: both share the database
		prof.Proxy = &profile.ProxyRef{URL: proxyURL, Admin: adminURL, AdminToken: px.AdminToken()}
		prof.Retention = profile.Duration(time.Hour)

		progress := make(chan int, 64)
		var events []string
		var eventsDone sync.WaitGroup
		eventsDone.Add(1)
		start := time.Now()
		stormCtx, cancel := context.WithTimeout(ctx, cfg.Deadline)
		defer cancel()
		go func() {
			defer GinkgoRecover()
			defer eventsDone.Done()
			await := func(n int) int {
				for d := range progress {
					if d >= n {
						return d
					}
				}
				return -1
			}
			event := func(what string, at int) {
				events = append(events, fmt.Sprintf("%s at op %d (+%s)", what, at, time.Since(start).Round(time.Millisecond)))
			}
			if at := await(cfg.Ops / 3); at >= 0 {
				event("postgres stopping", at)
				restartPostgres(stormCtx, pg)
				event("postgres back", at)
			}
			if at := await(2 * cfg.Ops / 3); at >= 0 {
				killContainer(stormCtx, ref2)
				event("reference-2 killed", at)
				// The replica's own log says why a restart failed (its exit status alone
				// does not).
				err := ref2.Start(stormCtx)
				Expect(err).NotTo(HaveOccurred(), func() string { return "reference-2's log:\n" + containerLog(ref2) })
				event("reference-2 back", at)
			}
			for range progress { // drain until the storm ends
			}
		}()

		By(fmt.Sprintf("running %d refunds (seed %d), restarting PostgreSQL at one third and killing a replica at two thirds", cfg.Ops, cfg.Seed))
		rep, err := storm.Run(stormCtx, storm.Config{
			Profile: prof, Ops: cfg.Ops, Seed: cfg.Seed, Duration: cfg.Deadline, NoShrink: true,
			Mix: storm.Mix{FaultRate: 0.30},
			// Retries outlast the disruptions: up to 200 attempts a second apart.
			Attempts: 200, MaxBackoff: time.Second,
			Progress: func(p storm.Progress) {
				select {
				case progress <- p.Done:
				default: // the event goroutine is busy with a disruption: it skips ahead
				}
			},
		})
		close(progress)
		eventsDone.Wait()
		Expect(err).NotTo(HaveOccurred())
		var text strings.Builder
		rep.WriteText(&text)
		summary := text.String() + fmt.Sprintf("events: %v\n", events)
		AddReportEntry("storm", summary)
		fmt.Fprintln(GinkgoWriter, summary)

		Expect(rep.Complete).To(BeTrue(), "the storm exceeded its deadline of %s: %s", cfg.Deadline, summary)
		Expect(rep.Done).To(Equal(cfg.Ops))
		for _, c := range storm.Categories {
			Expect(rep.Counts[c]).To(BeZero(), "%s: %s", c, summary)
		}
		Expect(rep.Faulted).To(BeNumerically(">", 0), "the proxy injected faults")
		Expect(events).To(HaveLen(4), "both disruptions happened during the storm")
	}, NodeTimeout(20*time.Minute))
})

// containerLog is the tail of a container's log, for a failure message.
func containerLog(c testcontainers.Container) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rc, err := c.Logs(ctx)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	defer rc.Close()
	b, _ := io.ReadAll(io.LimitReader(rc, 1<<20))
	if len(b) > 4096 {
		b = b[len(b)-4096:]
	}
	return string(b)
}
