package ginkgotable_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/reference"
	"github.com/idemproof/idemproof/scenarios"
	"github.com/idemproof/idemproof/scenarios/ginkgotable"
	"github.com/idemproof/idemproof/scenarios/scenariotest"
)

var selection = []scenarios.CheckOption{scenarios.Only("replay/sequential", "replay/after-503", "fingerprint/*", "recovery/crash-after-key")}

var _ = Describe("the catalogue as a Ginkgo table", Ordered, func() {
	var prof *profile.Profile
	BeforeAll(func() {
		p, err := profile.Builtin("reference")
		Expect(err).NotTo(HaveOccurred())
		srv, err := reference.New(reference.WithTestHooks(true),
			reference.WithRetention(time.Duration(p.Retention)), reference.WithLockTimeout(time.Duration(p.LockTimeout)))
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(srv.Close)
		var stop func()
		prof, stop = scenariotest.HandlerTarget(srv, p)
		DeferCleanup(stop)
	})

	ginkgotable.DescribeCatalogue(func() *profile.Profile { return prof }, selection...)

	It("hands each entry its own scenario's result from one run", func(ctx SpecContext) {
		b := &ginkgotable.Batch{}
		Expect(b.Run(ctx, prof, selection...)).To(Succeed())
		first, _, err := b.Result(ctx, prof, "replay/sequential", selection...)
		Expect(err).NotTo(HaveOccurred())
		want, err := scenarios.Select([]string{"replay/sequential", "replay/after-503", "fingerprint/*", "recovery/crash-after-key"}, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(first.Results).To(HaveLen(len(want)), "the batch ran the whole selection at once")
		for _, s := range want {
			rep, r, err := b.Result(ctx, prof, s.ID, selection...)
			Expect(err).NotTo(HaveOccurred())
			Expect(r.ScenarioID).To(Equal(s.ID))
			Expect(rep).To(BeIdenticalTo(first), "read from the batch, not run again")
		}
	}, SpecTimeout(ginkgotable.CatalogueTimeout))
})

var _ = Describe("Entries", func() {
	It("has one entry per selected scenario, named by its ID", func() {
		want, err := scenarios.Select([]string{"replay/sequential", "replay/after-503", "fingerprint/*", "recovery/crash-after-key"}, nil)
		Expect(err).NotTo(HaveOccurred())
		entries := ginkgotable.Entries(selection...)
		Expect(entries).To(HaveLen(len(want)))
	})

	It("refuses a selection that matches nothing", func() {
		Expect(func() { ginkgotable.Entries(scenarios.Only("no/such")) }).To(PanicWith(ContainSubstring(`"no/such": no scenario matches`)))
	})
})
