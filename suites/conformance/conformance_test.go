package conformance_test

import (
	"fmt"
	"os"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/idemproof/idemproof/internal/dockertest"
	"github.com/idemproof/idemproof/internal/embedded"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/scenarios"
	"github.com/idemproof/idemproof/scenarios/ginkgotable"
	"github.com/idemproof/idemproof/scenarios/scenariotest"
	"github.com/idemproof/idemproof/verdict"
)

var _ = Describe("the scenario catalogue", func() {
	if name := targetProfile(); name != "" {
		Context("against the profile "+name, func() {
			var prof *profile.Profile
			BeforeAll(func(ctx SpecContext) {
				var err error
				prof, err = loadProfile(name)
				Expect(err).NotTo(HaveOccurred(), "load the target profile")
			}, NodeTimeout(10*time.Second))
			catalogueTable(func() *profile.Profile { return prof })
		}, Ordered, ContinueOnFailure)
		return
	}

	Context("against the embedded reference on the memory store", Label("store:memory"), Ordered, ContinueOnFailure, func() {
		var prof *profile.Profile
		BeforeAll(func(ctx SpecContext) {
			tgt, err := embedded.Start(ctx, embedded.Config{})
			DeferCleanup(closeTarget, tgt)
			Expect(err).NotTo(HaveOccurred())
			prof = tgt.Profile
		}, NodeTimeout(30*time.Second))
		catalogueTable(func() *profile.Profile { return prof })
	})

	Context("against the embedded reference on PostgreSQL", Label("store:postgres", "container"), Ordered, ContinueOnFailure, func() {
		var prof *profile.Profile
		BeforeAll(func(ctx SpecContext) {
			By("starting PostgreSQL from " + dockertest.PostgresImage())
			pg := dockertest.RunPostgres(GinkgoT())
			tgt, err := embedded.Start(ctx, embedded.Config{Store: pg.DSN, Profile: postgresProfile()})
			DeferCleanup(closeTarget, tgt)
			Expect(err).NotTo(HaveOccurred())
			prof = tgt.Profile
		}, NodeTimeout(2*time.Minute))
		catalogueTable(func() *profile.Profile { return prof })
	})
})

// postgresProfile is the built-in reference profile with a 15 s retention (the server's
// and the profile's): store/hang-race's retries wait out connections the hung store left
// broken, which on a loaded machine outlasts the default 5 s window, and a retry past it
// may rightly execute anew (UNKNOWN). Its slow hook holds the work 1 s, not 300 ms: the
// in-flight scenarios send their repeat a quarter into the hold, and on a loaded machine
// a PostgreSQL round trip or two can take longer than the rest of 300 ms, so the repeat
// met a committed key (an honest UNKNOWN, twice in a row once).
func postgresProfile() *profile.Profile {
	p, err := profile.Builtin("reference")
	Expect(err).NotTo(HaveOccurred())
	p.Retention = profile.Duration(15 * time.Second)
	p.Slow.Value = "1s"
	return p
}

// catalogueTable declares one spec per catalogue scenario against the profile the
// container's BeforeAll prepared. The whole catalogue runs first in one run, as
// `idemproof check` runs it (ginkgotable.Batch: one preflight, several scenarios at
// once), and each spec judges its scenario's result; a narrowed suite (--focus,
// --label-filter) runs each spec's scenario alone.
func catalogueTable(prof func() *profile.Profile) {
	batch := &ginkgotable.Batch{}
	opts := []scenarios.CheckOption{scenarios.WithSeed(GinkgoRandomSeed())}
	if strict {
		opts = append(opts, scenarios.Strict())
	}
	BeforeAll(func(ctx SpecContext) {
		Expect(batch.Run(ctx, prof(), opts...)).To(Succeed())
	}, NodeTimeout(ginkgotable.CatalogueTimeout))

	entries := make([]TableEntry, 0, len(catalogue))
	for _, s := range catalogue {
		// NodeTimeout, not SpecTimeout: a spec timeout covers the container's BeforeAll
		// too, which runs in the first spec (a PostgreSQL start and the whole batch).
		entries = append(entries, Entry(s.ID, Label(s.Labels...), NodeTimeout(ginkgotable.SpecTimeout), s.ID))
	}
	DescribeTable("scenario", func(ctx SpecContext, id string) {
		rep, r, err := batch.Result(ctx, prof(), id, opts...)
		Expect(err).NotTo(HaveOccurred())
		fmt.Fprintf(GinkgoWriter, "%s %s: %s\n", r.Verdict, r.ScenarioID, r.Message)
		Expect(r.Verdict).To(BeElementOf(acceptable()), func() string { return scenariotest.FailureMessage(rep, r) })
	}, entries)
}

// acceptable is the set of verdicts a spec passes on.
func acceptable() []verdict.Verdict {
	ok := []verdict.Verdict{verdict.Pass, verdict.Info, verdict.NA}
	if !strict {
		ok = append(ok, verdict.NonStrict)
	}
	return ok
}

func closeTarget(tgt *embedded.Target) error {
	if tgt == nil {
		return nil
	}
	return tgt.Close()
}

// loadProfile reads a profile file, or a built-in profile by name when no such file
// exists.
func loadProfile(name string) (*profile.Profile, error) {
	if fi, err := os.Stat(name); (err == nil && fi.Mode().IsRegular()) || strings.ContainsAny(name, `/\`) {
		return profile.Load(name)
	}
	return profile.Builtin(name)
}
