package retrypolicy_test

import (
	"os/exec"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/idemproof/idemproof/clientcheck"
)

// The README's shell clients, run the way `idemproof client-check [--profile P] --
// <script>` runs them: a child process that gets the environment, with curl doing the
// HTTP, against the embedded reference and against the payments API's profile.
var _ = Describe("the example shell clients", Label("client-side", "examples"), func() {
	BeforeEach(func() {
		if _, err := exec.LookPath("curl"); err != nil {
			Skip("curl is not installed: the example shell clients need it")
		}
	})

	run := func(ctx SpecContext, t target, script string) *clientcheck.Result {
		GinkgoHelper()
		res, err := clientcheck.Run(ctx, clientcheck.Config{Profile: profileFor(t), Seed: 1, Timeout: time.Minute},
			clientcheck.Command([]string{script}, GinkgoWriter, GinkgoWriter))
		Expect(err).NotTo(HaveOccurred())
		return res
	}

	DescribeTable("passes good.sh",
		func(ctx SpecContext, t target) {
			res := run(ctx, t, "../../examples/clients/good.sh")
			Expect(findingIDs(res)).To(BeEmpty(), explain(res))
			Expect(res.Observation.Ledger).To(Equal(map[string]int{"order-1": 1, "order-2": 1, "order-3": 1}))
		},
		onEveryTarget("good.sh", Label("good")),
	)

	DescribeTable("catches key-per-attempt.sh as a key minted per attempt",
		func(ctx SpecContext, t target) {
			res := run(ctx, t, "../../examples/clients/key-per-attempt.sh")
			Expect(findingIDs(res)).To(ContainElements(clientcheck.IDKeyPerAttempt, clientcheck.IDOneEffect), explain(res))
		},
		onEveryTarget("key-per-attempt.sh", Label("bad")),
	)
})

// resume.sh under --restart: killed (its whole process group) after each lost response
// and started again with the same state folder.
var _ = Describe("the example shell client across restarts", Label("client-side", "examples", "restart"), func() {
	BeforeEach(func() {
		if _, err := exec.LookPath("curl"); err != nil {
			Skip("curl is not installed: the example shell clients need it")
		}
	})

	run := func(ctx SpecContext, t target, argv ...string) *clientcheck.Result {
		GinkgoHelper()
		res, err := clientcheck.Run(ctx, clientcheck.Config{Profile: profileFor(t), Seed: 1, Timeout: time.Minute, Restart: true},
			clientcheck.Command(argv, GinkgoWriter, GinkgoWriter))
		Expect(err).NotTo(HaveOccurred())
		return res
	}

	DescribeTable("passes resume.sh: the key kept in the state folder before the first attempt",
		func(ctx SpecContext, t target) {
			res := run(ctx, t, "../../examples/clients/resume.sh")
			Expect(findingIDs(res)).To(BeEmpty(), explain(res))
			Expect(res.Observation.Restarts).To(HaveLen(3))
			Expect(res.Observation.Ledger).To(Equal(map[string]int{"order-1": 1, "order-2": 1, "order-3": 1}))
		},
		onEveryTarget("resume.sh", Label("good")),
	)

	DescribeTable("catches resume.sh --start-time-key: the key did not survive the restart",
		func(ctx SpecContext, t target) {
			res := run(ctx, t, "../../examples/clients/resume.sh", "--start-time-key")
			Expect(findingIDs(res)).To(ConsistOf(clientcheck.IDKeySurvives), explain(res))
		},
		onEveryTarget("resume.sh --start-time-key", Label("bad")),
	)
})
