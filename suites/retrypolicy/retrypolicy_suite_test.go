package retrypolicy_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/idemproof/idemproof/internal/specreport"
)

func TestRetryPolicy(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Retry policy (client side)")
}

var _ = ReportAfterSuite("spec counts", specreport.Save)
