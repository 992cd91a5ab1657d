package containers_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/testcontainers/testcontainers-go/network"

	"github.com/idemproof/idemproof/containers/referencectr"
	"github.com/idemproof/idemproof/containers/vendorctr"
	"github.com/idemproof/idemproof/downstream"
	"github.com/idemproof/idemproof/internal/dockertest"
)

// boundary/crash-between-commit-and-call on real processes: the reference (PostgreSQL
// store, `--crash-exits`) notifies a vendor container of every refund from a job it
// commits with the refund. The process exits right after the commit, before any vendor
// call; the restarted process's outbox worker finds the committed job and delivers it.
// The vendor also loses its first answer (it did the work, then answered 503), so the
// worker re-drives the call: the key derived from the request's key must make that one
// vendor effect.
var _ = Describe("the vendor boundary across a real crash", Label("containers", "crash", "boundary", "level:safety"), func() {
	It("killed after the commit, before the vendor call: the restarted outbox notifies the vendor once, under one key", func(ctx SpecContext) {
		nw := newNetwork(ctx)
		pg := startPostgres(ctx, nw)
		By("starting the vendor (the recording sink) as vendor:9090")
		vendor, err := vendorctr.Run(ctx, dockertest.AppImage(), network.WithNetwork([]string{"vendor"}, nw))
		if vendor != nil {
			terminateAfterSpec(vendor)
		}
		Expect(err).NotTo(HaveOccurred())
		ref := startReference(ctx, nw, "reference", referencectr.WithCrashExits(), referencectr.WithRetention(time.Hour),
			referencectr.WithVendorURL(vendorctr.InternalURL("vendor")))
		hc := newHTTPClient(15 * time.Second)
		order, key := fresh("order"), fresh("key")
		Expect(vendor.AddRule(ctx, downstream.Rule{Entity: order, Nth: 1, Fault: downstream.Fault503After})).To(Succeed())

		By("sending the refund with X-Test-Crash: after-commit")
		first := postRefund(ctx, hc, referenceURL(ctx, ref), key, order, map[string]string{"X-Test-Crash": "after-commit"})
		Expect(first.Err).To(HaveOccurred(), "the process should exit before answering, got %v", first)
		awaitExit(ctx, ref.DockerContainer)
		Expect(dbRefundCount(ctx, pg, order)).To(Equal(1), "the refund committed before the crash")

		By("restarting the reference and retrying with the same key")
		Expect(ref.Start(ctx)).To(Succeed())
		retry := postRefund(ctx, hc, referenceURL(ctx, ref), key, order, nil)
		Expect(retry.Err).NotTo(HaveOccurred())
		Expect(retry.Replayed).To(BeTrue(), "the retry replays the committed refund, got %v", retry)

		By("waiting for the outbox to deliver the committed job, and to re-drive the call whose answer was lost")
		var calls []downstream.Call
		Eventually(ctx, func() int {
			calls, _, err = vendor.Calls(ctx, order)
			Expect(err).NotTo(HaveOccurred())
			return len(calls)
		}).WithTimeout(30 * time.Second).WithPolling(100 * time.Millisecond).Should(BeNumerically(">=", 2))
		keys := map[string]bool{}
		for _, c := range calls {
			Expect(c.HasKey).To(BeTrue(), "every vendor call carries a key: %+v", calls)
			keys[c.Key] = true
		}
		Expect(keys).To(HaveLen(1), "every delivery of the job carries the same derived key: %+v", calls)
		_, l, err := vendor.Calls(ctx, order)
		Expect(err).NotTo(HaveOccurred())
		Expect(l.Effects).To(Equal(1), "0 duplicate vendor effects")
		Expect(dbRefundCount(ctx, pg, order)).To(Equal(1), "exactly one refund in PostgreSQL")
	}, NodeTimeout(3*time.Minute))
})
