package retrypolicy_test

import (
	"context"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/idemproof/idemproof/clientcheck"
	"github.com/idemproof/idemproof/scenarios"
	"github.com/idemproof/idemproof/scenarios/report"
	"github.com/idemproof/idemproof/suites/retrypolicy"
)

// Fault schedules: the default (hold one, reset some, 503 the rest: every fault lands
// after the commit), and the two that make the server answer 422 and 409.
const (
	defaultFaults = ""
	faults422     = "422"
	faults409     = "409=1"
)

// frozen is a harness clock stopped at one instant: timestamp keys collide for certain.
func frozen() time.Time { return time.Date(2026, 5, 4, 12, 0, 0, 0, time.UTC) }

// checkClient runs one client under client-check with a fixed seed.
func checkClient(ctx SpecContext, faults string, client clientcheck.ClientFunc) *clientcheck.Result {
	GinkgoHelper()
	By("running the client against the reference server behind faults " + orDefault(faults))
	res, err := clientcheck.Run(ctx, clientcheck.Config{FaultSpec: faults, Seed: 42, Timeout: time.Minute}, client)
	Expect(err).NotTo(HaveOccurred())
	return res
}

// findingIDs are the IDs of the checks that failed.
func findingIDs(res *clientcheck.Result) []string {
	var ids []string
	for _, f := range res.Findings() {
		ids = append(ids, f.ScenarioID)
	}
	return ids
}

// explain renders the run as the console does, timelines included, for failure messages.
func explain(res *clientcheck.Result) func() string {
	return func() string {
		var b strings.Builder
		for _, r := range res.Report.Results {
			report.WriteLine(&b, r)
			if r.Verdict == scenarios.Fail && r.Evidence.Record != nil {
				b.WriteString(report.Timeline(r.Evidence.Record))
			}
		}
		return b.String()
	}
}

func orDefault(faults string) string {
	if faults == "" {
		return clientcheck.DefaultFaultSpec
	}
	return faults
}

var _ = Describe("client-check", Label("client-side"), func() {
	DescribeTable("a correct retry policy passes",
		func(ctx SpecContext, faults string, client clientcheck.ClientFunc) {
			res := checkClient(ctx, faults, client)
			Expect(findingIDs(res)).To(BeEmpty(), explain(res))
			By("every order refunded exactly once, or honestly reported failed")
			for _, order := range []string{"order-1", "order-2", "order-3"} {
				Expect(res.Observation.Ledger).To(HaveKey(order))
			}
			Expect(res.Observation.Outcomes).To(HaveLen(retrypolicy.Orders))
		},
		Entry("correct harness, default faults", Label("good"), defaultFaults, clientcheck.ClientFunc(retrypolicy.CorrectHarness), NodeTimeout(time.Minute)),
		Entry("correct harness, 422", Label("good"), faults422, clientcheck.ClientFunc(retrypolicy.CorrectHarness), NodeTimeout(time.Minute)),
		Entry("correct harness, 409 with Retry-After", Label("good"), faults409, clientcheck.ClientFunc(retrypolicy.CorrectHarness), NodeTimeout(time.Minute)),
		Entry("retryhttp, default faults", Label("good", "retryhttp"), defaultFaults, clientcheck.ClientFunc(retrypolicy.RetryHTTP), NodeTimeout(time.Minute)),
		Entry("retryhttp, 422", Label("good", "retryhttp"), faults422, clientcheck.ClientFunc(retrypolicy.RetryHTTP), NodeTimeout(time.Minute)),
		Entry("retryhttp, 409 with Retry-After", Label("good", "retryhttp"), faults409, clientcheck.ClientFunc(retrypolicy.RetryHTTP), NodeTimeout(time.Minute)),
	)

	It("counts the correct harness's effects: one refund per order under the default faults", Label("good"), func(ctx SpecContext) {
		res := checkClient(ctx, defaultFaults, retrypolicy.CorrectHarness)
		Expect(res.Observation.Ledger).To(Equal(map[string]int{"order-1": 1, "order-2": 1, "order-3": 1}), explain(res))
		By("every first attempt was faulted after the commit, so every order was retried")
		Expect(len(res.Observation.Attempts)).To(BeNumerically(">=", 2*retrypolicy.Orders))
	}, NodeTimeout(time.Minute))

	DescribeTable("a bad retry policy is caught with its named finding",
		func(ctx SpecContext, faults string, client clientcheck.ClientFunc, finding string) {
			res := checkClient(ctx, faults, client)
			Expect(findingIDs(res)).To(ContainElement(finding), explain(res))
			failed := res.Report.Results[indexOf(res, finding)]
			Expect(failed.Verdict).To(Equal(scenarios.Fail))
			Expect(failed.Evidence.Categories).NotTo(BeEmpty())
		},
		Entry("key minted inside the retry closure", Label("bad"), defaultFaults,
			clientcheck.ClientFunc(retrypolicy.KeyInsideRetryClosure), clientcheck.IDKeyPerAttempt, NodeTimeout(time.Minute)),
		Entry("key minted inside the retry closure doubles refunds", Label("bad"), defaultFaults,
			clientcheck.ClientFunc(retrypolicy.KeyInsideRetryClosure), clientcheck.IDOneEffect, NodeTimeout(time.Minute)),
		Entry("key from a timestamp", Label("bad"), defaultFaults,
			retrypolicy.KeyFromTimestamp(frozen), clientcheck.IDKeySharedAcross, NodeTimeout(time.Minute)),
		Entry("no key", Label("bad"), defaultFaults,
			clientcheck.ClientFunc(retrypolicy.NoKey), clientcheck.IDNoKey, NodeTimeout(time.Minute)),
		Entry("retries a 422 unchanged", Label("bad"), faults422,
			clientcheck.ClientFunc(retrypolicy.Retries422), clientcheck.ID422Retried, NodeTimeout(time.Minute)),
		Entry("ignores 409's Retry-After", Label("bad"), faults409,
			clientcheck.ClientFunc(retrypolicy.Ignores409RetryAfter), clientcheck.ID409Hammered, NodeTimeout(time.Minute)),
	)

	It("reports an operation the client called failed while it committed", Label("bad"), func(ctx SpecContext) {
		giveUp := func(ctx context.Context, env clientcheck.Env) error {
			// One attempt, and a lost response taken for a failure: the classic lie.
			if err := retrypolicy.CorrectHarness(ctx, clientcheck.Env{BaseURL: env.BaseURL, KeyHeader: env.KeyHeader, OutcomeFile: env.OutcomeFile + ".ignored"}); err != nil {
				return err
			}
			w := clientcheck.NewOutcomeWriter(env.OutcomeFile)
			return w.Write(clientcheck.Outcome{Operation: "order-1", Outcome: clientcheck.OutcomeFailed})
		}
		res := checkClient(ctx, defaultFaults, giveUp)
		Expect(findingIDs(res)).To(ConsistOf(clientcheck.IDUnknownAsFailed), explain(res))
	}, NodeTimeout(time.Minute))
})

func indexOf(res *clientcheck.Result, id string) int {
	for i, r := range res.Report.Results {
		if r.ScenarioID == id {
			return i
		}
	}
	Fail("no result " + id)
	return -1
}
