package containers_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/idemproof/idemproof/containers/referencectr"
)

// A real crash: `serve --crash-exits` makes the X-Test-Crash hook exit the process, so
// the container stops; the spec starts it again and retries with the same key.
var _ = Describe("the reference process killed mid-request", Label("containers", "crash", "level:safety"), func() {
	It("after the commit, before the response: the retry replays the committed result, one refund", func(ctx SpecContext) {
		nw := newNetwork(ctx)
		pg := startPostgres(ctx, nw)
		ref := startReference(ctx, nw, "reference", referencectr.WithCrashExits(), referencectr.WithRetention(time.Hour))
		hc := newHTTPClient(15 * time.Second)
		order, key := fresh("order"), fresh("key")

		By("sending the refund with X-Test-Crash: after-commit")
		first := postRefund(ctx, hc, referenceURL(ctx, ref), key, order, map[string]string{"X-Test-Crash": "after-commit"})
		Expect(first.Err).To(HaveOccurred(), "the process should exit before answering, got %v", first)
		awaitExit(ctx, ref.DockerContainer)
		Expect(dbRefundCount(ctx, pg, order)).To(Equal(1), "the refund committed before the crash")

		By("restarting the reference and retrying with the same key")
		Expect(ref.Start(ctx)).To(Succeed())
		base := referenceURL(ctx, ref) // a new host port after the restart
		retry := postRefund(ctx, hc, base, key, order, nil)
		Expect(retry.Err).NotTo(HaveOccurred())
		Expect(retry.Status).To(beSuccess(), "the committed result, got %v", retry)
		Expect(retry.Replayed).To(BeTrue(), "the retry is a replay of the committed response, got %v", retry)
		again := postRefund(ctx, hc, base, key, order, nil)
		Expect(again.Status).To(Equal(retry.Status))
		Expect(again.Body).To(Equal(retry.Body), "every replay carries the same bytes")

		Expect(dbRefundCount(ctx, pg, order)).To(Equal(1), "exactly one refund in PostgreSQL")
		Expect(ledgerCount(ctx, hc, base, order)).To(Equal(1), "exactly one refund in the ledger")
	}, NodeTimeout(3*time.Minute))

	It("after the key insert, before the work: the retry after the lock timeout executes exactly once", func(ctx SpecContext) {
		nw := newNetwork(ctx)
		pg := startPostgres(ctx, nw)
		ref := startReference(ctx, nw, "reference", referencectr.WithCrashExits(),
			referencectr.WithRetention(time.Hour), referencectr.WithLockTimeout(2*time.Second))
		hc := newHTTPClient(15 * time.Second)
		order := fresh("order")
		key := fresh("key")

		By("sending the refund with X-Test-Crash: after-key")
		first := postRefund(ctx, hc, referenceURL(ctx, ref), key, order, map[string]string{"X-Test-Crash": "after-key"})
		Expect(first.Err).To(HaveOccurred(), "the process should exit before answering, got %v", first)
		awaitExit(ctx, ref.DockerContainer)
		Expect(dbRefundCount(ctx, pg, order)).To(Equal(0), "the work never ran")

		By("restarting the reference and retrying the same key until the stale lock is taken over")
		Expect(ref.Start(ctx)).To(Succeed())
		base := referenceURL(ctx, ref)
		seen := map[int]int{}
		var final answer
		// 409 while the dead request's lock is live, then the takeover executes the work.
		Eventually(ctx, func() int {
			final = postRefund(ctx, hc, base, key, order, nil)
			seen[final.Status]++
			return final.Status
		}).WithTimeout(30*time.Second).WithPolling(250*time.Millisecond).Should(beSuccess(), "the key must not stay wedged")
		Expect(final.Replayed).To(BeFalse(), "the takeover executes; nothing was stored to replay")
		for status := range seen {
			Expect(status).To(Or(Equal(409), beSuccess()), "retries see only 409 (in flight) or the success: %v", seen)
		}

		By("a further retry replays; still one refund")
		again := postRefund(ctx, hc, base, key, order, nil)
		Expect(again.Status).To(Equal(final.Status))
		Expect(again.Replayed).To(BeTrue())
		Expect(again.Body).To(Equal(final.Body))
		Expect(dbRefundCount(ctx, pg, order)).To(Equal(1), "exactly one refund in PostgreSQL")
		Expect(ledgerCount(ctx, hc, base, order)).To(Equal(1), "exactly one refund in the ledger")
	}, NodeTimeout(3*time.Minute))
})
