package referencectr

import (
	"strings"
	"time"

	"github.com/testcontainers/testcontainers-go"
)

// Each option appends `serve` flags; a flag given twice takes its last value, which is
// how a caller's option overrides a default.

// WithStore selects the store: a postgres:// DSN as seen from inside the container (use
// the PostgreSQL container's network alias, not the host's published port). The server
// waits for PostgreSQL to accept connections for 50 s (--store-wait), inside Run's 60 s
// readiness wait: a replica started beside its database, or restarted on a loaded
// machine, would otherwise exit at the first refusal.
func WithStore(dsn string) testcontainers.CustomizeRequestOption {
	return testcontainers.WithCmdArgs("--store", dsn, "--store-wait", "50s")
}

// WithRetention sets how long keys are kept (the window a repeat replays in).
func WithRetention(d time.Duration) testcontainers.CustomizeRequestOption {
	return testcontainers.WithCmdArgs("--retention", d.String())
}

// WithLockTimeout sets after how long an abandoned in-flight key may be taken over.
func WithLockTimeout(d time.Duration) testcontainers.CustomizeRequestOption {
	return testcontainers.WithCmdArgs("--lock-timeout", d.String())
}

// WithTestHooks enables the X-Test-Delay / X-Test-Fail / X-Test-Crash request headers.
func WithTestHooks() testcontainers.CustomizeRequestOption {
	return testcontainers.WithCmdArgs("--test-hooks")
}

// WithCrashExits makes X-Test-Crash exit the whole process (a real crash: the container
// stops), instead of only dropping the connection. Implies nothing without WithTestHooks.
func WithCrashExits() testcontainers.CustomizeRequestOption {
	return testcontainers.WithCmdArgs("--crash-exits")
}

// WithFlaw switches on a known-bad variant of the server (see docs/scenario-ids.md).
func WithFlaw(name string) testcontainers.CustomizeRequestOption {
	return testcontainers.WithCmdArgs("--flaw", name)
}

// WithTokens sets the bearer tokens the server accepts, one principal each.
func WithTokens(tokens ...string) testcontainers.CustomizeRequestOption {
	return testcontainers.WithCmdArgs("--tokens", strings.Join(tokens, ","))
}

// WithVendorURL makes the server notify a vendor of every refund (`serve --vendor-url`),
// e.g. vendorctr.InternalURL("vendor") for a vendor container on the same network.
func WithVendorURL(url string) testcontainers.CustomizeRequestOption {
	return testcontainers.WithCmdArgs("--vendor-url", url)
}
