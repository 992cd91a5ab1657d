// Package ginkgotable declares the idemproof catalogue as a Ginkgo table in a team's own
// suite: one Entry per scenario, named by its ID and labelled with its catalogue labels
// (group:replay, level:safety, fault:after-upstream, speed:slow, …), so
// `ginkgo --label-filter` and `--focus` select scenarios as they select any spec.
//
//	var profile *profile.Profile
//	var _ = BeforeSuite(func() { profile, stop = scenariotest.HandlerTarget(api.NewHandler(), p) })
//	var _ = ginkgotable.DescribeCatalogue(func() *profile.Profile { return profile })
//
// An entry fails on FAIL and UNKNOWN (and NON-STRICT with scenarios.Strict()) with the
// verdict, requirement, evidence, attempt timeline and repeat command; N/A skips it; the
// rest pass and write what was observed to GinkgoWriter. It is what suites/conformance
// does for this repository, exported.
package ginkgotable

import (
	"fmt"
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
// hold a response past the client's timeout.
const SpecTimeout = time.Minute

// Entries is one TableEntry per scenario the options select (scenarios.Only,
// scenarios.WithLabels; all by default), each carrying the scenario ID as its parameter.
// A selection that matches nothing panics while the tree is built, as a bad table should.
func Entries(opts ...scenarios.CheckOption) []ginkgo.TableEntry {
	cfg := config(opts)
	list, err := scenarios.Select(cfg.Only, cfg.Labels)
	if err != nil {
		panic(fmt.Sprintf("ginkgotable: %v", err))
	}
	entries := make([]ginkgo.TableEntry, 0, len(list))
	for _, s := range list {
		entries = append(entries, ginkgo.Entry(s.ID, ginkgo.Label(s.Labels...), ginkgo.SpecTimeout(SpecTimeout), s.ID))
	}
	return entries
}

// Body is the table's body: it runs one scenario against the profile (read when the spec
// runs, so a BeforeAll or BeforeSuite can build it) and judges the result.
func Body(prof func() *profile.Profile, opts ...scenarios.CheckOption) func(ginkgo.SpecContext, string) {
	return func(ctx ginkgo.SpecContext, id string) {
		ginkgo.GinkgoHelper()
		cfg := config(opts)
		p := prof()
		ginkgo.By(fmt.Sprintf("running %s against %s", id, p.Name))
		cfg.Profiles, cfg.Only, cfg.Labels, cfg.Progress = []*profile.Profile{p}, []string{id}, nil, nil
		if cfg.Seed == 0 {
			cfg.Seed = ginkgo.GinkgoRandomSeed()
		}
		rep, err := scenarios.Run(ctx, cfg)
		if err != nil {
			ginkgo.Fail(fmt.Sprintf("run %s: %v", id, err))
		}
		for _, r := range rep.Results {
			fmt.Fprintf(ginkgo.GinkgoWriter, "%s %s: %s\n", r.Verdict, r.ScenarioID, r.Message)
			switch {
			case r.Verdict == verdict.NA:
				ginkgo.Skip("N/A: " + r.Message)
			case r.Verdict == verdict.Unknown || report.Failing(r.Verdict, rep.Strict):
				ginkgo.Fail(scenariotest.FailureMessage(rep, r))
			}
		}
	}
}

// DescribeCatalogue declares the table "idemproof scenario" with Body and Entries.
func DescribeCatalogue(prof func() *profile.Profile, opts ...scenarios.CheckOption) bool {
	return ginkgo.DescribeTable("idemproof scenario", Body(prof, opts...), Entries(opts...))
}

func config(opts []scenarios.CheckOption) scenarios.RunConfig {
	cfg := scenarios.RunConfig{Tool: "idemproof " + buildinfo.Module().String()}
	for _, o := range opts {
		o(&cfg)
	}
	return cfg
}
