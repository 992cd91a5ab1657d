// Package ginkgotable declares the idemproof catalogue as a Ginkgo table in a team's own
// suite: one Entry per scenario, named by its ID and labelled with its catalogue labels
// (group:replay, level:safety, fault:after-upstream, speed:slow, …), so
// `ginkgo --label-filter` and `--focus` select scenarios as they select any spec.
//
//	var prof *profile.Profile
//	var _ = BeforeSuite(func() { prof, stop = scenariotest.HandlerTarget(api.NewHandler(), p) })
//	var _ = ginkgotable.DescribeCatalogue(func() *profile.Profile { return prof })
//
// An entry fails on FAIL and UNKNOWN (and NON-STRICT with scenarios.Strict()) with the
// verdict, requirement, evidence, attempt timeline and repeat command; N/A skips it; the
// rest pass and write what was observed to GinkgoWriter. It is what suites/conformance
// does for this repository, exported.
//
// DescribeCatalogue runs the selection once, in its first entry, as `idemproof
// check` runs it (one preflight, several scenarios at once: the CLI's time, not a run
// per entry), and each entry judges its scenario's result. When the suite is narrowed
// (ginkgo --focus, --skip, --label-filter) each entry runs its own scenario instead, so
// a focused spec runs nothing else. Batch does the same for a table of your own. A
// scenario UNKNOWN in the batch (an outcome the run could not see, such as an attempt a
// loaded CI machine timed out) is run once more alone, and the entry judges that run;
// a decision is never run again.
package ginkgotable

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/onsi/ginkgo/v2"

	"github.com/idemproof/idemproof/internal/buildinfo"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/report"
	"github.com/idemproof/idemproof/scenarios"
	"github.com/idemproof/idemproof/scenarios/scenariotest"
	"github.com/idemproof/idemproof/verdict"
)

// SpecTimeout bounds one entry: the longest scenarios wait out a retention window or
// hold a response past the client's timeout. CatalogueTimeout bounds the batch: the
// whole catalogue at once takes the CLI's time.
const (
	SpecTimeout      = time.Minute
	CatalogueTimeout = 10 * time.Minute
)

// Entries is one TableEntry per scenario the options select (scenarios.Only,
// scenarios.WithLabels; all by default), each carrying the scenario ID as its parameter.
// A selection that matches nothing panics while the tree is built, as a bad table should.
func Entries(opts ...scenarios.CheckOption) []ginkgo.TableEntry {
	return entries(opts, SpecTimeout)
}

func entries(opts []scenarios.CheckOption, timeout time.Duration) []ginkgo.TableEntry {
	cfg := config(opts)
	list, err := scenarios.Select(cfg.Only, cfg.Labels)
	if err != nil {
		panic(fmt.Sprintf("ginkgotable: %v", err))
	}
	out := make([]ginkgo.TableEntry, 0, len(list))
	for _, s := range list {
		out = append(out, ginkgo.Entry(s.ID, ginkgo.Label(s.Labels...), ginkgo.SpecTimeout(timeout), s.ID))
	}
	return out
}

// Body is the table's body: it runs one scenario against the profile (read when the spec
// runs, so a BeforeAll or BeforeSuite can build it) and judges the result.
func Body(prof func() *profile.Profile, opts ...scenarios.CheckOption) func(ginkgo.SpecContext, string) {
	return bodyOf(&Batch{}, prof, opts)
}

func bodyOf(b *Batch, prof func() *profile.Profile, opts []scenarios.CheckOption) func(ginkgo.SpecContext, string) {
	return func(ctx ginkgo.SpecContext, id string) {
		ginkgo.GinkgoHelper()
		rep, r, err := b.Result(ctx, prof(), id, opts...)
		if err != nil {
			ginkgo.Fail(err.Error())
		}
		fmt.Fprintf(ginkgo.GinkgoWriter, "%s %s: %s\n", r.Verdict, r.ScenarioID, r.Message)
		switch {
		case r.Verdict == verdict.NA:
			ginkgo.Skip("N/A: " + r.Message)
		case r.Verdict == verdict.Unknown || report.Failing(r.Verdict, rep.Strict):
			ginkgo.Fail(scenariotest.FailureMessage(rep, r))
		}
	}
}

// DescribeCatalogue declares the table "idemproof scenario" with Body and Entries; its
// first entry to run runs the whole selection (Batch), which every entry then reads, so
// each entry's timeout is CatalogueTimeout.
func DescribeCatalogue(prof func() *profile.Profile, opts ...scenarios.CheckOption) bool {
	b := &Batch{lazy: true}
	return ginkgo.DescribeTable("idemproof scenario", bodyOf(b, prof, opts), entries(opts, CatalogueTimeout))
}

// Batch holds one run of a selection against one profile, for the entries of a table to
// read: Run it in a BeforeAll (with CatalogueTimeout), then ask Result in each entry. An
// entry whose scenario the batch did not run (a narrowed suite, another profile) runs
// its scenario alone, and so does an entry whose scenario was UNKNOWN in the batch. A
// zero Batch runs every entry alone.
type Batch struct {
	mu  sync.Mutex
	p   *profile.Profile
	rep *verdict.Report
	// lazy: the first Result runs the batch (DescribeCatalogue, which has no BeforeAll
	// of its own: it may sit in an Ordered container of the caller's).
	lazy, ran bool
}

// Run runs every scenario the options select against p in one run, unless the suite is
// narrowed (Narrowed), when it runs nothing.
func (b *Batch) Run(ctx context.Context, p *profile.Profile, opts ...scenarios.CheckOption) error {
	if Narrowed() {
		return nil
	}
	cfg := config(opts)
	cfg.Profiles, cfg.Progress = []*profile.Profile{p}, nil
	if cfg.Seed == 0 {
		cfg.Seed = ginkgo.GinkgoRandomSeed()
	}
	ginkgo.By(fmt.Sprintf("running the selection against %s", p.Name))
	rep, err := scenarios.Run(ctx, cfg)
	if err != nil {
		return fmt.Errorf("run the selection against %s: %w", p.Name, err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.p, b.rep = p, rep
	return nil
}

// runOnce runs a lazy batch the first time an entry asks.
func (b *Batch) runOnce(ctx context.Context, p *profile.Profile, opts []scenarios.CheckOption) error {
	b.mu.Lock()
	first := b.lazy && !b.ran
	b.ran = true
	b.mu.Unlock()
	if !first {
		return nil
	}
	return b.Run(ctx, p, opts...)
}

// Result is scenario id's result against p: the batch's, else from a run of id alone.
func (b *Batch) Result(ctx context.Context, p *profile.Profile, id string, opts ...scenarios.CheckOption) (*verdict.Report, verdict.Result, error) {
	if err := b.runOnce(ctx, p, opts); err != nil {
		return nil, verdict.Result{}, err
	}
	b.mu.Lock()
	rep, same := b.rep, b.p == p
	b.mu.Unlock()
	if rep != nil && same {
		for _, r := range rep.Results {
			if r.ScenarioID != id {
				continue
			}
			if r.Verdict != verdict.Unknown {
				return rep, r, nil
			}
			// UNKNOWN is an outcome the run could not see (an attempt a loaded machine
			// timed out, a window the batch's neighbours pushed it past): the scenario is
			// asked once more, alone. A decision (FAIL included) is never asked again.
			fmt.Fprintf(ginkgo.GinkgoWriter, "%s was UNKNOWN in the batch (%s): running it again alone\n", id, r.Message)
			break
		}
	}
	cfg := config(opts)
	cfg.Profiles, cfg.Only, cfg.Labels, cfg.Progress = []*profile.Profile{p}, []string{id}, nil, nil
	if cfg.Seed == 0 {
		cfg.Seed = ginkgo.GinkgoRandomSeed()
	}
	ginkgo.By(fmt.Sprintf("running %s against %s", id, p.Name))
	rep, err := scenarios.Run(ctx, cfg)
	if err != nil {
		return nil, verdict.Result{}, fmt.Errorf("run %s: %w", id, err)
	}
	if len(rep.Results) != 1 {
		return nil, verdict.Result{}, fmt.Errorf("run %s: %d results, want one", id, len(rep.Results))
	}
	return rep, rep.Results[0], nil
}

// Narrowed reports whether the suite runs only some of its specs (ginkgo --focus,
// --skip, --label-filter, --focus-file, --skip-file): a batch would then run scenarios
// no spec asked for.
func Narrowed() bool {
	cfg, _ := ginkgo.GinkgoConfiguration()
	return len(cfg.FocusStrings) > 0 || len(cfg.SkipStrings) > 0 || cfg.LabelFilter != "" || len(cfg.FocusFiles) > 0 || len(cfg.SkipFiles) > 0
}

func config(opts []scenarios.CheckOption) scenarios.RunConfig {
	cfg := scenarios.RunConfig{Tool: "idemproof " + buildinfo.Module().String()}
	for _, o := range opts {
		o(&cfg)
	}
	return cfg
}
