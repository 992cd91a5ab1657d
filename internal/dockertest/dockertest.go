// Package dockertest is the one place that prepares testcontainers-go for this machine
// and decides what a test does when Docker or a locally built image is missing.
//
// Images are never pulled: ci/images/build makes them. Outside CI a missing engine or
// image skips the test with the command that fixes it; with CI=true it fails, so a CI
// run can never pass by skipping its container tests.
package dockertest

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/idemproof/idemproof/containers"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/modules/postgres"
)

// Image names, overridable so users with a registry can use official images.
const (
	DefaultPostgresImage = "idemproof/postgres:15-local"
	DefaultAppImage      = "idemproof/idemproof:dev"
)

// PostgresImage is the PostgreSQL image the suites start ($IDEMPROOF_POSTGRES_IMAGE).
func PostgresImage() string { return envOr("IDEMPROOF_POSTGRES_IMAGE", DefaultPostgresImage) }

// AppImage is the FROM-scratch image holding the idemproof binary ($IDEMPROOF_IMAGE).
func AppImage() string { return envOr("IDEMPROOF_IMAGE", DefaultAppImage) }

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

var setupOnce sync.Once

// Setup configures testcontainers-go before its first call: no Ryuk reaper (its image
// cannot be pulled here; ci/test removes its own run's leftovers by containers.RunLabel),
// and published ports reached
// on 127.0.0.1. Without the override, inside a container (this machine has /.dockerenv)
// testcontainers dials the bridge gateway, which hangs. Idempotent.
func Setup() {
	setupOnce.Do(func() {
		os.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true")
		os.Setenv("TESTCONTAINERS_HOST_OVERRIDE", "127.0.0.1")
	})
}

// InCI reports whether the run is in CI, where missing Docker fails instead of skipping.
func InCI() bool {
	v, _ := strconv.ParseBool(os.Getenv("CI"))
	return v
}

// Check returns nil when the Docker engine answers and every image exists locally;
// otherwise an error that says what to run.
func Check(ctx context.Context, images ...string) error {
	Setup()
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return fmt.Errorf("docker engine unavailable: %w", err)
	}
	defer cli.Close()
	if _, err := cli.Ping(ctx, pingOptions()); err != nil {
		return fmt.Errorf("docker engine unavailable: %w", err)
	}
	for _, img := range images {
		if _, err := cli.ImageInspect(ctx, img); err != nil {
			return fmt.Errorf("image %s is not built (no registry is used; run ci/images/build): %w", img, err)
		}
	}
	return nil
}

// TB is what Require and RunPostgres need of a test: a *testing.T or *testing.B, or a
// Ginkgo suite's GinkgoT() (whose Fatalf fails the spec, Skipf skips it and Cleanup
// becomes a DeferCleanup of the current node), so every suite shares this one policy.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
	Skipf(format string, args ...any)
	Cleanup(func())
}

var _ TB = (testing.TB)(nil)

// Require skips (locally) or fails (CI=true) tb when Check fails.
func Require(tb TB, images ...string) {
	tb.Helper()
	if err := Check(context.Background(), images...); err != nil {
		if InCI() {
			tb.Fatalf("CI=true and containers are required: %v", err)
		}
		tb.Skipf("skipped: %v", err)
	}
}

// Postgres is a running PostgreSQL container and the DSN to reach it on 127.0.0.1.
type Postgres struct {
	*postgres.PostgresContainer
	DSN string
}

// StartPostgres starts the locally built PostgreSQL image with a deadline. Like
// testcontainers modules, it returns the container even with an error, so the caller
// registers cleanup before checking the error.
func StartPostgres(ctx context.Context, opts ...testcontainers.ContainerCustomizer) (*Postgres, error) {
	Setup()
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	all := append([]testcontainers.ContainerCustomizer{
		containers.WithRunLabel(),
		postgres.WithDatabase("idemproof"),
		postgres.WithUsername("idemproof"),
		postgres.WithPassword("idemproof"),
		postgres.BasicWaitStrategies(),
	}, opts...)
	ctr, err := postgres.Run(ctx, PostgresImage(), all...)
	if ctr == nil {
		return nil, fmt.Errorf("start postgres: %w", err)
	}
	pg := &Postgres{PostgresContainer: ctr}
	if err != nil {
		return pg, fmt.Errorf("start postgres: %w", err)
	}
	pg.DSN, err = ctr.ConnectionString(ctx, "sslmode=disable")
	if err != nil {
		return pg, fmt.Errorf("postgres dsn: %w", err)
	}
	return pg, nil
}

// RunPostgres is StartPostgres for tests and specs: Require applied first, cleanup
// registered before the error is checked, failure fatal.
func RunPostgres(tb TB, opts ...testcontainers.ContainerCustomizer) *Postgres {
	tb.Helper()
	Require(tb, PostgresImage())
	pg, err := StartPostgres(context.Background(), opts...)
	if pg != nil && pg.PostgresContainer != nil {
		tb.Cleanup(func() {
			if err := testcontainers.TerminateContainer(pg.PostgresContainer); err != nil {
				tb.Fatalf("terminate postgres: %v", err)
			}
		})
	}
	if err != nil {
		tb.Fatalf("%v", err)
	}
	return pg
}

func pingOptions() client.PingOptions { return client.PingOptions{} }
