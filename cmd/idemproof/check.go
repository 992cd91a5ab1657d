package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/idemproof/idemproof/report"
	"github.com/idemproof/idemproof/report/rounds"
	"github.com/idemproof/idemproof/scenarios"
	"github.com/idemproof/idemproof/verdict"
)

// checkOptions are the parsed flags of `idemproof check`.
type checkOptions struct {
	profiles    repeatFlag
	only        listFlag
	labels      listFlag
	flaws       listFlag
	strict      bool
	reportDir   string
	seed        int64
	store       string
	concurrency int
	timeout     time.Duration
	// allowUnknown is how many UNKNOWN results still let the run exit 0.
	allowUnknown int
	// repeat is how many times the catalogue runs (seeds seed, seed+1, …), combined by
	// report/rounds.
	repeat int
	// unprovenHooks is --unproven-hooks: what a declared test hook that does not act in
	// the preflight does (stop the run, or make its scenarios N/A).
	unprovenHooks string
	extras        checkExtras // check_extras.go: report files, baseline, skip, shard
}

// maxRepeat bounds --repeat: every run of the catalogue takes seconds to minutes.
const maxRepeat = 1000

func checkFlags(stderr io.Writer) (*flag.FlagSet, *checkOptions) {
	o := &checkOptions{}
	fs := flag.NewFlagSet("idemproof check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Var(&o.profiles, "profile", "target profile: a YAML file or a built-in name; repeatable (several targets give one comparison matrix); \""+embeddedName+"\" or none = the embedded reference server")
	fs.BoolVar(&o.strict, "strict", false, "NON-STRICT (a SHOULD missed) becomes FAIL; UNKNOWN results are detailed as failures are, and still exit 3 (see --allow-unknown)")
	fs.Var(&o.only, "only", "scenario IDs or globs (replay/*), comma list or repeated")
	fs.Var(&o.labels, "label", "run only scenarios carrying these labels (all of them), comma list or repeated")
	fs.StringVar(&o.reportDir, "report-dir", "", "write report.json, junit.xml, report.html and report.md into this folder (created if missing)")
	fs.Int64Var(&o.seed, "seed", 0, "seed of the proxy's probabilistic fault choices (default: time-based, printed); keys and entities are fresh on every run")
	fs.Var(&o.flaws, "flaw", "run the embedded reference with this known flaw (idemproof scenarios --flaws lists them); repeatable")
	fs.StringVar(&o.store, "store", "", "store of the embedded reference: memory (default) or a postgres:// DSN")
	fs.IntVar(&o.concurrency, "concurrency", 0, "scenarios run at once (default: the runner's)")
	fs.DurationVar(&o.timeout, "timeout", 0, "time limit per scenario, e.g. 30s (default: the runner's)")
	fs.IntVar(&o.allowUnknown, "allow-unknown", 0, "UNKNOWN results tolerated before the run counts as incomplete (exit 3)")
	fs.IntVar(&o.repeat, "repeat", 1, "run the selected scenarios this many times (seeds --seed, --seed+1, …) and report each one's most telling verdict with how often each came: a race lost once in N runs FAILs")
	fs.StringVar(&o.unprovenHooks, "unproven-hooks", "stop", "a declared test hook (slow_operation, fail_operation, crash) that does not act in the preflight: stop (the run stops, exit 2, naming the hook) or na (the scenarios that use it are N/A, naming it)")
	o.extras.register(fs)
	fs.Usage = func() {
		w := fs.Output() // stdout when asked for with -h (parseFlags), else stderr
		fmt.Fprintln(w, "usage: idemproof check [flags]")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "Runs the scenario catalogue against each target and reports a verdict per scenario.")
		fmt.Fprintln(w, "Each target is first checked with one request (preflight): a target that does not answer,")
		fmt.Fprintln(w, "answers other than success, or whose ledger does not count it stops the run (exit 2).")
		fmt.Fprintln(w, "The test hooks the selected scenarios use are then exercised once each: one that does not")
		fmt.Fprintln(w, "act (a slow hook that holds nothing, a crash that is answered) stops the run (exit 2), or,")
		fmt.Fprintln(w, "with --unproven-hooks na, leaves its scenarios N/A.")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "Exit status:")
		fmt.Fprintln(w, "  0  every scenario judged, none failing")
		fmt.Fprintln(w, "  1  a FAIL (under --strict also NON-STRICT)")
		fmt.Fprintln(w, "  2  a usage, profile or preflight error: nothing was run")
		fmt.Fprintln(w, "  3  incomplete: interrupted (SIGINT/SIGTERM; the reports say so), or UNKNOWN results")
		fmt.Fprintln(w, "     beyond --allow-unknown. A FAIL wins over incomplete (exit 1).")
		fmt.Fprintln(w)
		fs.PrintDefaults()
	}
	return fs, o
}

// runCheck is `idemproof check`.
func runCheck(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, o := checkFlags(stderr)
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q: targets are given with --profile", fs.Arg(0))
	}
	stdout, err := o.extras.prepare(stdout, stderr)
	if err != nil {
		return err
	}
	if o.concurrency < 0 {
		return fmt.Errorf("--concurrency %d: must be 1 or more (0 = default)", o.concurrency)
	}
	if o.timeout < 0 {
		return fmt.Errorf("--timeout %v: must be positive", o.timeout)
	}
	if o.allowUnknown < 0 {
		return fmt.Errorf("--allow-unknown %d: must be 0 or more", o.allowUnknown)
	}
	if o.repeat < 1 || o.repeat > maxRepeat {
		return fmt.Errorf("--repeat %d: must be 1 to %d", o.repeat, maxRepeat)
	}
	unproven, err := scenarios.ParseUnprovenHooks(o.unprovenHooks)
	if err != nil {
		return fmt.Errorf("--unproven-hooks %w", err)
	}
	if err := checkReportDir(o.reportDir); err != nil {
		return err
	}
	selected, err := scenarios.Select(o.only, o.labels)
	if err != nil {
		return fmt.Errorf("--only/--label: %w", err)
	}
	selected, narrowedOnly, err := o.extras.narrow(selected)
	if err != nil {
		return err
	}
	only := o.only
	if narrowedOnly != nil {
		only = narrowedOnly
	}
	seedSet := false
	fs.Visit(func(f *flag.Flag) { seedSet = seedSet || f.Name == "seed" })
	if !seedSet {
		o.seed = time.Now().UnixNano()
	}

	targets, err := resolveTargets(ctx, o.profiles, o.flaws, o.store)
	if err != nil {
		return err
	}
	defer targets.Close()

	names := make([]string, len(targets.profiles))
	for i, p := range targets.profiles {
		names[i] = p.Name
	}
	if err := o.extras.checkBaseline(names, selected); err != nil {
		return err
	}
	preflights, proofs, err := preflightAll(ctx, targets.profiles, selected, scenarios.RunConfig{ScenarioTimeout: o.timeout}, unproven, stderr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "idemproof check: %d scenarios × %d target(s) [%s], seed %d, strict=%t\n",
		len(selected), len(names), strings.Join(names, ", "), o.seed, o.strict)
	if o.repeat > 1 {
		fmt.Fprintf(stdout, "repeat with: --seed %d --repeat %d\n\n", o.seed, o.repeat)
	} else {
		fmt.Fprintf(stdout, "repeat with: --seed %d\n\n", o.seed)
	}

	var rep *verdict.Report
	var combined rounds.Rounds // only each scenario's winning result is kept between runs
	for i := range o.repeat {
		seed := o.seed + int64(i)
		if o.repeat > 1 {
			fmt.Fprintf(stdout, "run %d of %d, seed %d\n", i+1, o.repeat, seed)
		}
		run, err := scenarios.Run(ctx, scenarios.RunConfig{
			Profiles:        targets.profiles,
			Only:            only,
			Labels:          o.labels,
			Seed:            seed,
			Strict:          o.strict,
			Concurrency:     o.concurrency,
			ScenarioTimeout: o.timeout,
			Progress:        liveProgress(stdout, len(selected)*len(names)),
			Notice:          func(msg string) { fmt.Fprintln(stdout, msg) },
			Tool:            "idemproof " + version(),
			NoPreflight:     true, // done above, before the header
			Preflights:      preflights,
			UnprovenHooks:   unproven,
			HookProofs:      proofs,
		})
		if err != nil {
			return fmt.Errorf("run: %w", err)
		}
		rep = run
		if o.repeat > 1 {
			if err := combined.Add(run); err != nil {
				return err
			}
		}
		if !run.Complete {
			break // interrupted: the runs not started are not run at all
		}
	}
	if o.repeat > 1 {
		rep = combined.Report()
	}
	o.extras.finish(rep)
	fmt.Fprintln(stdout)
	report.WriteSummary(stdout, rep)
	if o.reportDir != "" {
		paths, err := report.WriteDir(o.reportDir, rep)
		if err != nil {
			return fmt.Errorf("write reports: %w", err)
		}
		fmt.Fprintf(stdout, "\nreports: %s\n", strings.Join(paths, " "))
	}
	if err := o.extras.write(stdout, rep); err != nil {
		return fmt.Errorf("write reports: %w", err)
	}
	return exitStatus(stdout, rep, o.allowUnknown)
}
