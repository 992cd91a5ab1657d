package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/report"
	"github.com/idemproof/idemproof/scenarios"
	"github.com/idemproof/idemproof/verdict"
)

// checkReportDir makes sure the reports can be written before anything runs: a run
// whose reports are lost at the end is a run for nothing. "" means no reports.
func checkReportDir(dir string) error {
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--report-dir %s: cannot create it (%v): give a folder idemproof can create and write", dir, err)
	}
	f, err := os.CreateTemp(dir, ".idemproof-write-check-*")
	if err != nil {
		return fmt.Errorf("--report-dir %s: not writable (%v): give a folder idemproof can create and write", dir, err)
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

// preflightAll checks every target before any scenario runs (scenarios.PreflightTarget),
// and proves the test hooks the selected scenarios use (scenarios.ProveHooks): a target
// that is not what its profile says, or a hook that does not act (unless unproven is
// UnprovenHooksNA), is a profile error, exit 2. An interrupt during the preflight is an
// incomplete run, exit 3. Its notes go to stderr, with how the selected scenarios will
// be fitted to each target's declared windows and measured pace (scenarios.PlanNotes);
// the results are the run's RunConfig.Preflights and RunConfig.HookProofs.
func preflightAll(ctx context.Context, profiles []*profile.Profile, selected []scenarios.Scenario, cfg scenarios.RunConfig, unproven scenarios.UnprovenHooks, stderr io.Writer) ([]scenarios.PreflightResult, map[string]*scenarios.HookProof, error) {
	var out []scenarios.PreflightResult
	proofs := map[string]*scenarios.HookProof{}
	for _, p := range profiles {
		res, err := scenarios.PreflightTarget(ctx, p)
		notes := res.Notes
		if err == nil {
			var proof *scenarios.HookProof
			proof, err = scenarios.ProveHooks(ctx, p, selected, unproven)
			proofs[p.Name] = proof
			notes = append(notes, proof.Notes()...)
		}
		for _, n := range notes {
			fmt.Fprintf(stderr, "idemproof check: preflight target %s: note: %s\n", p.Name, n)
		}
		if err == nil {
			for _, n := range scenarios.PlanNotes(p, res.Pace, selected, cfg) {
				fmt.Fprintf(stderr, "idemproof check: preflight target %s: fitted: %s\n", p.Name, n)
			}
			out = append(out, res)
			continue
		}
		if ctx.Err() != nil {
			fmt.Fprintf(stderr, "idemproof check: interrupted during the preflight (%v): no scenario ran\n", context.Cause(ctx))
			return nil, nil, errExitIncomplete
		}
		return nil, nil, err
	}
	return out, proofs, nil
}

// exitStatus is the verdict a CI can gate on: errExitFailure (1) on a FAIL, or a
// NON-STRICT under strict; errExitIncomplete (3) when the run was interrupted or left
// more UNKNOWN results than allowUnknown; nil (0) when every scenario was judged and
// none fails. A FAIL wins over incomplete: it is a definite finding either way.
func exitStatus(stdout io.Writer, rep *verdict.Report, allowUnknown int) error {
	unknown := 0
	for _, r := range rep.Results {
		switch {
		case r.Verdict == verdict.Unknown && !r.KnownFailure:
			unknown++
		case report.FailsRun(rep, r):
			return errExitFailure
		}
	}
	if rep.Incomplete() {
		fmt.Fprintf(stdout, "\nincomplete: %s (exit 3)\n", rep.Interrupted)
		return errExitIncomplete
	}
	if unknown > allowUnknown {
		fmt.Fprintf(stdout, "\nincomplete: %d UNKNOWN result(s), --allow-unknown %d (exit 3)\n", unknown, allowUnknown)
		return errExitIncomplete
	}
	return nil
}
