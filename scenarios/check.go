package scenarios

import (
	"context"
	"errors"
	"fmt"

	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/verdict"
)

// CheckOption adjusts Check.
type CheckOption func(*RunConfig)

// Only restricts Check to scenario IDs or globs.
func Only(patterns ...string) CheckOption {
	return func(c *RunConfig) { c.Only = append(c.Only, patterns...) }
}

// WithLabels restricts Check to scenarios carrying every label.
func WithLabels(labels ...string) CheckOption {
	return func(c *RunConfig) { c.Labels = append(c.Labels, labels...) }
}

// Strict makes NON-STRICT findings errors too.
func Strict() CheckOption { return func(c *RunConfig) { c.Strict = true } }

// WithSeed fixes the proxy's seed.
func WithSeed(seed int64) CheckOption { return func(c *RunConfig) { c.Seed = seed } }

// WithConcurrency sets how many scenarios run at once.
func WithConcurrency(n int) CheckOption { return func(c *RunConfig) { c.Concurrency = n } }

// WithProgress sets the per-scenario callback.
func WithProgress(f func(verdict.Result)) CheckOption { return func(c *RunConfig) { c.Progress = f } }

// Check runs the catalogue against p and returns nil when it is clean, or an error
// joining every FAIL and UNKNOWN (and NON-STRICT under Strict), each naming the scenario,
// and saying so when the run was stopped before every scenario ran — like
// testing/fstest.TestFS, so any Go test can embed it. A target that is not what its
// profile says fails the Preflight first (a *PreflightError):
//
//	if err := scenarios.Check(ctx, profile); err != nil { t.Fatal(err) }
func Check(ctx context.Context, p *profile.Profile, opts ...CheckOption) error {
	cfg := RunConfig{Profiles: []*profile.Profile{p}}
	for _, o := range opts {
		o(&cfg)
	}
	rep, err := Run(ctx, cfg)
	if err != nil {
		return err
	}
	return Findings(rep)
}

// Findings joins the results of a report that are not clean: every FAIL and UNKNOWN, one
// error each, naming the scenario and target, and one error for an incomplete run (what
// stopped it, how many scenarios never ran): a run that proved only part of the catalogue
// is never clean. NON-STRICT counts only in a strict run, which has already turned it
// into FAIL.
func Findings(rep *verdict.Report) error {
	var errs []error
	if rep.Incomplete() {
		errs = append(errs, fmt.Errorf("run incomplete (%s): %d scenario(s) not run", rep.Interrupted, len(rep.NotRun)))
	}
	for _, r := range rep.Results {
		switch r.Verdict {
		case verdict.Fail, verdict.Unknown:
			errs = append(errs, fmt.Errorf("%s [%s] %s: %s", r.ScenarioID, r.Target, r.Verdict, r.Message))
		}
	}
	return errors.Join(errs...)
}
