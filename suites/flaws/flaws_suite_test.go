package flaws_test

import (
	"os"
	"strconv"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/idemproof/idemproof/internal/specreport"
	"github.com/idemproof/idemproof/reference"
)

// The flaw list shapes the spec tree, so it is loaded before RunSpecs.
var (
	allFlaws []reference.Flaw
	fullRuns bool
)

func TestFlaws(t *testing.T) {
	allFlaws = reference.Flaws()
	fullRuns, _ = strconv.ParseBool(os.Getenv("IDEMPROOF_FLAWS_FULL"))
	RegisterFailHandler(Fail)
	RunSpecs(t, "Flaws Suite")
}

var _ = ReportAfterSuite("spec counts", specreport.Save)
