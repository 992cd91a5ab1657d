package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/idemproof/idemproof/report"
	"github.com/idemproof/idemproof/report/baseline"
	"github.com/idemproof/idemproof/verdict"
)

// runDiff is `idemproof diff OLD.json NEW.json`: the verdict changes per target and
// scenario, exit 1 when something got worse.
func runDiff(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("diff", "OLD/report.json NEW/report.json",
		"Prints every verdict that changed between two runs, per target and scenario, the worse first.\n"+
			"Targets pair by name; two reports of one target each, named differently, pair by position\n"+
			"(and the diff says so).\n"+
			"Exit status: 0 nothing got worse, 1 a verdict got worse (or a new scenario is NON-STRICT,\n"+
			"UNKNOWN or FAIL), 2 a usage error, or reports with no target or scenario in common.", stderr)
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		fs.Usage()
		return errUsageReported
	}
	a, err := readReport(fs.Arg(0))
	if err != nil {
		return err
	}
	b, err := readReport(fs.Arg(1))
	if err != nil {
		return err
	}
	changes, pairing, err := baseline.Diff(a, b)
	if err != nil {
		return fmt.Errorf("%s and %s: %w", fs.Arg(0), fs.Arg(1), err)
	}
	if note := pairing.Note(); note != "" {
		fmt.Fprintln(stdout, note)
	}
	worse, better := 0, 0
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	if len(changes) > 0 {
		fmt.Fprintln(tw, "change\ttarget\tscenario\tbefore\tafter\t")
	}
	for _, c := range changes {
		word := "better"
		switch {
		case c.Worse():
			word = "WORSE"
			worse++
		case c.After == "":
			word = "gone"
		case c.Before == "":
			word = "new"
		default:
			better++
		}
		target := c.Target
		if c.BeforeTarget != "" {
			target = c.BeforeTarget + " → " + c.Target
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t\n", word, target, c.Scenario, orDash(string(c.Before)), orDash(string(c.After)))
	}
	tw.Flush()
	fmt.Fprintf(stdout, "%d changed (%d worse, %d better) between %s and %s\n", len(changes), worse, better, fs.Arg(0), fs.Arg(1))
	// A scenario that is "gone" from a stopped run was never judged: say so, so an
	// interrupted run does not read as a clean diff.
	for i, rep := range []*verdict.Report{a, b} {
		if banner := report.IncompleteBanner(rep); banner != "" {
			fmt.Fprintf(stdout, "%s: %s\n", fs.Arg(i), banner)
		}
	}
	if worse > 0 {
		return errExitFailure
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
