package containers_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/testcontainers/testcontainers-go"

	"github.com/idemproof/idemproof/containers/referencectr"
	"github.com/idemproof/idemproof/faultproxy"
)

// stormConfig sizes the storm. CI runs the default; the documented full size is
// IDEMPROOF_STORM_OPS=10000.
type stormConfig struct {
	Ops       int           // logical refunds (IDEMPROOF_STORM_OPS, default 2000)
	Clients   int           // concurrent clients
	FaultRate float64       // share of attempts that get an after-upstream fault
	Seed      int64         // the proxy's seed (IDEMPROOF_STORM_SEED)
	Deadline  time.Duration // the whole storm, a hard bound (IDEMPROOF_STORM_TIMEOUT)
	// Flaw runs both replicas with a known flaw (IDEMPROOF_STORM_FLAW), to watch the storm
	// catch a broken server; empty in CI.
	Flaw string
}

func stormConfigFromEnv() (stormConfig, error) {
	c := stormConfig{Ops: 2000, Clients: 32, FaultRate: 0.30, Seed: 5, Deadline: 10 * time.Minute}
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

// stormFaults are the after-upstream faults the storm draws from: each is the committed
// request's response lost in another way. Rules are tried in order and the first whose
// draw succeeds applies, so rule i gets probability share/(1-(i)·share) to give every
// fault the same overall share and their sum the configured rate.
func stormFaults(rate float64) []faultproxy.Rule {
	faults := []faultproxy.FaultSpec{
		{Type: faultproxy.FaultAfterStatus, Status: 503},
		{Type: faultproxy.FaultAfterStatus, Status: 502},
		{Type: faultproxy.FaultAfterReset},
		{Type: faultproxy.FaultAfterClose},
		{Type: faultproxy.FaultAfterTruncate, Bytes: 5},
	}
	share := rate / float64(len(faults))
	rules := make([]faultproxy.Rule, len(faults))
	for i, f := range faults {
		rules[i] = faultproxy.Rule{
			Name:        fmt.Sprintf("storm-%d-%s", i, f.Type),
			Match:       faultproxy.Match{Method: "POST", Path: "/v1/refunds", Key: "*"},
			Fault:       f,
			Probability: share / (1 - float64(i)*share),
		}
	}
	return rules
}

// stormSummary is what the storm reports (AddReportEntry and docs/containers.md).
type stormSummary struct {
	Ops, Clients, Attempts, Faulted, JournalPOSTs int
	Elapsed                                       time.Duration
	Throughput                                    float64 // logical operations per second
	P50, P99, Max                                 time.Duration
	Duplicated, Lost, Failed                      int
	Events                                        []string
	// FailedOps describes the first few operations that did not complete: how many
	// attempts each took, which statuses it saw, and its last answer.
	FailedOps []string
	Slowest   string // the operation that took longest, described the same way
}

func (s stormSummary) String() string {
	return fmt.Sprintf("%d refunds, %d clients: %.1f ops/s in %s; latency p50 %s p99 %s max %s; "+
		"%d attempts (%d POSTs journaled, %d faulted = %.1f%%); duplicated %d, lost %d, failed %d; events: %v",
		s.Ops, s.Clients, s.Throughput, s.Elapsed.Round(time.Millisecond), s.P50.Round(time.Millisecond),
		s.P99.Round(time.Millisecond), s.Max.Round(time.Millisecond), s.Attempts, s.JournalPOSTs, s.Faulted,
		100*float64(s.Faulted)/float64(max(s.JournalPOSTs, 1)), s.Duplicated, s.Lost, s.Failed, s.Events) +
		"; slowest: " + s.Slowest + failedOpsText(s.FailedOps, s.Failed)
}

// failedOpsText lists the operations that did not complete, so a failed storm says why.
func failedOpsText(ops []string, failed int) string {
	if failed == 0 {
		return ""
	}
	text := "; did not complete:"
	for _, op := range ops {
		text += "\n  " + op
	}
	if failed > len(ops) {
		text += fmt.Sprintf("\n  … and %d more", failed-len(ops))
	}
	return text
}

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
		startReference(ctx, nw, "reference-1", opts...)
		ref2 := startReference(ctx, nw, "reference-2", opts...)
		px := startProxy(ctx, nw, cfg.Seed, "reference-1", "reference-2")
		ctl := proxyController(ctx, px)
		for _, r := range stormFaults(cfg.FaultRate) {
			Expect(ctl.AddRule(ctx, r)).To(Succeed())
		}
		proxyURL, err := px.URL(ctx)
		Expect(err).NotTo(HaveOccurred())

		run := fresh("storm")
		orders := make([]string, cfg.Ops)
		for i := range orders {
			orders[i] = fmt.Sprintf("%s-%06d", run, i)
		}
		stormCtx, cancel := context.WithTimeout(ctx, cfg.Deadline)
		defer cancel()

		By(fmt.Sprintf("running %d refunds from %d clients (seed %d)", cfg.Ops, cfg.Clients, cfg.Seed))
		hc := newHTTPClient(10 * time.Second)
		results := make([]opResult, cfg.Ops)
		var next, done atomic.Int64
		progress := make(chan int64, cfg.Ops)
		var wg sync.WaitGroup
		start := time.Now()
		for range cfg.Clients {
			wg.Add(1)
			go func() {
				defer GinkgoRecover()
				defer wg.Done()
				for {
					i := next.Add(1) - 1
					if i >= int64(cfg.Ops) || stormCtx.Err() != nil {
						return
					}
					results[i] = defaultRetryPolicy.refund(stormCtx, hc, func() string { return proxyURL }, orders[i])
					progress <- done.Add(1)
				}
			}()
		}

		By("restarting PostgreSQL at one third and killing a replica at two thirds")
		var events []string
		awaitProgress := func(n int64) {
			for d := int64(0); d < n; {
				select {
				case d = <-progress:
				case <-stormCtx.Done():
					return
				}
			}
		}
		awaitProgress(int64(cfg.Ops) / 3)
		event := func(what string) {
			events = append(events, fmt.Sprintf("%s at op %d (+%s)", what, done.Load(), time.Since(start).Round(time.Millisecond)))
		}
		event("postgres stopping")
		restartPostgres(stormCtx, pg)
		event("postgres back")
		awaitProgress(2 * int64(cfg.Ops) / 3)
		killContainer(stormCtx, ref2)
		event("reference-2 killed")
		Expect(ref2.Start(stormCtx)).To(Succeed())
		event("reference-2 back")
		wg.Wait()
		elapsed := time.Since(start)
		Expect(stormCtx.Err()).NotTo(HaveOccurred(), "the storm exceeded its deadline of %s", cfg.Deadline)

		By("counting refunds in PostgreSQL: every order exactly once")
		sum := summarise(cfg, results, start, elapsed, events)
		counts, err := dbRefundCounts(ctx, pg, orders)
		Expect(err).NotTo(HaveOccurred())
		for _, r := range results {
			switch n := counts[r.Order]; {
			case n > 1:
				sum.Duplicated++
			case n == 0 && r.OK():
				sum.Lost++
			}
		}
		journal, err := ctl.Journal(ctx, faultproxy.JournalQuery{})
		Expect(err).NotTo(HaveOccurred())
		for _, rec := range journal {
			if rec.Method == "POST" {
				sum.JournalPOSTs++
				if rec.Fault != "" {
					sum.Faulted++
				}
			}
		}
		AddReportEntry("storm", sum.String())
		fmt.Fprintln(GinkgoWriter, "storm:", sum)

		Expect(sum.Failed).To(BeZero(), "every operation must complete within its bounded retries: %s", sum)
		Expect(sum.Duplicated).To(BeZero(), "no order may be refunded twice: %s", sum)
		Expect(sum.Lost).To(BeZero(), "no acknowledged refund may be missing: %s", sum)
		total := 0
		for _, n := range counts {
			total += n
		}
		Expect(total).To(Equal(cfg.Ops), "exactly one refund per operation")
		Expect(sum.Faulted).To(BeNumerically(">", 0), "the proxy injected faults")
	}, NodeTimeout(20*time.Minute))
})

// summarise folds the client-side results into the storm's numbers.
func summarise(cfg stormConfig, results []opResult, start time.Time, elapsed time.Duration, events []string) stormSummary {
	s := stormSummary{Ops: cfg.Ops, Clients: cfg.Clients, Elapsed: elapsed, Events: events}
	describe := func(r opResult) string {
		return fmt.Sprintf("%s: started at +%s, %d attempts in %s, statuses %v (0 = transport error), last: %.300s",
			r.Order, r.Started.Sub(start).Round(time.Millisecond), r.Attempts, r.Latency.Round(time.Millisecond), r.Statuses, r.Final)
	}
	lat := make([]time.Duration, 0, len(results))
	var slowest opResult
	for _, r := range results {
		s.Attempts += r.Attempts
		if !r.OK() {
			s.Failed++
			if len(s.FailedOps) < 5 {
				s.FailedOps = append(s.FailedOps, describe(r))
			}
		}
		if r.Latency >= slowest.Latency {
			slowest = r
		}
		lat = append(lat, r.Latency)
	}
	s.Slowest = describe(slowest)
	slices.Sort(lat)
	if n := len(lat); n > 0 {
		s.P50, s.P99, s.Max = lat[n/2], lat[(n*99)/100], lat[n-1]
	}
	s.Throughput = float64(cfg.Ops) / elapsed.Seconds()
	return s
}
