package referencectr_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/network"

	"github.com/idemproof/idemproof/containers/referencectr"
)

// The reference server on a PostgreSQL container reached by its network alias, with a
// real crash available through the X-Test-Crash header. (Compiled, not run: it needs
// Docker and a PostgreSQL container named "postgres" on nw.)
func ExampleRun() {
	ctx := context.Background()
	nw, err := network.New(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer nw.Remove(ctx)

	ref, err := referencectr.Run(ctx, "idemproof/idemproof:dev",
		network.WithNetwork([]string{"reference"}, nw),
		referencectr.WithStore("postgres://idemproof:idemproof@postgres:5432/idemproof?sslmode=disable"),
		referencectr.WithTestHooks(), referencectr.WithCrashExits(),
		referencectr.WithRetention(time.Hour), referencectr.WithLockTimeout(2*time.Second))
	defer testcontainers.TerminateContainer(ref) // before the error check
	if err != nil {
		log.Fatal(err)
	}
	base, _ := ref.URL(ctx) // read again after every restart: the host port changes
	fmt.Println("POST", base+"/v1/refunds")
}
