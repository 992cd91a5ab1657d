package containers_test

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/network"

	"github.com/idemproof/idemproof/containers"
	"github.com/idemproof/idemproof/containers/proxyctr"
	"github.com/idemproof/idemproof/containers/referencectr"
	"github.com/idemproof/idemproof/internal/dockertest"
)

// pgAlias is PostgreSQL's name on a test network; storeDSN is how the reference server
// reaches it from inside that network (the host's published port is not visible there).
const (
	pgAlias  = "postgres"
	storeDSN = "postgres://idemproof:idemproof@" + pgAlias + ":5432/idemproof?sslmode=disable"
)

// newNetwork creates a network removed after the spec.
func newNetwork(ctx context.Context, opts ...network.NetworkCustomizer) *testcontainers.DockerNetwork {
	GinkgoHelper()
	nw, err := network.New(ctx, append([]network.NetworkCustomizer{network.WithLabels(containers.RunLabels())}, opts...)...)
	DeferCleanup(func(ctx SpecContext) {
		if nw != nil {
			Expect(nw.Remove(ctx)).To(Succeed())
		}
	}, NodeTimeout(time.Minute))
	Expect(err).NotTo(HaveOccurred(), "create network")
	return nw
}

// terminateAfterSpec registers removal of a container (and its volumes); it must be
// called before the start error is checked, so a half-started container goes too.
func terminateAfterSpec(ctr testcontainers.Container) {
	DeferCleanup(func(ctx SpecContext) {
		Expect(testcontainers.TerminateContainer(ctr, testcontainers.StopContext(ctx))).To(Succeed())
	}, NodeTimeout(time.Minute))
}

// startPostgres runs PostgreSQL on nw under pgAlias, its port published on 127.0.0.1.
func startPostgres(ctx context.Context, nw *testcontainers.DockerNetwork) *dockertest.Postgres {
	GinkgoHelper()
	return startPostgresOn(ctx, network.WithNetwork([]string{pgAlias}, nw))
}

// startPostgresOn runs PostgreSQL with the given network options (the first network
// carries the published port).
func startPostgresOn(ctx context.Context, networks ...testcontainers.ContainerCustomizer) *dockertest.Postgres {
	GinkgoHelper()
	By("starting PostgreSQL")
	pg, err := dockertest.StartPostgres(ctx, append(networks, containers.PublishOnLoopback("5432/tcp"))...)
	if pg != nil && pg.PostgresContainer != nil {
		terminateAfterSpec(pg.PostgresContainer)
	}
	Expect(err).NotTo(HaveOccurred())
	return pg
}

// startReference runs the reference server on nw under alias, on PostgreSQL, with the
// test hooks on. Extra options (crash exits, lock timeout, another network) come last.
func startReference(ctx context.Context, nw *testcontainers.DockerNetwork, alias string, opts ...testcontainers.ContainerCustomizer) *referencectr.Container {
	GinkgoHelper()
	By("starting the reference server " + alias)
	all := append([]testcontainers.ContainerCustomizer{
		network.WithNetwork([]string{alias}, nw),
		referencectr.WithStore(storeDSN),
		referencectr.WithTestHooks(),
	}, opts...)
	ref, err := referencectr.Run(ctx, dockertest.AppImage(), all...)
	if ref != nil {
		terminateAfterSpec(ref)
	}
	Expect(err).NotTo(HaveOccurred())
	return ref
}

// startProxy runs the fault proxy on nw in front of the given upstream aliases.
func startProxy(ctx context.Context, nw *testcontainers.DockerNetwork, seed int64, upstreams ...string) *proxyctr.Container {
	GinkgoHelper()
	By(fmt.Sprintf("starting the fault proxy in front of %v", upstreams))
	opts := []testcontainers.ContainerCustomizer{
		network.WithNetwork([]string{"faultproxy"}, nw),
		proxyctr.WithSeed(seed),
		// Large enough for the full-size storm: every attempt stays countable.
		proxyctr.WithJournalCapacity(100_000),
	}
	for _, u := range upstreams[1:] {
		opts = append(opts, proxyctr.WithUpstream("http://"+u+":8080"))
	}
	px, err := proxyctr.Run(ctx, dockertest.AppImage(), "http://"+upstreams[0]+":8080", opts...)
	if px != nil {
		terminateAfterSpec(px)
	}
	Expect(err).NotTo(HaveOccurred())
	return px
}

// referenceURL re-reads the published port: it changes on every restart.
func referenceURL(ctx context.Context, ref *referencectr.Container) string {
	GinkgoHelper()
	u, err := ref.URL(ctx)
	Expect(err).NotTo(HaveOccurred())
	return u
}

// restartPostgres stops PostgreSQL (fast shutdown: open transactions abort) and starts
// it again. The module's log wait passes at once on a restart — the old "ready" lines are
// still in the log — so readiness is a real connection on the new published port.
func restartPostgres(ctx context.Context, pg *dockertest.Postgres) {
	GinkgoHelper()
	stopPostgres(ctx, pg)
	startPostgresAgain(ctx, pg)
}

func stopPostgres(ctx context.Context, pg *dockertest.Postgres) {
	GinkgoHelper()
	By("stopping PostgreSQL")
	timeout := 10 * time.Second
	Expect(pg.Stop(ctx, &timeout)).To(Succeed())
}

func startPostgresAgain(ctx context.Context, pg *dockertest.Postgres) {
	GinkgoHelper()
	By("starting PostgreSQL again")
	Expect(pg.Start(ctx)).To(Succeed())
	Eventually(ctx, func() error {
		conn, err := connectPostgres(ctx, pg)
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		return conn.Ping(ctx)
	}).WithTimeout(60 * time.Second).WithPolling(200 * time.Millisecond).Should(Succeed())
}

// connectPostgres opens one connection on the CURRENT published port.
func connectPostgres(ctx context.Context, pg *dockertest.Postgres) (*pgx.Conn, error) {
	dsn, err := pg.ConnectionString(ctx, "sslmode=disable")
	if err != nil {
		return nil, fmt.Errorf("postgres dsn: %w", err)
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(cctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("connect postgres: %w", err)
	}
	return conn, nil
}

// awaitExit waits for a process that exits by itself (a crash hook) to be gone.
func awaitExit(ctx context.Context, ctr *testcontainers.DockerContainer) {
	GinkgoHelper()
	Eventually(ctx, func() (bool, error) {
		st, err := ctr.State(ctx)
		if err != nil {
			return false, err
		}
		return st.Running, nil
	}).WithTimeout(30*time.Second).WithPolling(100*time.Millisecond).Should(BeFalse(), "the process should have exited")
}
