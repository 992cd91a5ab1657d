package scenariotest_test

import (
	"testing"

	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/reference"
	"github.com/idemproof/idemproof/scenarios/scenariotest"
)

// testRefunds is a team's test (func TestRefunds(t *testing.T) in its _test.go file),
// with the reference server standing in for the team's handler. The handler must keep
// the windows its profile declares: the expiry and recovery scenarios wait out the
// profile's retention and lock_timeout, so a server keeping another window is judged
// against the wrong one.
func testRefunds(t *testing.T) {
	p, err := profile.Builtin("reference")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := reference.New(reference.WithTestHooks(true),
		reference.WithRetention(p.Retention.Std()), reference.WithLockTimeout(p.LockTimeout.Std()))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	prof, stop := scenariotest.HandlerTarget(srv, p)
	defer stop()
	scenariotest.RunT(t, prof) // one subtest per scenario: go test -run 'TestRefunds/replay'
}

// In a test: the whole catalogue, one subtest per scenario, named by its ID.
func ExampleRunT() {
	_ = testRefunds
}
