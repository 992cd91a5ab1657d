// Package specreport lets ci/test count Ginkgo specs next to plain Go tests. `go test
// -json` sees a Ginkgo suite as one Go test; each suite's bootstrap therefore writes its
// spec counts to $IDEMPROOF_SPEC_REPORT_DIR, and ci/test adds them up. Use it in every
// *_suite_test.go:
//
//	var _ = ReportAfterSuite("spec counts", specreport.Save)
package specreport

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
)

// EnvDir names the folder the counts are written to; unset means nothing is written.
const EnvDir = "IDEMPROOF_SPEC_REPORT_DIR"

// Counts is one suite's result as ci/test reads it.
type Counts struct {
	SuitePath   string   `json:"suite_path"` // absolute folder of the suite's package
	Description string   `json:"description"`
	Passed      int      `json:"passed"`
	Failed      int      `json:"failed"`
	Skipped     int      `json:"skipped"`
	FailedSpecs []string `json:"failed_specs,omitempty"`
}

// Save writes the report's counts; it is a ReportAfterSuite body.
func Save(r ginkgo.Report) {
	dir := os.Getenv(EnvDir)
	if dir == "" {
		return
	}
	c := Count(r)
	sum := sha256.Sum256([]byte(r.SuitePath + "\x00" + r.SuiteDescription))
	name := filepath.Join(dir, hex.EncodeToString(sum[:8])+".json")
	b, err := json.MarshalIndent(c, "", "  ")
	if err == nil {
		err = os.WriteFile(name, b, 0o644)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "specreport: %v\n", err)
	}
}

// Count folds a report into counts: only It specs count, not setup nodes; a failure in
// a suite-level node counts as one failed spec so it cannot vanish from the total.
func Count(r ginkgo.Report) Counts {
	c := Counts{SuitePath: r.SuitePath, Description: r.SuiteDescription}
	for _, s := range r.SpecReports {
		if s.LeafNodeType != types.NodeTypeIt {
			if s.State.Is(types.SpecStateFailureStates) {
				c.Failed++
				c.FailedSpecs = append(c.FailedSpecs, s.LeafNodeType.String()+" "+s.FullText())
			}
			continue
		}
		switch {
		case s.State.Is(types.SpecStatePassed):
			c.Passed++
		case s.State.Is(types.SpecStateFailureStates):
			c.Failed++
			c.FailedSpecs = append(c.FailedSpecs, s.FullText())
		default:
			c.Skipped++
		}
	}
	return c
}
