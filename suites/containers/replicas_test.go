package containers_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/idemproof/idemproof/containers/referencectr"
	"github.com/idemproof/idemproof/faultproxy"
)

// Two replicas share one PostgreSQL; the proxy, like a retrying load balancer, delivers
// one request to both at the same moment. Only the database can keep them apart.
var _ = Describe("two reference replicas behind the proxy", Label("containers", "replicas", "level:safety"), func() {
	It("the request delivered to both at once: exactly one refund", func(ctx SpecContext) {
		nw := newNetwork(ctx)
		pg := startPostgres(ctx, nw)
		startReference(ctx, nw, "reference-1", referencectr.WithRetention(time.Hour))
		startReference(ctx, nw, "reference-2", referencectr.WithRetention(time.Hour))
		px := startProxy(ctx, nw, 1, "reference-1", "reference-2")
		ctl := proxyController(ctx, px)
		proxyURL, err := px.URL(ctx)
		Expect(err).NotTo(HaveOccurred())
		hc := newHTTPClient(15 * time.Second)
		order, key := fresh("order"), fresh("key")

		By("delivering one request to both replicas at once, its work held 300ms so the copies overlap")
		Expect(ctl.AddRule(ctx, faultproxy.Rule{
			Name:  "both-replicas",
			Match: faultproxy.Match{Method: "POST", Path: "/v1/refunds", Key: key},
			Fault: faultproxy.FaultSpec{Type: faultproxy.FaultDuplicate, Mode: "concurrent"},
			Count: 1,
		})).To(Succeed())
		first := postRefund(ctx, hc, proxyURL, key, order, map[string]string{"X-Test-Delay": "300ms"})
		Expect(first.Err).NotTo(HaveOccurred())
		Expect(first.Status).To(Or(beSuccess(), Equal(409)), "the client gets one copy's answer: %v", first)
		journal, err := ctl.Journal(ctx, faultproxy.JournalQuery{Key: key})
		Expect(err).NotTo(HaveOccurred())
		Expect(journal).To(HaveLen(1))
		Expect(journal[0].UpstreamCalls).To(Equal(2), "the proxy delivered the request twice")

		By("retrying through the proxy until the answer is the committed result")
		var retry answer
		Eventually(ctx, func() int {
			retry = postRefund(ctx, hc, proxyURL, key, order, nil)
			return retry.Status
		}).WithTimeout(30 * time.Second).WithPolling(200 * time.Millisecond).Should(beSuccess())
		Expect(retry.Replayed).To(BeTrue(), "the retry replays; it never executes again")

		Expect(dbRefundCount(ctx, pg, order)).To(Equal(1), "exactly one refund in PostgreSQL")
		Expect(ledgerCount(ctx, hc, proxyURL, order)).To(Equal(1), "exactly one refund in the ledger")
	}, NodeTimeout(3*time.Minute))
})
