package containers_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/testcontainers/testcontainers-go/network"

	"github.com/idemproof/idemproof/containers/referencectr"
	"github.com/idemproof/idemproof/internal/dockertest"
)

// While PostgreSQL is gone the server must say so (a 5xx the client can retry), never
// pretend; once it is back every retried operation completes exactly once.
var _ = Describe("PostgreSQL lost in the middle of operations", Label("containers", "outage", "level:safety"), func() {
	It("restarted: clients see 5xx, then succeed; no duplicate, nothing lost", func(ctx SpecContext) {
		nw := newNetwork(ctx)
		pg := startPostgres(ctx, nw)
		ref := startReference(ctx, nw, "reference",
			referencectr.WithRetention(time.Hour), referencectr.WithLockTimeout(2*time.Second))
		base := referenceURL(ctx, ref)
		hc := newHTTPClient(30 * time.Second)

		load := startLoad(ctx, hc, base, 4, 10)
		load.awaitCompleted(ctx, 8) // the outage lands in the middle of the operations

		stopPostgres(ctx, pg)
		outage := outageAttempt(ctx, hc, base)
		startPostgresAgain(ctx, pg)

		verifyRecovery(ctx, hc, base, pg, outage, load)
	}, NodeTimeout(5*time.Minute))

	It("cut off by a network disconnect, then reconnected: clients see 5xx, then succeed; no duplicate, nothing lost", func(ctx SpecContext) {
		// Two networks: published ports live on "front"; only "db" carries the name
		// "postgres". "db" is internal, so Docker never makes it the gateway network that
		// publishes ports: disconnecting it cuts the store and nothing else.
		front := newNetwork(ctx)
		db := newNetwork(ctx, network.WithInternal())
		pg := startPostgresOn(ctx,
			network.WithNetwork([]string{"postgres-front"}, front), network.WithNetwork([]string{pgAlias}, db))
		ref := startReference(ctx, front, "reference",
			network.WithNetwork([]string{"reference"}, db),
			referencectr.WithRetention(time.Hour), referencectr.WithLockTimeout(2*time.Second))
		base := referenceURL(ctx, ref)
		hc := newHTTPClient(30 * time.Second)

		load := startLoad(ctx, hc, base, 4, 10)
		load.awaitCompleted(ctx, 8)

		By("disconnecting the reference from PostgreSQL's network")
		docker := dockerClient(ctx)
		_, err := docker.NetworkDisconnect(ctx, db.ID, networkDisconnectOptions(ref.GetContainerID()))
		Expect(err).NotTo(HaveOccurred())
		outage := outageAttempt(ctx, hc, base)
		By("reconnecting it")
		_, err = docker.NetworkConnect(ctx, db.ID, networkConnectOptions(ref.GetContainerID()))
		Expect(err).NotTo(HaveOccurred())

		verifyRecovery(ctx, hc, base, pg, outage, load)
	}, NodeTimeout(5*time.Minute))
})

// outageAttempt sends one keyed refund while the store is unreachable and expects a
// clear server error: a complete 5xx response, not a hang, a reset or a success.
func outageAttempt(ctx context.Context, hc *http.Client, base string) opResult {
	GinkgoHelper()
	By("sending a refund while the store is unreachable")
	op := opResult{Order: fresh("order"), Key: fresh("key"), Statuses: map[int]int{}}
	op.Final = postRefund(ctx, hc, base, op.Key, op.Order, nil)
	op.Attempts = 1
	Expect(op.Final.Err).NotTo(HaveOccurred(), "a complete response is expected, not a transport error")
	Expect(op.Final.Status).To(And(BeNumerically(">=", 500), BeNumerically("<", 600)), "a retryable server error, got %v", op.Final)
	Expect(op.Final.Body).NotTo(BeEmpty(), "the error says what happened")
	fmt.Fprintf(GinkgoWriter, "during the outage: %v\n", op.Final)
	return op
}

// verifyRecovery retries the outage's operation with its key, waits for the background
// load, and counts: every operation exactly one refund, in PostgreSQL and the ledger.
func verifyRecovery(ctx context.Context, hc *http.Client, base string, pg *dockertest.Postgres, outage opResult, load *load) {
	GinkgoHelper()
	By("retrying the failed operation with the same key once the store is back")
	// 409 is possible while the failed attempt's lock has not gone stale yet. The bound is
	// the retry policy's: how long recovery takes is the machine's speed, not the server's.
	Eventually(ctx, func() int {
		return postRefund(ctx, hc, base, outage.Key, outage.Order, nil).Status
	}).WithTimeout(defaultRetryPolicy.Budget).WithPolling(200 * time.Millisecond).Should(beSuccess())

	results := load.wait()
	orders := []string{outage.Order}
	for _, r := range results {
		Expect(r.OK()).To(BeTrue(), "operation %s ended with %v after %d attempts %v", r.Order, r.Final, r.Attempts, r.Statuses)
		orders = append(orders, r.Order)
	}
	By("counting refunds in PostgreSQL and in the ledger")
	counts, err := dbRefundCounts(ctx, pg, orders)
	Expect(err).NotTo(HaveOccurred())
	wantOne := map[string]int{}
	for _, o := range orders {
		wantOne[o] = 1
	}
	Expect(counts).To(Equal(wantOne), "no duplicate, nothing lost")
	for _, o := range orders {
		Expect(ledgerCount(ctx, hc, base, o)).To(Equal(wantOne[o]), "ledger of %s", o)
	}
}

// load is a few clients performing refunds with the correct retry policy in the
// background, bounded in operations.
type load struct {
	wg        sync.WaitGroup
	mu        sync.Mutex
	results   []opResult
	completed chan struct{}
}

// startLoad runs clients×perClient logical refunds against base.
func startLoad(ctx context.Context, hc *http.Client, base string, clients, perClient int) *load {
	By("starting background refunds with a correct retry policy")
	l := &load{completed: make(chan struct{}, clients*perClient)}
	for range clients {
		l.wg.Add(1)
		go func() {
			defer GinkgoRecover()
			defer l.wg.Done()
			for range perClient {
				r := defaultRetryPolicy.refund(ctx, hc, func() string { return base }, fresh("order"))
				l.mu.Lock()
				l.results = append(l.results, r)
				l.mu.Unlock()
				l.completed <- struct{}{}
			}
		}()
	}
	return l
}

// awaitCompleted blocks until n operations have finished (an event, not a sleep).
func (l *load) awaitCompleted(ctx context.Context, n int) {
	GinkgoHelper()
	for range n {
		select {
		case <-l.completed:
		case <-ctx.Done():
			Fail("background refunds did not progress")
		}
	}
}

func (l *load) wait() []opResult {
	l.wg.Wait()
	return l.results
}
