package conformance_test

import (
	"flag"
	"os"
	"strconv"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/idemproof/idemproof/internal/specreport"
	"github.com/idemproof/idemproof/scenarios"
)

var profileFlag = flag.String("profile", "", "target profile (YAML file or built-in name); default $IDEMPROOF_PROFILE, else the embedded reference")

// The catalogue shapes the spec tree, so it is loaded before RunSpecs.
var (
	catalogue []scenarios.Scenario
	strict    bool
)

func TestConformance(t *testing.T) {
	catalogue = scenarios.Catalogue()
	strict, _ = strconv.ParseBool(os.Getenv("IDEMPROOF_STRICT"))
	RegisterFailHandler(Fail)
	RunSpecs(t, "Conformance Suite")
}

var _ = ReportAfterSuite("spec counts", specreport.Save)

// targetProfile is the -profile flag, else $IDEMPROOF_PROFILE; "" means the embedded
// reference.
func targetProfile() string {
	if *profileFlag != "" {
		return *profileFlag
	}
	return os.Getenv("IDEMPROOF_PROFILE")
}
