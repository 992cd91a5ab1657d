package scenariotest_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/idemproof/idemproof/scenarios/scenariotest"
	"github.com/idemproof/idemproof/verdict"
)

// fatalRecorder is a testing.TB that keeps what Fatalf said instead of ending the test.
type fatalRecorder struct {
	testing.TB
	said string
}

func (r *fatalRecorder) Helper() {}

func (r *fatalRecorder) Fatalf(format string, args ...any) { r.said = fmt.Sprintf(format, args...) }

// RequireVerdicts passes when the pins hold, and when one breaks it names that scenario
// and no other.
func TestRequireVerdictsPinsAndNamesTheDifference(t *testing.T) {
	srv, base := referenceHandler(t, "no-fingerprint")
	profile, stop := scenariotest.HandlerTarget(srv, base)
	defer stop()
	scenariotest.RequireVerdicts(t, profile, map[string]verdict.Verdict{
		"fingerprint/mismatch": verdict.Fail,
		"replay/sequential":    verdict.Pass,
	})

	r := &fatalRecorder{TB: t}
	scenariotest.RequireVerdicts(r, profile, map[string]verdict.Verdict{
		"fingerprint/mismatch": verdict.Pass,
		"replay/sequential":    verdict.Pass,
	})
	if !strings.Contains(r.said, "fingerprint/mismatch: want PASS, got FAIL") || strings.Contains(r.said, "replay/sequential:") {
		t.Fatalf("the failure must name exactly the broken pin, said: %q", r.said)
	}
}
