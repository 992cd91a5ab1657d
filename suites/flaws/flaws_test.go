package flaws_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/idemproof/idemproof/internal/dockertest"
	"github.com/idemproof/idemproof/internal/embedded"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/reference"
	"github.com/idemproof/idemproof/report"
	"github.com/idemproof/idemproof/scenarios"
	"github.com/idemproof/idemproof/scenarios/ginkgotable"
	"github.com/idemproof/idemproof/scenarios/scenariotest"
	"github.com/idemproof/idemproof/storm"
	"github.com/idemproof/idemproof/verdict"
)

// A group run includes the 1,000-attempt burst and waits out retention windows; the
// whole catalogue takes longer. Both stay well under these bounds on two cores.
const (
	groupTimeout     = 2 * time.Minute
	catalogueTimeout = 4 * time.Minute
)

var _ = Describe("the flaw catalogue", func() {
	Context("on the memory store", Ordered, ContinueOnFailure, func() {
		// Each flaw runs against a reference of its own, so the flaws run a few at once
		// (flawWorkers), each one's scenarios one at a time as before; each spec then
		// judges its flaw's run. A narrowed suite (--focus, --label-filter) runs each
		// spec's flaw alone instead.
		var runs map[string]flawRun
		BeforeAll(func(ctx SpecContext) {
			if !ginkgotable.Narrowed() {
				runs = runFlawsAtOnce(ctx, memoryFlaws(), flawWorkers)
			}
		}, NodeTimeout(batchTimeout))
		for _, flaw := range memoryFlaws() {
			It(fmt.Sprintf("catches %s with %s", flaw.Name, flaw.CaughtBy), Label("flaw:"+flaw.Name), func(ctx SpecContext) {
				run, ok := runs[flaw.Name]
				if why := unseen(run, flaw); !ok || why != "" {
					if ok {
						fmt.Fprintf(GinkgoWriter, "%s: %s in the flaws run at once: running it again alone\n", flaw.Name, why)
					}
					run.rep, run.err = runFlaw(ctx, embedded.Config{Flaws: []string{flaw.Name}}, caughtBySelection(flaw))
				}
				Expect(run.err).NotTo(HaveOccurred())
				expectCaughtIn(run.rep, flaw)
			}, NodeTimeout(catalogueTimeout)) // not SpecTimeout: that would cover the BeforeAll the first spec runs
		}
	})

	It("catches check-then-set with the storm at its default size, shrunk to a schedule of at most 3 requests", Label("flaw:check-then-set", "storm"), func(ctx SpecContext) {
		tgt, err := embedded.Start(ctx, embedded.Config{Flaws: []string{"check-then-set"}})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(tgt.Close)
		By(fmt.Sprintf("running a storm of %d operations against %s", storm.DefaultOps, tgt.Profile.Name))
		rep, err := storm.Run(ctx, storm.Config{Profile: tgt.Profile, Seed: GinkgoRandomSeed()})
		Expect(err).NotTo(HaveOccurred())
		var text strings.Builder
		rep.WriteText(&text)
		fmt.Fprintln(GinkgoWriter, text.String())
		Expect(rep.Done).To(Equal(storm.DefaultOps))
		Expect(rep.Counts[storm.CatDuplicated]).To(BeNumerically(">", 0), "concurrent first attempts of one key are common enough at the default size: %s", text.String())
		Expect(rep.Shrunk).NotTo(BeEmpty(), text.String())
		Expect(rep.Shrunk[0].Requests).To(BeNumerically("<=", 3), text.String())
	}, SpecTimeout(catalogueTimeout))

	It("finds nothing wrong with the correct reference on the memory store", Label("store:memory"), func(ctx SpecContext) {
		rep := runEmbedded(ctx, embedded.Config{}, nil)
		expectClean(rep)
	}, SpecTimeout(catalogueTimeout))

	Context("on PostgreSQL", Label("store:postgres", "container"), Ordered, ContinueOnFailure, func() {
		var dsn string
		BeforeAll(func(ctx SpecContext) {
			dsn = dockertest.RunPostgres(GinkgoT()).DSN
		}, NodeTimeout(2*time.Minute))

		It("finds nothing wrong with the correct reference, its key store behind the store fault point", func(ctx SpecContext) {
			// A 15 s window and a 1 s hold, as suites/conformance gives them: store/hang-race's
			// retries wait out the connections the hung store left broken, and the in-flight
			// scenarios' repeat, a quarter into the hold, must still meet the original on a
			// loaded machine.
			p, err := profile.Builtin("reference")
			Expect(err).NotTo(HaveOccurred())
			p.Retention = profile.Duration(15 * time.Second)
			p.Slow.Value = "1s"
			rep := runEmbedded(ctx, embedded.Config{Store: dsn, Profile: p}, nil)
			expectClean(rep)
			for _, r := range rep.Results {
				if strings.HasPrefix(r.ScenarioID, "store/") {
					Expect(r.Verdict).To(Equal(verdict.Pass), "%s runs behind the store fault point: %s", r.ScenarioID, r.Message)
				}
			}
		}, NodeTimeout(catalogueTimeout))

		for _, flaw := range allFlaws {
			if !storeFlaw(flaw) {
				continue
			}
			It(fmt.Sprintf("catches %s with %s", flaw.Name, flaw.CaughtBy), Label("flaw:"+flaw.Name), func(ctx SpecContext) {
				expectCaught(ctx, flaw, embedded.Config{Store: dsn, Flaws: []string{flaw.Name}})
			}, NodeTimeout(catalogueTimeout))
		}
	})
})

// storeFlaw reports whether the flaw is one of a failing key store, caught by a store/*
// scenario: it needs the reference's store behind the store fault point (PostgreSQL).
func storeFlaw(f reference.Flaw) bool { return group(f.CaughtBy) == "store" }

// flawWorkers is how many flaws run at once: each against a reference of its own with
// its scenarios one at a time, so a few at once load two cores about as much as the
// CLI's default of four scenarios at once.
const flawWorkers = 4

// batchTimeout bounds the memory flaws run at once: their groups add up to about two
// minutes one after the other on two loaded cores.
const batchTimeout = 10 * time.Minute

// flawRun is one flaw's run: its report, or why it could not run.
type flawRun struct {
	rep *verdict.Report
	err error
}

// memoryFlaws are the flaws a memory store can show: all but the failing key store's.
func memoryFlaws() []reference.Flaw {
	var out []reference.Flaw
	for _, f := range allFlaws {
		if !storeFlaw(f) {
			out = append(out, f)
		}
	}
	return out
}

// runFlawsAtOnce runs each flaw's caught-by selection against a reference with that flaw,
// workers at a time.
func runFlawsAtOnce(ctx context.Context, flaws []reference.Flaw, workers int) map[string]flawRun {
	out := make(map[string]flawRun, len(flaws))
	var mu sync.Mutex
	work := make(chan reference.Flaw)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for f := range work {
				rep, err := runFlaw(ctx, embedded.Config{Flaws: []string{f.Name}}, caughtBySelection(f))
				mu.Lock()
				out[f.Name] = flawRun{rep, err}
				mu.Unlock()
			}
		}()
	}
	for _, f := range flaws {
		work <- f
	}
	close(work)
	wg.Wait()
	return out
}

// caughtBySelection is the flaw's caught-by group (the whole catalogue under
// $IDEMPROOF_FLAWS_FULL).
func caughtBySelection(flaw reference.Flaw) []string {
	if fullRuns {
		return nil
	}
	return []string{group(flaw.CaughtBy) + "/*"}
}

// runFlaw starts the embedded reference with cfg, runs the selection strictly against
// it, one scenario at a time, and stops it again.
func runFlaw(ctx context.Context, cfg embedded.Config, only []string) (*verdict.Report, error) {
	tgt, err := embedded.Start(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("start the reference with %v: %w", cfg.Flaws, err)
	}
	defer tgt.Close()
	rep, err := scenarios.Run(ctx, scenarios.RunConfig{
		Profiles:    []*profile.Profile{tgt.Profile},
		Only:        only,
		Seed:        GinkgoRandomSeed(),
		Strict:      true,
		Concurrency: concurrency(),
	})
	if err != nil {
		return nil, fmt.Errorf("run %s against the reference with %v: %w", selection(only), cfg.Flaws, err)
	}
	return rep, nil
}

// expectCaught runs the flaw's caught-by group against the reference with cfg, and
// requires its caught-by scenario to fail with a decision; a run that could not see the
// outcome is run once more.
func expectCaught(ctx context.Context, flaw reference.Flaw, cfg embedded.Config) {
	GinkgoHelper()
	var run flawRun
	run.rep, run.err = runFlaw(ctx, cfg, caughtBySelection(flaw))
	if why := unseen(run, flaw); why != "" {
		fmt.Fprintf(GinkgoWriter, "%s: %s: running it again\n", flaw.Name, why)
		run.rep, run.err = runFlaw(ctx, cfg, caughtBySelection(flaw))
	}
	Expect(run.err).NotTo(HaveOccurred())
	expectCaughtIn(run.rep, flaw)
}

// unseen says why a flaw's run did not see its caught-by scenario's outcome, or "": the
// run stopped (a preflight whose request a loaded machine timed out), or the scenario is
// UNKNOWN. Such a run is asked once more; a decision, FAIL or PASS, never is.
func unseen(run flawRun, flaw reference.Flaw) string {
	if run.err != nil {
		return "the run stopped (" + run.err.Error() + ")"
	}
	if run.rep == nil {
		return ""
	}
	if r, ok := resultOf(run.rep, flaw.CaughtBy); ok && r.Verdict == verdict.Unknown {
		return flaw.CaughtBy + " was UNKNOWN (" + r.Message + ")"
	}
	return ""
}

// expectCaughtIn requires the flaw's caught-by scenario to fail in rep with a decision.
func expectCaughtIn(rep *verdict.Report, flaw reference.Flaw) {
	GinkgoHelper()
	Expect(rep.Results).NotTo(BeEmpty())
	caught, ok := resultOf(rep, flaw.CaughtBy)
	Expect(ok).To(BeTrue(), "the run has a result for %s", flaw.CaughtBy)
	Expect(report.Failing(caught.Verdict, true)).To(BeTrue(),
		"%s must fail against the reference with %s (%s); got %s: %s\n%s",
		flaw.CaughtBy, flaw.Name, flaw.Description, caught.Verdict, caught.Message, report.Timeline(caught.Evidence.Record))
	Expect(caught.Verdict).NotTo(Equal(verdict.Unknown), "a flaw is caught by a decision, not by an UNKNOWN")
	fmt.Fprintf(GinkgoWriter, "%s caught: %s %s: %s\n", flaw.Name, caught.Verdict, caught.ScenarioID, caught.Message)
}

// runEmbedded starts the embedded reference with cfg, runs the selected scenarios (nil:
// all) strictly against it, and stops it again.
func runEmbedded(ctx context.Context, cfg embedded.Config, only []string) *verdict.Report {
	GinkgoHelper()
	tgt, err := embedded.Start(ctx, cfg)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(tgt.Close)
	By(fmt.Sprintf("running %s against %s", selection(only), tgt.Profile.Name))
	rep, err := scenarios.Run(ctx, scenarios.RunConfig{
		Profiles:    []*profile.Profile{tgt.Profile},
		Only:        only,
		Seed:        GinkgoRandomSeed(),
		Strict:      true,
		Concurrency: concurrency(),
	})
	Expect(err).NotTo(HaveOccurred())
	Expect(rep.Results).NotTo(BeEmpty())
	secondLook(ctx, tgt.Profile, rep)
	return rep
}

// secondLook runs the scenarios that were UNKNOWN in rep again, alone (an outcome the
// run could not see is not a property of the target), and logs what the first run saw.
func secondLook(ctx context.Context, p *profile.Profile, rep *verdict.Report) {
	GinkgoHelper()
	notes, err := scenariotest.SecondLook(ctx, scenarios.RunConfig{Profiles: []*profile.Profile{p}, Seed: GinkgoRandomSeed(), Strict: true}, rep, nil)
	for _, n := range notes {
		fmt.Fprintln(GinkgoWriter, n)
	}
	Expect(err).NotTo(HaveOccurred())
}

// concurrency is $IDEMPROOF_CONCURRENCY, else 1: under -race on two shared cores, the
// 1,000-attempt burst running beside the window-sensitive scenarios (a repeat just inside
// a 1 s retention, a response held past a 2 s client timeout) pushes them over their
// windows. One at a time costs about twice the wall time and removes that noise.
func concurrency() int {
	if n, err := strconv.Atoi(os.Getenv("IDEMPROOF_CONCURRENCY")); err == nil && n > 0 {
		return n
	}
	return 1
}

// expectClean requires zero failing results under strict (no FAIL, NON-STRICT or
// UNKNOWN), and shows the summary with every failure's timeline otherwise.
func expectClean(rep *verdict.Report) {
	GinkgoHelper()
	var failing []string
	for _, r := range rep.Results {
		if report.Failing(r.Verdict, true) {
			failing = append(failing, string(r.Verdict)+" "+r.ScenarioID)
		}
	}
	Expect(rep.Results).To(HaveLen(len(scenarios.Catalogue())), "every scenario ran")
	Expect(failing).To(BeEmpty(), func() string {
		var b strings.Builder
		report.WriteSummary(&b, rep)
		return b.String()
	})
}

func resultOf(rep *verdict.Report, id string) (verdict.Result, bool) {
	for _, r := range rep.Results {
		if r.ScenarioID == id {
			return r, true
		}
	}
	return verdict.Result{}, false
}

// group is the scenario ID's group: "race" for "race/concurrent-pair".
func group(id string) string {
	g, _, _ := strings.Cut(id, "/")
	return g
}

func selection(only []string) string {
	if len(only) == 0 {
		return "the whole catalogue"
	}
	return strings.Join(only, ",")
}
