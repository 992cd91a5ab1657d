package retrypolicy_test

import (
	"context"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/idemproof/idemproof/clientcheck"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/report"
	"github.com/idemproof/idemproof/suites/retrypolicy"
	"github.com/idemproof/idemproof/verdict"
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

// target is where a spec's client goes: the embedded reference refund server, or the
// payments API (payments_api_test.go), reached only through its profile.
type target string

const (
	onReference target = "reference"
	onPayments  target = "payments-api"
)

var everyTarget = []target{onReference, onPayments}

// profileFor starts the target's server for this spec and returns its profile (nil for
// the embedded reference, which client-check starts itself).
func profileFor(t target) *profile.Profile {
	GinkgoHelper()
	if t == onReference {
		return nil
	}
	srv := startPaymentsAPI()
	DeferCleanup(srv.Close)
	p, err := profile.Load("testdata/payments-api.yaml")
	Expect(err).NotTo(HaveOccurred())
	p.BaseURL = srv.URL
	return p
}

// checkClient runs one client under client-check against the target with a fixed seed.
func checkClient(ctx SpecContext, t target, faults string, client clientcheck.ClientFunc) *clientcheck.Result {
	GinkgoHelper()
	By("running the client against " + string(t) + " behind faults " + orDefault(faults))
	res, err := clientcheck.Run(ctx, clientcheck.Config{Profile: profileFor(t), FaultSpec: faults, Seed: 42, Timeout: time.Minute}, client)
	Expect(err).NotTo(HaveOccurred())
	return res
}

// onEveryTarget is one table entry per target: description, labels, then the
// parameters after the target.
func onEveryTarget(description string, labels Labels, params ...any) []TableEntry {
	var out []TableEntry
	for _, t := range everyTarget {
		args := []any{labels, Label("target:" + string(t)), NodeTimeout(time.Minute), t}
		out = append(out, Entry(description+" @ "+string(t), append(args, params...)...))
	}
	return out
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
			if r.Verdict == verdict.Fail && r.Evidence.Record != nil {
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
		func(ctx SpecContext, t target, faults string, client clientcheck.ClientFunc) {
			res := checkClient(ctx, t, faults, client)
			Expect(findingIDs(res)).To(BeEmpty(), explain(res))
			By("every order refunded exactly once, or honestly reported failed")
			for _, order := range []string{"order-1", "order-2", "order-3"} {
				Expect(res.Observation.Ledger).To(HaveKey(order))
			}
			Expect(res.Observation.Outcomes).To(HaveLen(retrypolicy.Orders))
		},
		onEveryTarget("correct harness, default faults", Label("good"), defaultFaults, clientcheck.ClientFunc(retrypolicy.CorrectHarness)),
		onEveryTarget("correct harness, 422", Label("good"), faults422, clientcheck.ClientFunc(retrypolicy.CorrectHarness)),
		onEveryTarget("correct harness, 409 with Retry-After", Label("good"), faults409, clientcheck.ClientFunc(retrypolicy.CorrectHarness)),
		onEveryTarget("retryhttp, default faults", Label("good", "retryhttp"), defaultFaults, clientcheck.ClientFunc(retrypolicy.RetryHTTP)),
		onEveryTarget("retryhttp, 422", Label("good", "retryhttp"), faults422, clientcheck.ClientFunc(retrypolicy.RetryHTTP)),
		onEveryTarget("retryhttp, 409 with Retry-After", Label("good", "retryhttp"), faults409, clientcheck.ClientFunc(retrypolicy.RetryHTTP)),
	)

	DescribeTable("counts the correct harness's effects: one per order under the default faults",
		func(ctx SpecContext, t target) {
			res := checkClient(ctx, t, defaultFaults, retrypolicy.CorrectHarness)
			Expect(res.Observation.Ledger).To(Equal(map[string]int{"order-1": 1, "order-2": 1, "order-3": 1}), explain(res))
			By("every first attempt was faulted after the commit, so every order was retried")
			Expect(len(res.Observation.Attempts)).To(BeNumerically(">=", 2*retrypolicy.Orders))
			By("each order was dealt one of the three kinds, and each kind hit an order")
			kinds := map[string]int{}
			for _, a := range res.Observation.Schedule.Assignments {
				kinds[a.Kind]++
			}
			Expect(kinds).To(Equal(map[string]int{"hold": 1, "reset": 1, "503": 1}))
		},
		onEveryTarget("correct harness", Label("good")),
	)

	DescribeTable("a bad retry policy is caught with its named finding",
		func(ctx SpecContext, t target, faults string, client clientcheck.ClientFunc, finding string) {
			res := checkClient(ctx, t, faults, client)
			Expect(findingIDs(res)).To(ContainElement(finding), explain(res))
			failed := res.Report.Results[indexOf(res, finding)]
			Expect(failed.Verdict).To(Equal(verdict.Fail))
			Expect(failed.Evidence.Categories).NotTo(BeEmpty())
			By("the failing operation's attempts travel with the finding")
			if failed.Evidence.Record != nil {
				Expect(failed.Evidence.Record.History).NotTo(BeEmpty())
			}
		},
		onEveryTarget("key minted inside the retry closure", Label("bad"), defaultFaults,
			clientcheck.ClientFunc(retrypolicy.KeyInsideRetryClosure), clientcheck.IDKeyPerAttempt),
		onEveryTarget("key minted inside the retry closure doubles the effects", Label("bad"), defaultFaults,
			clientcheck.ClientFunc(retrypolicy.KeyInsideRetryClosure), clientcheck.IDOneEffect),
		onEveryTarget("key from a timestamp", Label("bad"), defaultFaults,
			retrypolicy.KeyFromTimestamp(frozen), clientcheck.IDKeySharedAcross),
		onEveryTarget("no key", Label("bad"), defaultFaults,
			clientcheck.ClientFunc(retrypolicy.NoKey), clientcheck.IDNoKey),
		onEveryTarget("retries a 422 unchanged", Label("bad"), faults422,
			clientcheck.ClientFunc(retrypolicy.Retries422), clientcheck.ID422Retried),
		onEveryTarget("ignores 409's Retry-After", Label("bad"), faults409,
			clientcheck.ClientFunc(retrypolicy.Ignores409RetryAfter), clientcheck.ID409Hammered),
	)

	It("judges the payments API by its classes: the 422 fault sends its mismatch status, 400", Label("bad", "target:payments-api"), func(ctx SpecContext) {
		res := checkClient(ctx, onPayments, faults422, retrypolicy.Retries422)
		var mismatch []string
		for _, op := range []string{"order-1", "order-2", "order-3"} {
			for _, a := range res.Attempts(op) {
				if a.Class == "mismatch" {
					mismatch = append(mismatch, a.Delivered)
				}
			}
		}
		Expect(mismatch).NotTo(BeEmpty(), explain(res))
		Expect(mismatch).To(HaveEach("400"), "the 422 fault sends the profile's mismatch status")
	}, NodeTimeout(time.Minute))

	It("reports an operation the client called failed while it committed", Label("bad"), func(ctx SpecContext) {
		giveUp := func(ctx context.Context, env clientcheck.Env) error {
			// One attempt, and a lost response taken for a failure: the classic lie.
			quiet := env
			quiet.OutcomeFile = env.OutcomeFile + ".ignored"
			if err := retrypolicy.CorrectHarness(ctx, quiet); err != nil {
				return err
			}
			w := clientcheck.NewOutcomeWriter(env.OutcomeFile)
			return w.Write(clientcheck.Outcome{Operation: "order-1", Outcome: clientcheck.OutcomeFailed})
		}
		res := checkClient(ctx, onReference, defaultFaults, giveUp)
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
