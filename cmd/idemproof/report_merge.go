package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/idemproof/idemproof/internal/suggest"
	"github.com/idemproof/idemproof/report"
	"github.com/idemproof/idemproof/scenarios/shard"
	"github.com/idemproof/idemproof/verdict"
)

// runReport is `idemproof report SUBCOMMAND`; merge is its only one, so `report -h` is
// its help: the flags and the exit status.
func runReport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: idemproof report merge [flags] A/report.json B/report.json …")
		fmt.Fprintln(stderr)
		fmt.Fprintln(stderr, "Merges the report.json of several shards or runs into one report set. Run 'idemproof report -h' for its flags.")
		return errUsageReported
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		return runReportMerge(ctx, []string{"-h"}, stdout, stderr)
	}
	if args[0] != "merge" {
		return fmt.Errorf("unknown subcommand %q: want merge%s", args[0], suggest.DidYouMean(args[0], []string{"merge"}))
	}
	return runReportMerge(ctx, args[1:], stdout, stderr)
}

func runReportMerge(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("report merge", "[flags] A/report.json B/report.json …",
		"Merges the report.json of several shards (check --shard I/N) or runs into one report set, and\n"+
			"prints the summary; the --json reports of storm shards (storm --shard I/N) merge into one storm report. Exit status, as check's: 0 every scenario judged, none failing; 1 a failing\n"+
			"result; 2 a usage error or reports that do not belong together (another build, strictness,\n"+
			"a scenario twice); 3 incomplete: a shard was interrupted, or UNKNOWN results beyond\n"+
			"--allow-unknown. A FAIL wins over incomplete (exit 1).", stderr)
	var extras checkExtras
	allowUnknown := fs.Int("allow-unknown", 0, "UNKNOWN results tolerated before the merged run counts as incomplete (exit 3)")
	reportDir := fs.String("report-dir", "", "write report.json, junit.xml, report.html and report.md of the merged run into this folder")
	fs.StringVar(&extras.markdown, "markdown", "", "write the merged Markdown summary to this file, or - for stdout")
	fs.StringVar(&extras.json, "json", "", "write the merged JSON report to this file, or - for stdout")
	fs.StringVar(&extras.junit, "junit", "", "write the merged JUnit XML report to this file")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return errors.New("give the report.json files to merge")
	}
	if isStorm, err := stormReports(fs.Args()); err != nil {
		return err
	} else if isStorm {
		return mergeStormReports(fs.Args(), extras.json, stdout)
	}
	if *allowUnknown < 0 {
		return fmt.Errorf("--allow-unknown %d: must be 0 or more", *allowUnknown)
	}
	console, err := extras.prepare(stdout, stderr)
	if err != nil {
		return err
	}
	reps := make([]*verdict.Report, 0, fs.NArg())
	for _, path := range fs.Args() {
		rep, err := readReport(path)
		if err != nil {
			return err
		}
		reps = append(reps, rep)
	}
	merged, err := shard.Merge(reps...)
	if err != nil {
		return err
	}
	report.WriteSummary(console, merged)
	if *reportDir != "" {
		paths, err := report.WriteDir(*reportDir, merged)
		if err != nil {
			return fmt.Errorf("write reports: %w", err)
		}
		fmt.Fprintf(console, "\nreports: %s\n", strings.Join(paths, " "))
	}
	if err := extras.write(console, merged); err != nil {
		return fmt.Errorf("write reports: %w", err)
	}
	return exitStatus(console, merged, *allowUnknown)
}
