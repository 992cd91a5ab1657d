package scenariotest_test

import (
	"context"
	"fmt"
	"net/http"

	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/reference"
	"github.com/idemproof/idemproof/scenarios"
	"github.com/idemproof/idemproof/scenarios/scenariotest"
)

// A Go team checks its own handler in-process: the reference server stands in for it
// here. The profile describes the API (operation, ledger, declared choices); HandlerTarget
// points it at a loopback test server.
func ExampleHandlerTarget() {
	p, _ := profile.Builtin("reference")
	var handler http.Handler
	srv, _ := reference.New(reference.WithTestHooks(true),
		reference.WithRetention(p.Retention.Std()), reference.WithLockTimeout(p.LockTimeout.Std()))
	defer srv.Close()
	handler = srv

	prof, stop := scenariotest.HandlerTarget(handler, p)
	defer stop()
	err := scenarios.Check(context.Background(), prof, scenarios.Only("replay/*"))
	fmt.Println("replay scenarios clean:", err == nil)
	// Output:
	// replay scenarios clean: true
}
