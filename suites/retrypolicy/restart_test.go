package retrypolicy_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/idemproof/idemproof/clientcheck"
	"github.com/idemproof/idemproof/suites/retrypolicy"
	"github.com/idemproof/idemproof/verdict"
)

// checkRestarted runs one client under client-check with restarts: after each
// operation's lost response (restartAll), or for the operations dealt the restart kind.
func checkRestarted(ctx SpecContext, t target, faults string, restartAll bool, client clientcheck.ClientFunc) *clientcheck.Result {
	GinkgoHelper()
	By("running the client against " + string(t) + " behind faults " + orDefault(faults) + ", killed and restarted after lost responses")
	res, err := clientcheck.Run(ctx, clientcheck.Config{Profile: profileFor(t), FaultSpec: faults, Seed: 42, Timeout: time.Minute, Restart: restartAll}, client)
	Expect(err).NotTo(HaveOccurred())
	return res
}

func verdictOf(res *clientcheck.Result, id string) verdict.Verdict {
	GinkgoHelper()
	return res.Report.Results[indexOf(res, id)].Verdict
}

var _ = Describe("client-check --restart: the key survives the client", Label("client-side", "restart"), func() {
	DescribeTable("a client that keeps its pending operation and key in the state folder passes",
		func(ctx SpecContext, t target, faults string, restartAll bool, restarts int) {
			res := checkRestarted(ctx, t, faults, restartAll, retrypolicy.ResumesFromStateDir)
			Expect(findingIDs(res)).To(BeEmpty(), explain(res))
			Expect(res.Observation.Restarts).To(HaveLen(restarts))
			Expect(verdictOf(res, clientcheck.IDKeySurvives)).To(Equal(verdict.Pass), explain(res))
			By("one refund per order across the restarts")
			Expect(res.Observation.Ledger).To(Equal(map[string]int{"order-1": 1, "order-2": 1, "order-3": 1}), explain(res))
		},
		onEveryTarget("restart after every lost response", Label("good"), defaultFaults, true, retrypolicy.Orders),
		onEveryTarget("the restart fault kind", Label("good"), "restart", false, retrypolicy.Orders),
	)

	DescribeTable("a client that derives its key from its process start time is caught",
		func(ctx SpecContext, t target) {
			res := checkRestarted(ctx, t, defaultFaults, true, retrypolicy.KeyFromStartTime)
			By("one cause, one finding: the key did not survive, with the duplicates under it")
			Expect(findingIDs(res)).To(ConsistOf(clientcheck.IDKeySurvives), explain(res))
			failed := res.Report.Results[indexOf(res, clientcheck.IDKeySurvives)]
			Expect(failed.Evidence.Categories).To(HaveKeyWithValue("key-changed-across-restart", retrypolicy.Orders))
			Expect(failed.Evidence.Record).NotTo(BeNil())
			By("each restarted order executed twice: once per key")
			Expect(res.Observation.Ledger).To(Equal(map[string]int{"order-1": 2, "order-2": 2, "order-3": 2}), explain(res))
		},
		onEveryTarget("key from the start time, restarted", Label("bad")),
	)

	DescribeTable("without restarts the start-time key looks correct: only a restart shows it",
		func(ctx SpecContext, t target) {
			res := checkClient(ctx, t, defaultFaults, retrypolicy.KeyFromStartTime)
			Expect(findingIDs(res)).To(BeEmpty(), explain(res))
			for _, r := range res.Report.Results {
				Expect(r.ScenarioID).NotTo(Equal(clientcheck.IDKeySurvives), "the restart check judges only runs with restarts")
			}
		},
		onEveryTarget("key from the start time, one run", Label("bad")),
	)
})
