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
	"github.com/idemproof/idemproof/report"
	"github.com/idemproof/idemproof/scenarios"
	"github.com/idemproof/idemproof/verdict"
)

// The longest scenario waits out a retention window or holds a response past the client
// timeout; a minute leaves room for a slow machine without hiding a hang.
const scenarioTimeout = time.Minute

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
			tgt, err := embedded.Start(ctx, embedded.Config{Store: pg.DSN})
			DeferCleanup(closeTarget, tgt)
			Expect(err).NotTo(HaveOccurred())
			prof = tgt.Profile
		}, NodeTimeout(2*time.Minute))
		catalogueTable(func() *profile.Profile { return prof })
	})
})

// catalogueTable declares one spec per catalogue scenario; each runs its scenario against
// the profile the container's BeforeAll prepared.
func catalogueTable(prof func() *profile.Profile) {
	entries := make([]TableEntry, 0, len(catalogue))
	for _, s := range catalogue {
		entries = append(entries, Entry(s.ID, Label(s.Labels...), SpecTimeout(scenarioTimeout), s.ID))
	}
	DescribeTable("scenario", func(ctx SpecContext, id string) {
		p := prof()
		By(fmt.Sprintf("running %s against %s", id, p.Name))
		rep, err := scenarios.Run(ctx, scenarios.RunConfig{
			Profiles: []*profile.Profile{p},
			Only:     []string{id},
			Seed:     GinkgoRandomSeed(),
			Strict:   strict,
		})
		Expect(err).NotTo(HaveOccurred(), "run %s", id)
		Expect(rep.Results).To(HaveLen(1), "one result for one scenario and one target")
		r := rep.Results[0]
		fmt.Fprintf(GinkgoWriter, "%s %s: %s\n", r.Verdict, r.ScenarioID, r.Message)
		Expect(r.Verdict).To(BeElementOf(acceptable()), explain(rep, r))
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

// explain is the failure message: what was observed, the requirement, the evidence and
// the aligned attempt timeline, and the command that repeats the run.
func explain(rep *verdict.Report, r verdict.Result) func() string {
	return func() string {
		var b strings.Builder
		fmt.Fprintf(&b, "%s %s @ %s: %s\n", r.Verdict, r.ScenarioID, r.Target, r.Message)
		fmt.Fprintf(&b, "requirement: %s [%s; %s]\n", r.Requirement, r.Level, r.Source)
		for k, n := range r.Evidence.Categories {
			fmt.Fprintf(&b, "evidence: %s=%d\n", k, n)
		}
		for _, ex := range r.Evidence.Examples {
			fmt.Fprintf(&b, "- %s\n", ex)
		}
		b.WriteString(report.Timeline(r.Evidence.Record))
		fmt.Fprintf(&b, "repeat: %s\n", report.RepeatCommand(rep, r))
		return b.String()
	}
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
