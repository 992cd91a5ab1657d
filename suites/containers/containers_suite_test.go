// Package containers_test runs idemproof's real processes in containers on a real
// PostgreSQL: the reference server is killed mid-request, PostgreSQL is restarted and cut
// off, two replicas race behind the fault proxy, the whole catalogue runs through the
// containerised proxy, and a bounded fault storm must lose and duplicate nothing.
//
// Every check counts side effects exactly, in PostgreSQL itself and through the ledger
// endpoint. Images are built locally (ci/images/build); nothing is pulled. Without Docker
// or the images the suite skips locally and FAILS under CI=true (internal/dockertest).
// Every container and network is removed by DeferCleanup, registered before the error
// check.
package containers_test

import (
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/idemproof/idemproof/internal/dockertest"
	"github.com/idemproof/idemproof/internal/specreport"
)

func TestContainers(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "containers suite")
}

var _ = ReportAfterSuite("spec counts", specreport.Save)

var _ = BeforeSuite(func(ctx SpecContext) {
	dockertest.Require(GinkgoT(), dockertest.PostgresImage(), dockertest.AppImage())
}, NodeTimeout(30*time.Second))
